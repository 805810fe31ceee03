"""URLs of the Reports section (annotation/report_views.py): leads and admins."""

from django.urls import path

from annotation import report_views as views

P = "projects/<slug:slug>/reports/"

urlpatterns = [
    path(P, views.reports_agreement, name="project-reports"),
    path(P + "confusion/", views.reports_confusion, name="project-reports-confusion"),
    path(P + "distribution/", views.reports_distribution, name="project-reports-distribution"),
    path(P + "volunteers/", views.reports_volunteers, name="project-reports-volunteers"),
    path(P + "items/", views.report_items, name="project-reports-items"),
    path(P + "charts/<slug:name>.svg", views.report_chart, name="project-report-chart"),
]
