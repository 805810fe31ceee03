"""API routes of the Reports section (leads and admins)."""

from django.urls import path

from annotation.api import reports as views

P = "projects/<slug:slug>/reports/"

urlpatterns = [
    path(P + "agreement/", views.ReportAgreementApi.as_view(), name="api-report-agreement"),
    path(P + "confusion/", views.ReportConfusionApi.as_view(), name="api-report-confusion"),
    path(
        P + "distribution/",
        views.ReportDistributionApi.as_view(),
        name="api-report-distribution",
    ),
]
