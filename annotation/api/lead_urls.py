"""API routes of the lead workflow."""

urlpatterns: list = []
