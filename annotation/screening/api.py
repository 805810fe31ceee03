"""The screening API: volunteers take the next candidate and vote on it; the lead settles a
screening dispute. Same access rules as the pages (access_project); item payloads are blind."""

from __future__ import annotations

from drf_spectacular.utils import extend_schema
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from annotation.access import access_project, project_item, user_role
from annotation.api_input import validated
from annotation.blindness import stage_seen
from annotation.labeling.api import CONFLICT, NONE_RESPONSE, claim_response
from annotation.labeling.serializers import (
    ItemOut,
    ScreeningDecisionIn,
    ScreeningDecisionOut,
    ScreeningVoteIn,
    ScreeningVoteOut,
)
from annotation.models import Role
from annotation.screening.services import screening_decide, screening_next_claim, screening_vote


class ScreeningNextApi(APIView):
    """Hand me the next candidate to screen (reserved for me), or resume the one I hold."""

    @extend_schema(request=None, responses={200: ItemOut, 204: NONE_RESPONSE})
    def post(self, request: Request, slug: str) -> Response:
        project = access_project(request.user, slug)
        claim = screening_next_claim(project=project, volunteer=request.user)
        return claim_response(claim, project=project, viewer=request.user)


class ScreeningVoteApi(APIView):
    """Vote whether a candidate is relevant; the same vote again changes nothing."""

    @extend_schema(
        request=ScreeningVoteIn,
        responses={200: ScreeningVoteOut, 201: ScreeningVoteOut, 409: CONFLICT},
    )
    def post(self, request: Request, slug: str, item_id: int) -> Response:
        project = access_project(request.user, slug)
        item = project_item(project, item_id)
        data = validated(ScreeningVoteIn, request.data)
        vote, created = screening_vote(item=item, volunteer=request.user, **data)
        vote.item.refresh_from_db(fields=["stage"])
        answer = {
            "item_id": vote.item_id,
            "relevant": vote.relevant,
            "reason": vote.reason,
            "stage": stage_seen(vote.item, project, user_role(request.user, project)),
        }
        return Response(ScreeningVoteOut(answer).data, status=201 if created else 200)


class ScreeningDecisionApi(APIView):
    """The lead settles a screening dispute: relevant -> open, not relevant -> excluded."""

    @extend_schema(
        request=ScreeningDecisionIn, responses={200: ScreeningDecisionOut, 409: CONFLICT}
    )
    def post(self, request: Request, slug: str, item_id: int) -> Response:
        project = access_project(request.user, slug, at_least=Role.LEAD)
        item = project_item(project, item_id)
        data = validated(ScreeningDecisionIn, request.data)
        item = screening_decide(item=item, lead=request.user, **data)
        return Response(ScreeningDecisionOut(item).data)
