"""API routes of the labeling workflow."""

from django.urls import path

from annotation.api import labeling as api

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
    path(
        "projects/<slug:slug>/screening/next/",
        api.ScreeningNextApi.as_view(),
        name="api-screening-next",
    ),
    path(
        "projects/<slug:slug>/items/<int:item_id>/screening-vote/",
        api.ScreeningVoteApi.as_view(),
        name="api-screening-vote",
    ),
    path(
        "projects/<slug:slug>/items/<int:item_id>/screening-decision/",
        api.ScreeningDecisionApi.as_view(),
        name="api-screening-decision",
    ),
]
