"""API routes of the replication package's import."""

from django.urls import path

from annotation.package import api

urlpatterns = [
    path(
        "projects/<slug:slug>/package-imports/",
        api.PackageImportsApi.as_view(),
        name="api-package-imports",
    ),
    path(
        "projects/<slug:slug>/package-imports/<int:pk>/",
        api.PackageImportApi.as_view(),
        name="api-package-import",
    ),
]
