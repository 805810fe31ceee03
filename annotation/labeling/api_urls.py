"""API routes of the labeling workflow."""

from django.urls import path

from annotation.labeling import api

urlpatterns = [
    path("projects/<slug:slug>/next-item/", api.NextItemApi.as_view(), name="api-next-item"),
    path(
        "projects/<slug:slug>/items/<int:item_id>/annotation/",
        api.AnnotationPutApi.as_view(),
        name="api-annotation",
    ),
    path("projects/<slug:slug>/items/<int:item_id>/skip/", api.SkipApi.as_view(), name="api-skip"),
    path(
        "projects/<slug:slug>/my-annotations/",
        api.MyAnnotationsApi.as_view(),
        name="api-my-annotations",
    ),
]
