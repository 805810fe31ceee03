"""API routes of the project feature: item imports (a JSON/JSONL file of issues), and a URL
list's or a source's issues as items."""

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
    path(
        "projects/<slug:slug>/items/from-url-list/",
        api.ProjectItemsFromUrlListApi.as_view(),
        name="api-items-from-url-list",
    ),
    path(
        "projects/<slug:slug>/items/from-source/",
        api.ProjectItemsFromSourceApi.as_view(),
        name="api-items-from-source",
    ),
]
