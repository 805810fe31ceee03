"""URLs of the Reports section, the project's agreement page and its exports: leads and admins
(exports: admins)."""

from django.urls import path

from annotation.reporting import export_views, views

P = "projects/<slug:slug>/reports/"

urlpatterns = [
    path(P, views.reports_agreement, name="project-reports"),
    path(P + "confusion/", views.reports_confusion, name="project-reports-confusion"),
    path(P + "distribution/", views.reports_distribution, name="project-reports-distribution"),
    path(P + "volunteers/", views.reports_volunteers, name="project-reports-volunteers"),
    path(P + "items/", views.report_items, name="project-reports-items"),
    path(P + "charts/<slug:name>.svg", views.report_chart, name="project-report-chart"),
    path("projects/<slug:slug>/agreement/", views.project_agreement_page, name="project-agreement"),
    path(
        "projects/<slug:slug>/agreement/chart.svg",
        views.project_agreement_chart,
        name="project-agreement-chart",
    ),
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
