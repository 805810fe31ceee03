"""API routes of the project feature: item imports (a JSON/JSONL file of issues)."""

from django.urls import path

from annotation.projects import api

urlpatterns = [
    path(
        "projects/<slug:slug>/item-imports/",
        api.ProjectItemImportsApi.as_view(),
        name="api-item-imports",
    ),
    path(
        "projects/<slug:slug>/item-imports/<int:pk>/",
        api.ProjectItemImportApi.as_view(),
        name="api-item-import",
    ),
]
