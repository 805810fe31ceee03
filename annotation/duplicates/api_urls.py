"""API routes of the near-duplicate index."""

from django.urls import path

from annotation.duplicates import api

P = "projects/<slug:slug>/"

urlpatterns = [
    path(P + "duplicates/", api.DuplicatePairsApi.as_view(), name="api-duplicates"),
    path(P + "duplicates/index/", api.DuplicateIndexApi.as_view(), name="api-duplicate-index"),
    path(
        P + "duplicates/<int:a>/<int:b>/not-duplicate/",
        api.NotDuplicateApi.as_view(),
        name="api-not-duplicate",
    ),
    path(
        P + "items/<int:item_id>/duplicates/",
        api.ItemDuplicatesApi.as_view(),
        name="api-item-duplicates",
    ),
]
