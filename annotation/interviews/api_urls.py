"""API routes of the interviews feature."""

from django.urls import path

from annotation.interviews import api, coding_api

urlpatterns = [
    path(
        "projects/<slug:slug>/interviews/imports/",
        api.InterviewImportsApi.as_view(),
        name="api-interview-imports",
    ),
    path(
        "projects/<slug:slug>/interviews/imports/<int:pk>/",
        api.InterviewImportApi.as_view(),
        name="api-interview-import",
    ),
    path(
        "projects/<slug:slug>/interviews/quotes/",
        api.InterviewQuotesApi.as_view(),
        name="api-interview-quotes",
    ),
    path(
        "projects/<slug:slug>/interviews/code-map/",
        api.InterviewCodeMapApi.as_view(),
        name="api-interview-code-map",
    ),
    path(
        "projects/<slug:slug>/interviews/triangulation/",
        api.TriangulationApi.as_view(),
        name="api-triangulation",
    ),
    path(
        "projects/<slug:slug>/interviews/participants/<int:pk>/ranking/",
        api.ParticipantRankingApi.as_view(),
        name="api-participant-ranking",
    ),
    path(
        "projects/<slug:slug>/interviews/rankings/",
        api.RankingsImportApi.as_view(),
        name="api-rankings-import",
    ),
    path(
        "projects/<slug:slug>/interviews/transcripts/<int:pk>/",
        coding_api.TranscriptApi.as_view(),
        name="api-interview-transcript",
    ),
    path(
        "projects/<slug:slug>/interviews/transcripts/<int:pk>/passages/",
        coding_api.TranscriptPassagesApi.as_view(),
        name="api-transcript-passages",
    ),
]
