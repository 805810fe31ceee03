"""URLs of the labeling pages (filled in with the labeling views)."""

urlpatterns: list = []
