"""The near-duplicate API: the project's pairs (leads), one item's duplicates (every member, as the
blindness rule lets them see), "not a duplicate" and the index's state and rebuild (leads). Access
is checked like the pages' (access_project: 404 for non-members, 403 for too small a role)."""

from __future__ import annotations

from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import serializers
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from annotation.access import access_project, no_such_item, project_item
from annotation.duplicates.index import duplicate_index_current, duplicate_index_queue
from annotation.duplicates.selectors import (
    duplicate_counts,
    duplicates_of,
    final_node,
    pair_of,
    pairs_at_intake,
    pairs_inconsistent,
    pairs_standing,
)
from annotation.duplicates.services import pair_mark_not_duplicate
from annotation.models import DuplicateIndex, Item, Role

PAIR_KINDS = {"all": pairs_standing, "inconsistent": pairs_inconsistent, "intake": pairs_at_intake}
PAIRS_MAX = 1000


def final_label(item: Item) -> dict | None:
    node = final_node(item)
    return None if node is None else {"code": node.code, "name": node.name}


class DuplicateSideOut(serializers.Serializer):
    item = serializers.IntegerField(source="pk")
    issue_url = serializers.CharField(source="issue.url")
    title = serializers.CharField(source="issue.title")
    stage = serializers.CharField()
    final_label = serializers.SerializerMethodField()

    def get_final_label(self, item: Item) -> dict | None:
        return final_label(item)


class DuplicatePairOut(serializers.Serializer):
    a = DuplicateSideOut(source="item_a")
    b = DuplicateSideOut(source="item_b")
    similarity = serializers.FloatField()
    at_intake = serializers.BooleanField()


class DuplicatePairsOut(serializers.Serializer):
    counts = serializers.DictField(child=serializers.IntegerField())
    pairs = DuplicatePairOut(many=True)


class DuplicatePairsApi(APIView):
    """The project's near-duplicate pairs, most similar first: all of them, those whose final
    labels differ (kind=inconsistent) or those an intake added (kind=intake)."""

    @extend_schema(
        parameters=[
            OpenApiParameter("kind", enum=list(PAIR_KINDS), required=False),
            OpenApiParameter("threshold", float, required=False),
        ],
        responses=DuplicatePairsOut,
    )
    def get(self, request: Request, slug: str) -> Response:
        project = access_project(request.user, slug, at_least=Role.LEAD)
        kind = request.query_params.get("kind", "all")
        pairs = PAIR_KINDS.get(kind, pairs_standing)(project)
        threshold = _threshold(request.query_params.get("threshold"))
        if threshold is not None:
            pairs = pairs.filter(similarity__gte=threshold)
        body = {"counts": duplicate_counts(project), "pairs": list(pairs[:PAIRS_MAX])}
        return Response(DuplicatePairsOut(body).data)


def _threshold(raw: str | None) -> float | None:
    try:
        value = float(raw) if raw else None
    except ValueError:
        return None
    return value if value is not None and 0 <= value <= 1 else None


class ItemDuplicateOut(serializers.Serializer):
    item = DuplicateSideOut()
    similarity = serializers.FloatField()


class ItemDuplicatesApi(APIView):
    """An item's likely duplicates. A volunteer gets only those whose labels they may already see
    (revealed items); leads all."""

    @extend_schema(responses=ItemDuplicateOut(many=True))
    def get(self, request: Request, slug: str, item_id: int) -> Response:
        project = access_project(request.user, slug)
        item = project_item(project, item_id)
        return Response(ItemDuplicateOut(duplicates_of(item, request.user), many=True).data)


class NotDuplicateApi(APIView):
    """Mark two paired items not duplicates: they leave every list, rebuilds included."""

    @extend_schema(request=None, responses=DuplicatePairOut)
    def post(self, request: Request, slug: str, a: int, b: int) -> Response:
        project = access_project(request.user, slug, at_least=Role.LEAD)
        pair = pair_of(project, a, b)
        if pair is None:
            raise no_such_item()
        pair_mark_not_duplicate(project=project, actor=request.user, pair=pair)
        return Response(DuplicatePairOut(pair).data)


class DuplicateIndexOut(serializers.Serializer):
    id = serializers.IntegerField()
    status = serializers.CharField()
    threshold = serializers.FloatField()
    items_indexed = serializers.IntegerField()
    pairs_found = serializers.IntegerField()
    created_at = serializers.DateTimeField()
    finished_at = serializers.DateTimeField(allow_null=True)
    error = serializers.CharField()


class DuplicateIndexApi(APIView):
    """The index in use (the newest done build) and the newest build; POST queues a rebuild."""

    @extend_schema(responses=DuplicateIndexOut(many=True))
    def get(self, request: Request, slug: str) -> Response:
        project = access_project(request.user, slug, at_least=Role.LEAD)
        builds = list(DuplicateIndex.objects.filter(project=project)[:1])
        current = duplicate_index_current(project)
        if current is not None and current not in builds:
            builds.append(current)
        return Response(DuplicateIndexOut(builds, many=True).data)

    @extend_schema(request=None, responses={202: DuplicateIndexOut})
    def post(self, request: Request, slug: str) -> Response:
        project = access_project(request.user, slug, at_least=Role.LEAD)
        job = duplicate_index_queue(project=project, actor=request.user)
        return Response(DuplicateIndexOut(job).data, status=202)
