"""URLs of the labeling pages (volunteers; the screening-dispute list is for leads)."""

from django.urls import path

from annotation import labeling_views as views

urlpatterns = [
    path("projects/<slug:slug>/label/", views.label_next, name="label-next"),
    path("projects/<slug:slug>/items/<int:item_id>/label/", views.label_item, name="label-item"),
    path("projects/<slug:slug>/items/<int:item_id>/skip/", views.label_skip, name="label-skip"),
    path("projects/<slug:slug>/my-labels/", views.my_labels, name="my-labels"),
    path("projects/<slug:slug>/screen/", views.screen_next, name="screen-next"),
    path("projects/<slug:slug>/items/<int:item_id>/screen/", views.screen_vote, name="screen-vote"),
    path(
        "projects/<slug:slug>/screening-disputes/",
        views.screening_disputes_page,
        name="screening-disputes",
    ),
    path(
        "projects/<slug:slug>/items/<int:item_id>/screening-decision/",
        views.screening_decide_view,
        name="screening-decide",
    ),
]
