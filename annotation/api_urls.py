"""The annotation API: each feature package's API routes, under /api/; labeling's first, as the
routes every label takes."""

from django.urls import include, path

urlpatterns = [
    path("", include("annotation.labeling.api_urls")),
    path("", include("annotation.screening.api_urls")),
    path("", include("annotation.review.api_urls")),
    path("", include("annotation.reporting.api_urls")),
    path("", include("annotation.projects.api_urls")),
    path("", include("annotation.interviews.api_urls")),
    path("", include("annotation.package.api_urls")),
    path("", include("annotation.duplicates.api_urls")),
]
