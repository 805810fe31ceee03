"""URLs of the interview pages, under a project."""

from django.urls import path

from annotation.interviews import coding_views, views

urlpatterns = [
    path("projects/<slug:slug>/interviews/", views.interviews_page, name="interviews"),
    path(
        "projects/<slug:slug>/interviews/import/",
        views.interview_imports_page,
        name="interview-imports",
    ),
    path(
        "projects/<slug:slug>/interviews/import/<int:pk>/",
        views.interview_import_page,
        name="interview-import",
    ),
    path(
        "projects/<slug:slug>/interviews/map/",
        views.interview_code_map,
        name="interview-code-map",
    ),
    path(
        "projects/<slug:slug>/interviews/quotes/",
        views.interview_quotes_page,
        name="interview-quotes",
    ),
    path(
        "projects/<slug:slug>/interviews/triangulation/",
        views.triangulation_page,
        name="triangulation",
    ),
    path(
        "projects/<slug:slug>/interviews/triangulation.csv",
        views.triangulation_csv_download,
        name="triangulation-csv",
    ),
    path(
        "projects/<slug:slug>/interviews/participants/<int:pk>/",
        views.participant_page,
        name="interview-participant",
    ),
    path(
        "projects/<slug:slug>/interviews/rankings/",
        views.rankings_import_page,
        name="interview-rankings-import",
    ),
    path("rank/<str:token>/", views.ranking_link_page, name="ranking-link"),
    path(
        "projects/<slug:slug>/interviews/codebook.qdc",
        views.codebook_qdc_download,
        name="interview-codebook-qdc",
    ),
    # coding transcripts in the browser
    path(
        "projects/<slug:slug>/interviews/transcripts/",
        coding_views.transcripts_page,
        name="interview-transcripts",
    ),
    path(
        "projects/<slug:slug>/interviews/transcripts/<int:pk>/",
        coding_views.transcript_page,
        name="interview-transcript",
    ),
    path(
        "projects/<slug:slug>/interviews/transcripts/<int:pk>/join/",
        coding_views.transcript_join,
        name="transcript-join",
    ),
    path(
        "projects/<slug:slug>/interviews/transcripts/<int:pk>/coders/",
        coding_views.transcript_assign,
        name="transcript-assign",
    ),
    path(
        "projects/<slug:slug>/interviews/transcripts/<int:pk>/code/",
        coding_views.transcript_code,
        name="transcript-code",
    ),
    path(
        "projects/<slug:slug>/interviews/transcripts/<int:pk>/uncode/",
        coding_views.transcript_uncode,
        name="transcript-uncode",
    ),
    path(
        "projects/<slug:slug>/interviews/transcripts/<int:pk>/done/",
        coding_views.transcript_finish,
        name="transcript-done",
    ),
    path(
        "projects/<slug:slug>/interviews/coded-passages.csv",
        coding_views.coded_passages_download,
        name="coded-passages-csv",
    ),
    path(
        "projects/<slug:slug>/interviews/transcripts.qdpx",
        coding_views.transcripts_qdpx_download,
        name="transcripts-qdpx",
    ),
]
