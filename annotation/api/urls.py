from django.urls import include, path

from annotation.api.views import ProjectAgreementApi

urlpatterns = [
    path("", include("annotation.api.labeling_urls")),
    path("", include("annotation.api.lead_urls")),
    path("", include("annotation.api.export_urls")),
    path("", include("annotation.api.report_urls")),
    path(
        "projects/<slug:slug>/agreement/",
        ProjectAgreementApi.as_view(),
        name="api-project-agreement",
    ),
]
