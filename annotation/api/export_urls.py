from django.urls import path

from annotation.api.exports import ProjectExportApi, ProjectExportJobApi, ProjectExportJobsApi

urlpatterns = [
    path(
        "projects/<slug:slug>/exports/<str:export_format>/",
        ProjectExportApi.as_view(),
        name="api-project-export",
    ),
    path(
        "projects/<slug:slug>/export-jobs/",
        ProjectExportJobsApi.as_view(),
        name="api-project-export-jobs",
    ),
    path(
        "projects/<slug:slug>/export-jobs/<int:pk>/",
        ProjectExportJobApi.as_view(),
        name="api-project-export-job",
    ),
]
