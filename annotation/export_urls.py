from django.urls import path

from annotation import export_views

urlpatterns = [
    path(
        "projects/<slug:slug>/exports/", export_views.project_exports_page, name="project-exports"
    ),
    path(
        "projects/<slug:slug>/exports/<int:pk>/",
        export_views.export_job_page,
        name="project-export-job",
    ),
    path(
        "projects/<slug:slug>/exports/<int:pk>/download/",
        export_views.export_job_download,
        name="project-export-download",
    ),
]
