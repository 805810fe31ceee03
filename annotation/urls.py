from django.urls import include, path

from annotation import views

urlpatterns = [
    path("", views.home, name="home"),
    path("", include("annotation.labeling_urls")),
    path("", include("annotation.lead_urls")),
    path("", include("annotation.export_urls")),
    path("", include("annotation.report_urls")),
    path("projects/<slug:slug>/", views.project_detail, name="project-detail"),
    path(
        "projects/<slug:slug>/items/from-source/",
        views.project_items_from_source_page,
        name="project-items-from-source",
    ),
    path("projects/<slug:slug>/agreement/", views.project_agreement_page, name="project-agreement"),
    path(
        "projects/<slug:slug>/agreement/chart.svg",
        views.project_agreement_chart,
        name="project-agreement-chart",
    ),
]
