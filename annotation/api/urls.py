from django.urls import path

from annotation.api.views import ProjectAgreementApi

urlpatterns = [
    path(
        "projects/<slug:slug>/agreement/",
        ProjectAgreementApi.as_view(),
        name="api-project-agreement",
    ),
]
