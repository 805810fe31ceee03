"""The replication package's import over the API (the project's admins): upload a .zip, poll the
job. The export is an export job (POST …/export-jobs/ with format=package)."""

from __future__ import annotations

from django.utils.translation import gettext as _
from drf_spectacular.utils import extend_schema
from rest_framework import serializers, status
from rest_framework.parsers import MultiPartParser
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from annotation.access import access_project
from annotation.api_input import validated
from annotation.jobs import JobProgressOut
from annotation.models import PackageImport, Role
from annotation.package.jobs import (
    MAX_UPLOAD_BYTES,
    package_import_progress,
    package_import_queue,
)
from concord.errors import ErrorOut, NotFound


class PackageIn(serializers.Serializer):
    file = serializers.FileField(help_text="The replication package, a .zip (multipart).")


class PackageImportOut(serializers.Serializer):
    id = serializers.IntegerField()
    name = serializers.CharField()
    status = serializers.CharField()
    is_active = serializers.BooleanField()
    report = serializers.DictField(
        help_text="files [{path, kind, rows, items_created, annotations_created, "
        "resolutions_created, year, repeats [{line, first_line | first}]}], left_out [{path, "
        "why}], notes; or, when it failed, errors [{file, line, column, message}]."
    )
    error = serializers.CharField()
    progress = JobProgressOut()
    created_at = serializers.DateTimeField()
    finished_at = serializers.DateTimeField(allow_null=True)


def _out(job: PackageImport) -> dict:
    data = {f: getattr(job, f) for f in ("id", "name", "status", "is_active", "report", "error")}
    data |= {"created_at": job.created_at, "finished_at": job.finished_at}
    return PackageImportOut(data | {"progress": package_import_progress(job)}).data


class PackageImportsApi(APIView):
    """Upload a replication package to import into this (empty) project in the background; 202
    with the job, whose URL reports progress and, at the end, the report by file and line."""

    parser_classes = [MultiPartParser]
    max_body_bytes = MAX_UPLOAD_BYTES

    @extend_schema(
        request={"multipart/form-data": PackageIn},
        responses={202: PackageImportOut, 400: ErrorOut, 409: ErrorOut},
    )
    def post(self, request: Request, slug: str) -> Response:
        project = access_project(request.user, slug, at_least=Role.ADMIN)
        upload = validated(PackageIn, request.data)["file"]
        queued = package_import_queue(
            project=project, user=request.user, name=upload.name, data=upload.read()
        )
        return Response(_out(queued.job), status=status.HTTP_202_ACCEPTED)


class PackageImportApi(APIView):
    """A package import's progress and report."""

    @extend_schema(responses=PackageImportOut)
    def get(self, request: Request, slug: str, pk: int) -> Response:
        project = access_project(request.user, slug, at_least=Role.ADMIN)
        job = project.package_imports.filter(pk=pk).first()
        if job is None:
            raise NotFound(_("No such package import in this project."))
        return Response(_out(job))
