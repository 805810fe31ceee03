"""URLs of the lead's near-duplicate pages."""

from django.urls import path

from annotation.duplicates import views

P = "projects/<slug:slug>/duplicates/"

urlpatterns = [
    path(P, views.duplicates_page, name="duplicates"),
    path(P + "rebuild/", views.duplicate_rebuild_page, name="duplicate-rebuild"),
    path(P + "<int:a>/<int:b>/", views.duplicate_compare_page, name="duplicate-compare"),
    path(P + "<int:a>/<int:b>/not-duplicate/", views.not_duplicate_page, name="not-duplicate"),
]
