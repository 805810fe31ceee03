"""API routes of the labeling workflow."""

urlpatterns: list = []
