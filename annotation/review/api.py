"""The lead API: disputes, resolving and re-opening, discussion, pilot, proposals, statistics.
Each endpoint checks access like its page (access_project: 404 for non-members, 403 for too small
a role) and calls the same service."""

from __future__ import annotations

from django.shortcuts import get_object_or_404
from django.utils.translation import gettext as _
from drf_spectacular.utils import extend_schema
from rest_framework import generics, status
from rest_framework.exceptions import PermissionDenied
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from annotation.access import access_project, has_role, project_item, user_role
from annotation.api_input import validated
from annotation.models import Proposal, Role
from annotation.reporting.stats import pairwise_kappa, volunteer_stats
from annotation.review.discussion import labels_revealed, post_add
from annotation.review.pilot import pilot_close, pilot_start
from annotation.review.proposals import (
    proposal_add_node,
    proposal_create,
    proposal_send_back,
    proposal_vote,
    proposals_overview,
)
from annotation.review.selectors import QueueFilters, disputed_items, item_review, queue_rows
from annotation.review.serializers import (
    ItemStateOut,
    PilotIn,
    PilotOut,
    PostIn,
    PostOut,
    ProposalIn,
    ProposalOut,
    QueueItemOut,
    QueueQuery,
    ReopenIn,
    ResolutionOut,
    ResolveIn,
    ReviewOut,
    SendBackOut,
    StatsOut,
    VoteIn,
)
from annotation.review.services import item_reopen, item_resolve
from concord.errors import ConcordError, ErrorOut
from taxonomy.models import Node


def node_by_code(project, code: str) -> Node:
    node = project.taxonomy.nodes.filter(code=code.strip()).first()
    if node is None:
        raise ConcordError(
            _("No category %(code)s in %(taxonomy)s.")
            % {"code": repr(code), "taxonomy": project.taxonomy}
        )
    return node


@extend_schema(parameters=[QueueQuery])
class DisputedListApi(generics.ListAPIView):
    """Disputed items, lowest agreement first, with their vote distributions. Leads only."""

    serializer_class = QueueItemOut

    def get_queryset(self):
        project = access_project(self.request.user, self.kwargs["slug"], at_least=Role.LEAD)
        filters = QueueFilters(**validated(QueueQuery, self.request.query_params))
        return disputed_items(project, filters)

    def list(self, request: Request, *args, **kwargs) -> Response:
        items = self.get_queryset()
        page = self.paginate_queryset(items)
        if page is None:  # no paginator (the settings set one): the whole queue
            return Response(self.get_serializer(queue_rows(list(items)), many=True).data)
        rows = queue_rows(list(page))
        return self.get_paginated_response(self.get_serializer(rows, many=True).data)


class ItemReviewApi(APIView):
    """Everything the lead weighs for one item: labels with volunteers and summaries, the vote
    distribution, the majority suggestion, the resolution, the thread and the audit trail."""

    @extend_schema(responses=ReviewOut)
    def get(self, request: Request, slug: str, item_id: int) -> Response:
        project = access_project(request.user, slug, at_least=Role.LEAD)
        return Response(ReviewOut(item_review(project_item(project, item_id))).data)


class ItemResolveApi(APIView):
    """Give the item its final label (any live node at the project's depth). A reason is
    required when the label is not the majority's; 409 if the item changed since
    `expected_stage`/`expected_version`. Repeating the same decision returns it again."""

    @extend_schema(request=ResolveIn, responses={200: ResolutionOut, 400: ErrorOut, 409: ErrorOut})
    def post(self, request: Request, slug: str, item_id: int) -> Response:
        project = access_project(request.user, slug, at_least=Role.LEAD)
        item = project_item(project, item_id)
        data = validated(ResolveIn, request.data)
        resolution = item_resolve(
            item=item,
            lead=request.user,
            node=node_by_code(project, data["node"]),
            reason=data["reason"],
            expected_stage=data.get("expected_stage"),
            expected_version=data.get("expected_version"),
        )
        return Response(ResolutionOut(resolution).data)


class ItemReopenApi(APIView):
    """Send a final item back to the disputed queue; its resolution stays in the audit trail."""

    @extend_schema(request=ReopenIn, responses={200: ItemStateOut, 400: ErrorOut, 409: ErrorOut})
    def post(self, request: Request, slug: str, item_id: int) -> Response:
        project = access_project(request.user, slug, at_least=Role.LEAD)
        item = project_item(project, item_id)
        data = validated(ReopenIn, request.data)
        return Response(ItemStateOut(item_reopen(item=item, lead=request.user, **data)).data)


class ItemPostsApi(APIView):
    """An item's discussion. Leads and admins always; volunteers once the item is revealed
    (cross-check or later, if the project reveals labels then), 403 before."""

    @extend_schema(responses=PostOut(many=True))
    def get(self, request: Request, slug: str, item_id: int) -> Response:
        project = access_project(request.user, slug)
        item = project_item(project, item_id)
        if not labels_revealed(item, user_role(request.user, project)):
            raise PermissionDenied(
                _("The discussion opens to volunteers once the item reaches cross-check.")
            )
        return Response(PostOut(item.posts.select_related("author"), many=True).data)

    @extend_schema(request=PostIn, responses={201: PostOut, 400: ErrorOut})
    def post(self, request: Request, slug: str, item_id: int) -> Response:
        project = access_project(request.user, slug)
        item = project_item(project, item_id)
        post = post_add(item=item, author=request.user, **validated(PostIn, request.data))
        return Response(PostOut(post).data, status=status.HTTP_201_CREATED)


class PilotApi(APIView):
    """Start a pilot of `n` random open items (`{"action": "start", "n": 20}`) or close it."""

    @extend_schema(request=PilotIn, responses={200: PilotOut, 400: ErrorOut, 409: ErrorOut})
    def post(self, request: Request, slug: str) -> Response:
        project = access_project(request.user, slug, at_least=Role.LEAD)
        data = validated(PilotIn, request.data)
        if data["action"] == "start":
            if "n" not in data:
                raise ConcordError(_("Starting a pilot needs n, the number of items."))
            pilot_start(project=project, lead=request.user, n=data["n"])
        else:
            pilot_close(project=project, lead=request.user)
        items = project.items.filter(in_pilot=True).count()
        return Response(PilotOut({"status": project.pilot_status, "items": items}).data)


def proposal_answer(project, viewer, pk: int) -> dict:
    """One proposal as `viewer` may see it (its items and reason: review.proposals)."""
    proposal = proposals_overview(project, viewer).get(pk=pk)
    return ProposalOut(proposal, context={"viewer": viewer}).data


class ProposalListApi(APIView):
    """Proposals of missing categories (any member); accepted only when every member approves."""

    @extend_schema(responses=ProposalOut(many=True))
    def get(self, request: Request, slug: str) -> Response:
        project = access_project(request.user, slug)
        return Response(
            ProposalOut(
                proposals_overview(project, request.user),
                many=True,
                context={"viewer": request.user},
            ).data
        )

    @extend_schema(request=ProposalIn, responses={201: ProposalOut, 400: ErrorOut})
    def post(self, request: Request, slug: str) -> Response:
        project = access_project(request.user, slug)
        data = validated(ProposalIn, request.data)
        item = project_item(project, data["item"]) if "item" in data else None
        parent = node_by_code(project, data["parent"]) if data["parent"] else None
        proposal = proposal_create(
            project=project,
            proposer=request.user,
            parent=parent,
            name=data["name"],
            definition=data["definition"],
            reason=data["reason"],
            item=item,
        )
        out = proposals_overview(project, request.user).get(pk=proposal.pk)
        return Response(
            ProposalOut(out, context={"viewer": request.user}).data, status=status.HTTP_201_CREATED
        )


def _proposal(project, pk: int) -> Proposal:
    return get_object_or_404(Proposal, project=project, pk=pk)


class ProposalVoteApi(APIView):
    """Approve or reject (changeable while open); 409 once voting has ended."""

    @extend_schema(request=VoteIn, responses={200: ProposalOut, 409: ErrorOut})
    def post(self, request: Request, slug: str, pk: int) -> Response:
        project = access_project(request.user, slug)
        proposal = _proposal(project, pk)
        proposal_vote(proposal=proposal, member=request.user, **validated(VoteIn, request.data))
        return Response(
            ProposalOut(
                proposals_overview(project, request.user).get(pk=pk),
                context={"viewer": request.user},
            ).data
        )


class ProposalAddNodeApi(APIView):
    """Add an accepted proposal's category with the next free code under its parent. Leads."""

    @extend_schema(request=None, responses={200: ProposalOut, 409: ErrorOut})
    def post(self, request: Request, slug: str, pk: int) -> Response:
        project = access_project(request.user, slug, at_least=Role.LEAD)
        proposal_add_node(proposal=_proposal(project, pk), lead=request.user)
        return Response(
            ProposalOut(
                proposals_overview(project, request.user).get(pk=pk),
                context={"viewer": request.user},
            ).data
        )


class ProposalSendBackApi(APIView):
    """Send the items that triggered a proposal back for relabeling (labels kept in the audit
    trail). Leads."""

    @extend_schema(request=None, responses=SendBackOut)
    def post(self, request: Request, slug: str, pk: int) -> Response:
        project = access_project(request.user, slug, at_least=Role.LEAD)
        n = proposal_send_back(proposal=_proposal(project, pk), lead=request.user)
        return Response(SendBackOut({"items": n}).data)


class StatsApi(APIView):
    """Per-volunteer numbers; leads and admins get everyone and the pairwise Cohen's kappa,
    a volunteer only their own row."""

    @extend_schema(responses=StatsOut)
    def get(self, request: Request, slug: str) -> Response:
        project = access_project(request.user, slug)
        is_lead = has_role(request.user, project, Role.LEAD)
        rows = volunteer_stats(project, user=None if is_lead else request.user)
        kappa = None
        if is_lead:
            matrix = pairwise_kappa(project, rows)
            kappa = {
                "volunteers": [r.user_id for r in rows],
                "kappa": matrix.kappa,
                "shared": matrix.shared,
            }
        return Response(StatsOut({"volunteers": rows, "kappa": kappa}).data)
