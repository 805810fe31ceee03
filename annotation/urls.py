"""The annotation pages: each feature package's URLs, under the site root."""

from django.urls import include, path

urlpatterns = [
    path("", include("annotation.projects.urls")),
    path("", include("annotation.labeling.urls")),
    path("", include("annotation.screening.urls")),
    path("", include("annotation.review.urls")),
    path("", include("annotation.reporting.urls")),
    path("", include("annotation.interviews.urls")),
    path("", include("annotation.package.urls")),
    path("", include("annotation.duplicates.urls")),
]
