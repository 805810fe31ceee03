"""API routes of screening: the next candidate, a vote, the lead's decision on a dispute."""

from django.urls import path

from annotation.screening import api

urlpatterns = [
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
