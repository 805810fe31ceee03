"""API routes of the Reports section, the project agreement report and the exports (leads and
admins; exports: admins)."""

from django.urls import path

from annotation.reporting import api as views
from annotation.reporting.export_api import (
    ProjectExportApi,
    ProjectExportFileApi,
    ProjectExportJobApi,
    ProjectExportJobsApi,
)

P = "projects/<slug:slug>/reports/"

urlpatterns = [
    path(P + "agreement/", views.ReportAgreementApi.as_view(), name="api-report-agreement"),
    path(P + "confusion/", views.ReportConfusionApi.as_view(), name="api-report-confusion"),
    path(
        P + "distribution/",
        views.ReportDistributionApi.as_view(),
        name="api-report-distribution",
    ),
    path(
        "projects/<slug:slug>/agreement/",
        views.ProjectAgreementApi.as_view(),
        name="api-project-agreement",
    ),
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
    path(
        "projects/<slug:slug>/export-jobs/<int:pk>/file/",
        ProjectExportFileApi.as_view(),
        name="api-project-export-file",
    ),
]
