"""URLs of the replication package's import pages (the export is on the exports page)."""

from django.urls import path

from annotation.package import views

urlpatterns = [
    path(
        "projects/<slug:slug>/package/",
        views.project_package_imports_page,
        name="project-package-imports",
    ),
    path(
        "projects/<slug:slug>/package/<int:pk>/",
        views.project_package_import_page,
        name="project-package-import",
    ),
]
