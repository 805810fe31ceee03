"""URLs of the labeling pages (volunteers)."""

from django.urls import path

from annotation.labeling import views

urlpatterns = [
    path("projects/<slug:slug>/label/", views.label_next, name="label-next"),
    path(
        "projects/<slug:slug>/label/categories.json",
        views.label_categories,
        name="label-categories",
    ),
    path("projects/<slug:slug>/items/<int:item_id>/label/", views.label_item, name="label-item"),
    path("projects/<slug:slug>/items/<int:item_id>/skip/", views.label_skip, name="label-skip"),
    path(
        "projects/<slug:slug>/items/<int:item_id>/unskip/",
        views.label_unskip,
        name="label-unskip",
    ),
    path("projects/<slug:slug>/my-labels/", views.my_labels, name="my-labels"),
]
