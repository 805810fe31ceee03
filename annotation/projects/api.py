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
from annotation.models import ItemImport, Project, Role
from annotation.projects.item_imports import item_import_progress, item_import_start
from concord.errors import BadInput, utf8_text
from concord.parsers import FormParser, JSONParser, MultiPartParser, SettingCap
from ingest.issue_files import issue_file_text_check

JOBS_LISTED = 50


class ItemImportIn(serializers.Serializer):
    file = serializers.FileField(
        required=False, help_text="A .json file (an array of issues) or .jsonl (one per line)."
    )
    text = serializers.CharField(
        required=False,
        allow_blank=True,
        trim_whitespace=False,
        help_text="The file's text, instead of `file`.",
    )
    name = serializers.CharField(
        required=False, max_length=200, help_text="Shown in error locations; the file name."
    )

    def validate(self, attrs: dict) -> dict:
        if bool(attrs.get("text")) == bool(attrs.get("file")):
            raise serializers.ValidationError("Send either `text` or `file` (one of them).")
        return attrs


class ProgressOut(serializers.Serializer):
    fraction = serializers.FloatField()
    step = serializers.CharField()


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

    @extend_schema_field(ProgressOut)
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
        jobs = project.item_imports.select_related("project", "requested_by").defer("text")
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
        text = utf8_text(upload.read(), name) if upload else data["text"]
        issue_file_text_check(text, name)
        queued = item_import_start(project=project, user=request.user, name=name, text=text)
        return Response(ItemImportOut(queued.job).data, status=status.HTTP_201_CREATED)


class ProjectItemImportApi(APIView):
    """One item import: status, issues checked, items added, and every problem of a failed
    file."""

    @extend_schema(responses=ItemImportOut)
    def get(self, request: Request, slug: str, pk: int) -> Response:
        project = access_project(request.user, slug, at_least=Role.ADMIN)
        job = get_object_or_404(
            ItemImport.objects.select_related("project", "requested_by").defer("text"),
            project=project,
            pk=pk,
        )
        return Response(ItemImportOut(job).data)
