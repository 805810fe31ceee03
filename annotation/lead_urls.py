"""URLs of the lead pages (filled in with the lead views)."""

urlpatterns: list = []
