"""URLs of the screening pages (volunteers; the screening-dispute list is for leads)."""

from django.urls import path

from annotation.screening import views

urlpatterns = [
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
