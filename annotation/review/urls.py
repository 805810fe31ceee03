"""URLs of the lead pages, and of the discussion and proposal pages every member shares."""

from django.urls import path

from annotation.review import views

P = "projects/<slug:slug>/"
ITEM = P + "items/<int:item_id>/"

urlpatterns = [
    path(P + "disputed/", views.disputed_queue, name="disputed-queue"),
    path(ITEM + "resolve/", views.item_resolve_page, name="item-resolve"),
    path(ITEM + "reopen/", views.item_reopen_page, name="item-reopen"),
    path(ITEM + "discussion/", views.item_discussion_page, name="item-discussion"),
    path(P + "pilot/", views.pilot_page, name="project-pilot"),
    path(P + "proposals/", views.proposal_list, name="proposal-list"),
    path(P + "proposals/new/", views.proposal_new, name="proposal-new"),
    path(P + "proposals/<int:pk>/vote/", views.proposal_vote_page, name="proposal-vote"),
    path(
        P + "proposals/<int:pk>/add-node/", views.proposal_add_node_page, name="proposal-add-node"
    ),
    path(
        P + "proposals/<int:pk>/send-back/",
        views.proposal_send_back_page,
        name="proposal-send-back",
    ),
    path(P + "stats/", views.stats_page, name="project-stats"),
]
