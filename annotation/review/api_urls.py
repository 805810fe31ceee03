"""API routes of the lead workflow."""

from django.urls import path

from annotation.review import api as views

P = "projects/<slug:slug>/"
ITEM = P + "items/<int:item_id>/"
PROPOSAL = P + "proposals/<int:pk>/"

urlpatterns = [
    path(P + "disputed/", views.DisputedListApi.as_view(), name="api-disputed"),
    path(ITEM + "review/", views.ItemReviewApi.as_view(), name="api-item-review"),
    path(ITEM + "resolve/", views.ItemResolveApi.as_view(), name="api-item-resolve"),
    path(ITEM + "reopen/", views.ItemReopenApi.as_view(), name="api-item-reopen"),
    path(ITEM + "posts/", views.ItemPostsApi.as_view(), name="api-item-posts"),
    path(P + "pilot/", views.PilotApi.as_view(), name="api-pilot"),
    path(P + "proposals/", views.ProposalListApi.as_view(), name="api-proposals"),
    path(PROPOSAL + "vote/", views.ProposalVoteApi.as_view(), name="api-proposal-vote"),
    path(PROPOSAL + "add-node/", views.ProposalAddNodeApi.as_view(), name="api-proposal-add-node"),
    path(
        PROPOSAL + "send-back/",
        views.ProposalSendBackApi.as_view(),
        name="api-proposal-send-back",
    ),
    path(P + "stats/", views.StatsApi.as_view(), name="api-stats"),
]
