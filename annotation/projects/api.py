"""The project API for scripts: items with their text from a JSON/JSONL file (a background job
to poll), and the issues of a URL list or a harvested source as items. Project admins and site
staff; the pages call the same services."""

from __future__ import annotations

from django.conf import settings
from django.contrib.auth.base_user import AbstractBaseUser
from django.shortcuts import get_object_or_404
from drf_spectacular.utils import extend_schema, extend_schema_field
from rest_framework import serializers, status
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from annotation.access import access_project
from annotation.api_input import validated
from annotation.jobs import JobProgressOut
from annotation.models import ItemImport, Project, Role
from annotation.projects.forms import ALL, CANDIDATES
from annotation.projects.item_imports import item_import_progress, item_import_start
from annotation.projects.services import project_items_from_source, project_items_from_url_list
from concord.errors import BadInput, utf8_text
from concord.parsers import FormParser, JSONParser, MultiPartParser, SettingCap
from ingest.api.serializers import FileOrTextIn, UrlListIn, UrlListReportOut
from ingest.api.views import report_data
from ingest.forms import MAX_UPLOAD_BYTES
from ingest.models import KeywordSet, Source

JOBS_LISTED = 50


class ItemImportIn(FileOrTextIn):
    file = serializers.FileField(
        required=False, help_text="A .json file (an array of issues) or .jsonl (one per line)."
    )
    text = serializers.CharField(
        required=False,
        allow_blank=True,
        trim_whitespace=False,
        help_text="The file's text, instead of `file`.",
    )


class ProblemOut(serializers.Serializer):
    path = serializers.CharField(help_text="The file's name.")
    line = serializers.IntegerField(allow_null=True, help_text="Where the issue's object starts.")
    column = serializers.CharField(allow_null=True, help_text="The field, e.g. comments[0].body.")
    message = serializers.CharField()


class ItemImportOut(serializers.ModelSerializer):
    project: serializers.SlugRelatedField[Project] = serializers.SlugRelatedField(
        slug_field="slug", read_only=True
    )
    requested_by: serializers.SlugRelatedField[AbstractBaseUser] = serializers.SlugRelatedField(
        slug_field="username", read_only=True
    )
    status_label = serializers.CharField(source="get_status_display", read_only=True)
    is_active = serializers.BooleanField(read_only=True)
    progress = serializers.SerializerMethodField()
    problems = ProblemOut(many=True, read_only=True)

    class Meta:
        model = ItemImport
        fields = [
            "id",
            "project",
            "requested_by",
            "name",
            "status",
            "status_label",
            "is_active",
            "records_total",
            "records_checked",
            "issues_created",
            "items_added",
            "progress",
            "error",
            "problems",
            "created_at",
            "started_at",
            "finished_at",
        ]
        read_only_fields = fields

    @extend_schema_field(JobProgressOut)
    def get_progress(self, job: ItemImport) -> dict:
        return item_import_progress(job)


class ProjectItemImportsApi(APIView):
    """Imports of issues with their text into the project, newest first. POST takes a JSON or
    JSONL file (multipart `file`, or `text` in JSON) and queues its import: poll the job until
    it is done or failed. A file with any problem is imported not at all, and the failed job
    lists every problem with its line and field."""

    parser_classes = [JSONParser, MultiPartParser, FormParser]
    # Room for JSON escaping or a multipart envelope around a file of the largest size.
    max_body_bytes = SettingCap("ITEM_IMPORT_MAX_BYTES", times=2)

    @extend_schema(responses=ItemImportOut(many=True))
    def get(self, request: Request, slug: str) -> Response:
        project = access_project(request.user, slug, at_least=Role.ADMIN)
        jobs = project.item_imports.select_related("project", "requested_by")
        return Response(ItemImportOut(jobs[:JOBS_LISTED], many=True).data)

    @extend_schema(
        request={"application/json": ItemImportIn, "multipart/form-data": ItemImportIn},
        responses={201: ItemImportOut},
    )
    def post(self, request: Request, slug: str) -> Response:
        project = access_project(request.user, slug, at_least=Role.ADMIN)
        data = validated(ItemImportIn, request.data)
        upload = data.get("file")
        name = data.get("name") or (upload.name if upload else "text")
        size = upload.size if upload else len(data["text"].encode())
        if size > settings.ITEM_IMPORT_MAX_BYTES:
            limit = settings.ITEM_IMPORT_MAX_BYTES // (1024 * 1024)
            raise BadInput(
                "file" if upload else "text", f"{size // 1024} kB; the limit is {limit} MB."
            )
        # An upload past FILE_UPLOAD_MAX_MEMORY_SIZE is a temporary file: copied in chunks.
        blocks = upload.chunks() if upload else [data["text"].encode()]
        queued = item_import_start(project=project, user=request.user, name=name, blocks=blocks)
        return Response(ItemImportOut(queued.job).data, status=status.HTTP_201_CREATED)


class ProjectItemImportApi(APIView):
    """One item import: status, issues checked, items added, and every problem of a failed
    file."""

    @extend_schema(responses=ItemImportOut)
    def get(self, request: Request, slug: str, pk: int) -> Response:
        project = access_project(request.user, slug, at_least=Role.ADMIN)
        job = get_object_or_404(
            ItemImport.objects.select_related("project", "requested_by"),
            project=project,
            pk=pk,
        )
        return Response(ItemImportOut(job).data)


class ItemsFromUrlListIn(UrlListIn):
    keyword_set = serializers.PrimaryKeyRelatedField(
        queryset=KeywordSet.objects.all(),
        required=False,
        allow_null=True,
        help_text="Only the candidates of this keyword set among the list's issues (matched on "
        "the text they have; issues still waiting for their details are counted in "
        "`awaiting_details` and taken when the list is sent again). Empty: all of them.",
    )


class ItemsFromUrlListOut(UrlListReportOut):
    added = serializers.IntegerField(help_text="New items in the project.")
    awaiting_details = serializers.IntegerField(
        help_text="Keyword candidates only: issues with no text yet, not judged this time."
    )


class ProjectItemsFromUrlListApi(APIView):
    """Add the issues of an issue-URL list (one URL per line) as items: all of them, or the
    candidates of a keyword set among them. The list is imported as on the URL-list page: good
    lines go in, bad ones come back with their line numbers (422 when none could be taken)."""

    parser_classes = [JSONParser, MultiPartParser, FormParser]
    max_body_bytes = 2 * MAX_UPLOAD_BYTES

    @extend_schema(
        request={"application/json": ItemsFromUrlListIn, "multipart/form-data": ItemsFromUrlListIn},
        responses={200: ItemsFromUrlListOut, 422: ItemsFromUrlListOut},
    )
    def post(self, request: Request, slug: str) -> Response:
        project = access_project(request.user, slug, at_least=Role.ADMIN)
        data = validated(ItemsFromUrlListIn, request.data)
        upload = data.get("file")
        name = data.get("name") or (upload.name if upload else "text")
        size = upload.size if upload else len(data["text"].encode())
        if size > MAX_UPLOAD_BYTES:
            limit = MAX_UPLOAD_BYTES // (1024 * 1024)
            raise BadInput(
                "file" if upload else "text", f"{size // 1024} kB; the limit is {limit} MB."
            )
        text = utf8_text(upload.read(), name) if upload else data["text"]
        result = project_items_from_url_list(
            project=project,
            actor=request.user,
            text=text,
            name=name,
            keyword_set=data.get("keyword_set"),
        )
        body = {
            **report_data(result.report, name),
            "added": result.added,
            "awaiting_details": result.awaiting_details,
        }
        taken = result.report.created + result.report.already_known
        code = status.HTTP_200_OK if taken else status.HTTP_422_UNPROCESSABLE_ENTITY
        return Response(ItemsFromUrlListOut(body).data, status=code)


class ItemsFromSourceIn(serializers.Serializer):
    # DRF's metaclass takes declared fields off the class; the stubs see `Field.source`.
    source = serializers.PrimaryKeyRelatedField(  # type: ignore[assignment]
        queryset=Source.objects.all(), help_text="A harvested tracker (GET /api/sources/)."
    )
    which = serializers.ChoiceField(
        choices=[(ALL, "All of the source's issues"), (CANDIDATES, "Only keyword candidates")],
        default=ALL,
    )


class ItemsAddedOut(serializers.Serializer):
    added = serializers.IntegerField(help_text="New items; issues already in the project stay.")


class ProjectItemsFromSourceApi(APIView):
    """Add a harvested source's issues (pull requests never) as items, as the project page's
    **Add items** does: all of them, or its keyword set's candidates."""

    @extend_schema(request=ItemsFromSourceIn, responses={200: ItemsAddedOut})
    def post(self, request: Request, slug: str) -> Response:
        project = access_project(request.user, slug, at_least=Role.LEAD)
        data = validated(ItemsFromSourceIn, request.data)
        added = project_items_from_source(
            project=project,
            actor=request.user,
            source=data["source"],
            candidates_only=data["which"] == CANDIDATES,
        )
        return Response(ItemsAddedOut({"added": added}).data)
