"""URLs of the interview pages, under a project."""

from django.urls import path

from annotation.interviews import views

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
]
