"""The volunteer's labeling API: next item, submit/edit a label, skip, my labels. Same access rules
as the pages (access_project); item payloads are blind."""

from __future__ import annotations

from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework import generics, status
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from annotation.access import access_project, project_item, project_item_ref, user_role
from annotation.api_input import represented, validated
from annotation.blindness import stage_seen
from annotation.labeling.assignment import Claim, item_skip, next_item_claim, skip_undo
from annotation.labeling.selectors import item_view, my_annotations
from annotation.labeling.serializers import (
    AnnotationIn,
    AnnotationOut,
    ItemOut,
    NextItemIn,
    SkipIn,
    SkipOut,
    SkipUndoOut,
)
from annotation.labeling.services import annotation_submit, label_node
from annotation.models import Item, Project

REASON_HEADER = "Concord-Reason"
NONE_RESPONSE = OpenApiResponse(
    description=(
        "Nothing to hand out; the `Concord-Reason` header says why "
        "(nothing_left, quota_reached, pilot_running, all_reserved, ...)."
    )
)
CONFLICT = OpenApiResponse(description="The item's state forbids it now (`detail` says why).")


def claimed_item_payload(*, item: Item, project: Project, viewer, reserved_until) -> dict:
    """The item a claim just handed to `viewer`, as ItemOut shows it."""
    view = item_view(item=item, project=project, viewer=viewer, claimed=True)
    return {
        "item": item,
        "stage": stage_seen(item, project, user_role(viewer, project)),
        "title_html": view.title_html,
        "body_html": view.body_html,
        "keywords": view.keywords,
        "comments": view.comments,
        "mine": view.mine,
        "revealed": view.revealed,
        "others": view.others,
        "reserved_until": reserved_until,
    }


def claim_response(claim: Claim, *, project: Project, viewer) -> Response:
    if claim.item is None:
        response = Response(status=status.HTTP_204_NO_CONTENT)
        response[REASON_HEADER] = claim.reason.value if claim.reason else ""
        return response
    payload = claimed_item_payload(
        item=claim.item, project=project, viewer=viewer, reserved_until=claim.expires_at
    )
    return Response(represented(ItemOut, payload))


class NextItemApi(APIView):
    """Hand me the next item to label (reserved for me), or resume the one I hold."""

    @extend_schema(request=NextItemIn, responses={200: ItemOut, 204: NONE_RESPONSE})
    def post(self, request: Request, slug: str) -> Response:
        project = access_project(request.user, slug)
        data = validated(NextItemIn, request.data)
        claim = next_item_claim(project=project, volunteer=request.user, exclude=data["exclude"])
        return claim_response(claim, project=project, viewer=request.user)


class AnnotationPutApi(APIView):
    """Submit my label on an item, or edit it (send the `version` you edited).

    201: created; 200: the same label again (nothing changed) or edited; 409: the item already
    has k labels or left labeling, or the version is stale."""

    @extend_schema(
        request=AnnotationIn,
        responses={200: AnnotationOut, 201: AnnotationOut, 409: CONFLICT},
    )
    def put(self, request: Request, slug: str, item_id: int) -> Response:
        project = access_project(request.user, slug)
        item = project_item_ref(project, item_id)  # loaded and locked by annotation_submit
        data = validated(AnnotationIn, request.data)
        node = label_node(project=project, code=data["node"])
        annotation, created = annotation_submit(
            item=item,
            volunteer=request.user,
            node=node,
            summary=data["summary"],
            version=data.get("version"),
        )
        code = status.HTTP_201_CREATED if created else status.HTTP_200_OK
        return Response(represented(AnnotationOut, annotation), status=code)


class SkipApi(APIView):
    """POST: pass on an item: I am never sent it again and its reservation is released.
    DELETE: take the skip back (undo)."""

    @extend_schema(request=SkipIn, responses={200: SkipOut, 201: SkipOut, 409: CONFLICT})
    def post(self, request: Request, slug: str, item_id: int) -> Response:
        project = access_project(request.user, slug)
        item = project_item(project, item_id)
        data = validated(SkipIn, request.data)
        skip, created = item_skip(item=item, volunteer=request.user, reason=data["reason"])
        return Response(SkipOut(skip).data, status=201 if created else 200)

    @extend_schema(request=None, responses={200: SkipUndoOut, 403: CONFLICT, 409: CONFLICT})
    def delete(self, request: Request, slug: str, item_id: int) -> Response:
        """Take my skip back: the item is reserved for me again, if I may still label it."""
        project = access_project(request.user, slug)
        item = project_item(project, item_id)
        claim = skip_undo(item=item, volunteer=request.user)
        return Response(SkipUndoOut(claim).data)


class MyAnnotationsApi(generics.ListAPIView):
    """My labels in the project, newest change first, paginated."""

    serializer_class = AnnotationOut

    def get_queryset(self):
        project = access_project(self.request.user, self.kwargs["slug"])
        return my_annotations(project=project, volunteer=self.request.user)
