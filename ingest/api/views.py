"""The ingest API, staff only: sources, harvest runs (start, progress, cancel), keyword sets and
URL-list imports. Every write goes through the same service the pages call."""

from typing import cast

from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import mixins, status, viewsets
from rest_framework.decorators import action
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.serializers import BaseSerializer
from rest_framework.views import APIView

from concord.errors import BadInput, ConcordError, ErrorOut, utf8_text
from concord.input_checks import id_param
from concord.parsers import FormParser, JSONParser, MultiPartParser
from ingest.access import IsIngestAdmin
from ingest.api.serializers import (
    HarvestRunSerializer,
    KeywordSetSerializer,
    SourceSerializer,
    UrlListIn,
    UrlListReportOut,
)
from ingest.candidates import keyword_set_save
from ingest.forms import MAX_UPLOAD_BYTES
from ingest.harvest import harvest_cancel, harvest_start
from ingest.importers import UrlImportReport, url_list_import
from ingest.models import HarvestRun, KeywordSet, RunStatus, Source
from ingest.selectors import sources_overview
from ingest.sources import repository_parse, source_create


class SourceViewSet(
    mixins.ListModelMixin,
    mixins.RetrieveModelMixin,
    mixins.CreateModelMixin,
    viewsets.GenericViewSet,
):
    """Trackers and creation-date windows to harvest. The token is write-only."""

    permission_classes = [IsIngestAdmin]
    serializer_class = SourceSerializer

    def get_queryset(self):
        return sources_overview()

    def perform_create(self, serializer: "BaseSerializer[Source]") -> None:
        data = dict(serializer.validated_data)
        owner, repo = repository_parse(data.pop("repository"))
        serializer.instance = source_create(owner=owner, repo=repo, **data)

    @extend_schema(request=None, responses={201: HarvestRunSerializer, 409: ErrorOut})
    @action(detail=True, methods=["post"])
    def harvest(self, request: Request, pk=None) -> Response:
        """Start a harvest; 409 while another run of this source is active."""
        run = harvest_start(source=self.get_object(), user=request.user)
        return Response(HarvestRunSerializer(run).data, status=status.HTTP_201_CREATED)


@extend_schema(
    parameters=[
        OpenApiParameter("source", int, description="Only runs of this source."),
        OpenApiParameter("status", str, enum=RunStatus.values, description="Only this status."),
    ]
)
class HarvestRunViewSet(viewsets.ReadOnlyModelViewSet):
    """Harvest runs, newest first, with their progress."""

    permission_classes = [IsIngestAdmin]
    serializer_class = HarvestRunSerializer

    def get_queryset(self):
        runs = HarvestRun.objects.select_related("source", "started_by").order_by("-created_at")
        source = id_param(self.request.query_params.get("source"), "source")
        wanted = self.request.query_params.get("status", "")
        if source is not None:
            runs = runs.filter(source_id=source)
        if wanted in RunStatus.values:
            runs = runs.filter(status=wanted)
        return runs

    @extend_schema(request=None, responses=HarvestRunSerializer)
    @action(detail=True, methods=["post"])
    def cancel(self, request: Request, pk=None) -> Response:
        """Ask the run to stop: a queued or waiting run stops at once, a running one before its
        next page. Cancelling a finished run changes nothing."""
        run = self.get_object()
        harvest_cancel(run=run)
        run.refresh_from_db()
        return Response(HarvestRunSerializer(run).data)


class KeywordSetViewSet(viewsets.ModelViewSet):
    """Keyword sets: issues of a source whose title or body contains one become candidates."""

    permission_classes = [IsIngestAdmin]
    serializer_class = KeywordSetSerializer
    queryset = KeywordSet.objects.prefetch_related("sources").order_by("name")

    def perform_create(self, serializer: "BaseSerializer[KeywordSet]") -> None:
        serializer.instance = keyword_set_save(**serializer.validated_data)

    def perform_update(self, serializer: "BaseSerializer[KeywordSet]") -> None:
        # UpdateModelMixin.update made the serializer with the instance from get_object().
        keyword_set = cast(KeywordSet, serializer.instance)
        data = serializer.validated_data
        serializer.instance = keyword_set_save(
            name=data.get("name", keyword_set.name),
            keywords=data.get("keywords", keyword_set.keywords),
            description=data.get("description"),
            keyword_set=keyword_set,
        )


def report_data(report: UrlImportReport, name: str) -> dict:
    return {
        "name": name,
        "lines": report.lines,
        "created": report.created,
        "already_known": report.already_known,
        "duplicates": report.duplicates,
        "issue_ids": report.issue_ids,
        "errors": [{"line": e.where.line, "message": e.message} for e in report.errors],
    }


class UrlListImportApi(APIView):
    """Import an issue-URL list (one URL per line). Good lines go in, bad lines come back with
    their line numbers; 422 with the same report when no line could be taken, 400 when the
    request itself is wrong (no text, not UTF-8, over the upload page's 5 MB), 413 when the body
    is over twice that."""

    permission_classes = [IsIngestAdmin]
    parser_classes = [JSONParser, MultiPartParser, FormParser]
    # Room for a list of MAX_UPLOAD_BYTES inside JSON escaping or a multipart envelope; the list
    # itself is then held to MAX_UPLOAD_BYTES, as on the upload page.
    max_body_bytes = 2 * MAX_UPLOAD_BYTES

    @extend_schema(
        request={"application/json": UrlListIn, "multipart/form-data": UrlListIn},
        responses={200: UrlListReportOut, 422: UrlListReportOut},
    )
    def post(self, request: Request) -> Response:
        data = UrlListIn(data=request.data)
        data.is_valid(raise_exception=True)
        upload = data.validated_data.get("file")
        name = data.validated_data.get("name") or (upload.name if upload else "text")
        size = upload.size if upload else len(data.validated_data["text"].encode())
        if size > MAX_UPLOAD_BYTES:
            limit = MAX_UPLOAD_BYTES // (1024 * 1024)
            raise BadInput(
                "file" if upload else "text", f"{size // 1024} kB; the limit is {limit} MB."
            )
        text = utf8_text(upload.read(), name) if upload else data.validated_data["text"]
        report = url_list_import(text=text, name=name)
        if report.lines == 0:
            raise ConcordError(f"{name} has no issue URLs (one per line).")
        taken = report.created + report.already_known
        code = status.HTTP_200_OK if taken else status.HTTP_422_UNPROCESSABLE_ENTITY
        return Response(UrlListReportOut(report_data(report, name)).data, status=code)
