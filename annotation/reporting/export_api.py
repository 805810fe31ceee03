"""The export API, for project admins and site staff: stream a CSV directly (small exports), or
queue a background job and poll it (any size)."""

from __future__ import annotations

from django.contrib.auth.base_user import AbstractBaseUser
from django.http import FileResponse, StreamingHttpResponse
from django.shortcuts import get_object_or_404
from django.urls import reverse
from django.utils import timezone
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import (
    OpenApiParameter,
    OpenApiResponse,
    extend_schema,
    extend_schema_field,
)
from rest_framework import serializers, status
from rest_framework.renderers import BaseRenderer, JSONRenderer
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from annotation.access import access_project
from annotation.api_input import validated
from annotation.jobs import JobProgressOut
from annotation.models import ExportFormat, ExportJob, Project, Role, Stage
from annotation.reporting.export_jobs import (
    export_content_type,
    export_job_file,
    export_job_progress,
    export_job_start,
)
from annotation.reporting.exports import (
    CSV_FORMATS,
    ZIP_FORMATS,
    export_lines,
    export_options,
)
from concord.errors import NotFound
from taxonomy.models import Level

JOBS_LISTED = 50


class ExportQuery(serializers.Serializer):
    level = serializers.ChoiceField(
        choices=Level.choices,
        required=False,
        help_text="Study format: labels deeper than this count as their ancestor, coarser ones "
        "are blank. Default: the project's label depth. Other formats ignore it.",
    )
    repository = serializers.CharField(
        required=False, allow_blank=True, help_text="Only this repository, as owner/repo."
    )
    type = serializers.CharField(
        required=False, allow_blank=True, help_text="Only items whose final label has this type."
    )
    stage = serializers.ChoiceField(
        choices=Stage.choices, required=False, allow_blank=True, help_text="Only this stage."
    )
    created_from = serializers.DateField(
        required=False, help_text="Only issues created on the tracker on or after (UTC)."
    )
    created_until = serializers.DateField(
        required=False, help_text="Only issues created on the tracker on or before (UTC)."
    )
    bom = serializers.BooleanField(
        required=False,
        allow_null=True,
        default=None,
        help_text="Start with a UTF-8 byte-order mark (for Excel). Default: yes, except for the "
        "study format (URLs and codes, byte for byte like the study's files).",
    )


class ExportJobIn(ExportQuery):
    format = serializers.ChoiceField(choices=ExportFormat.choices)


class ExportJobOut(serializers.ModelSerializer):
    project: serializers.SlugRelatedField[Project] = serializers.SlugRelatedField(
        slug_field="slug", read_only=True
    )
    requested_by: serializers.SlugRelatedField[AbstractBaseUser] = serializers.SlugRelatedField(
        slug_field="username", read_only=True
    )
    format_label = serializers.CharField(source="get_format_display", read_only=True)
    status_label = serializers.CharField(source="get_status_display", read_only=True)
    is_active = serializers.BooleanField(read_only=True)
    progress = serializers.SerializerMethodField()
    download_url = serializers.SerializerMethodField(
        help_text="The download page (a signed-in session), once the job is done and its file is "
        "complete."
    )
    file_url = serializers.SerializerMethodField(
        help_text="The same file through the API (token or session), once the job is done."
    )

    class Meta:
        model = ExportJob
        fields = [
            "id",
            "project",
            "requested_by",
            "format",
            "format_label",
            "options",
            "status",
            "status_label",
            "is_active",
            "rows_written",
            "rows_total",
            "progress",
            "error",
            "download_url",
            "file_url",
            "created_at",
            "started_at",
            "finished_at",
        ]
        read_only_fields = fields

    @extend_schema_field(JobProgressOut)
    def get_progress(self, job: ExportJob) -> dict:
        return export_job_progress(job)

    @extend_schema_field(serializers.CharField(allow_null=True))
    def get_download_url(self, job: ExportJob) -> str | None:
        if export_job_file(job) is None:
            return None
        return reverse("project-export-download", kwargs={"slug": job.project.slug, "pk": job.pk})

    @extend_schema_field(serializers.CharField(allow_null=True))
    def get_file_url(self, job: ExportJob) -> str | None:
        if export_job_file(job) is None:
            return None
        return reverse("api-project-export-file", kwargs={"slug": job.project.slug, "pk": job.pk})


class CsvRenderer(BaseRenderer):
    """Lets a client ask for text/csv; only errors go through it (the CSV itself streams)."""

    media_type = "text/csv"
    format = "csv"
    charset = "utf-8"

    def render(self, data, accepted_media_type=None, renderer_context=None) -> str:
        detail = data.get("detail", data) if isinstance(data, dict) else data
        return f"{detail}\n"


class ProjectExportApi(APIView):
    """Stream one export as CSV (UTF-8, `\\r\\n` line ends). Cells a spreadsheet would run as
    a formula (starting with = + - @, tab or CR) get a leading `'`. Holds a connection while
    streaming: for the full long format of a large project, prefer an export job."""

    renderer_classes = [JSONRenderer, CsvRenderer]

    @extend_schema(
        parameters=[
            ExportQuery,
            OpenApiParameter(
                "export_format",
                str,
                OpenApiParameter.PATH,
                enum=list(CSV_FORMATS),
                description="study, long, final or repositories (the package: an export job).",
            ),
        ],
        responses={
            (200, "text/csv"): OpenApiResponse(OpenApiTypes.STR, description="The CSV file."),
        },
    )
    def get(self, request: Request, slug: str, export_format: str) -> StreamingHttpResponse:
        project = access_project(request.user, slug, at_least=Role.ADMIN)
        if export_format in ZIP_FORMATS:
            raise NotFound(
                "The replication package and the project archive are zips of files, written in "
                "the background: queue them with POST export-jobs/ and format=package or archive."
            )
        if export_format not in CSV_FORMATS:
            raise NotFound(f"No export format {export_format!r}; use one of {list(CSV_FORMATS)}.")
        query = validated(ExportQuery, request.query_params)
        options = export_options(project, format=export_format, **query)
        name = f"{project.slug}-{options.file_name_part}-{timezone.now():%Y%m%d}.csv"
        response = StreamingHttpResponse(
            export_lines(project, options), content_type="text/csv; charset=utf-8"
        )
        response["Content-Disposition"] = f'attachment; filename="{name}"'
        return response


class ProjectExportJobsApi(APIView):
    """Export jobs of a project, newest first; POST queues one (a Celery task writes the file)."""

    @extend_schema(responses=ExportJobOut(many=True))
    def get(self, request: Request, slug: str) -> Response:
        project = access_project(request.user, slug, at_least=Role.ADMIN)
        jobs = project.export_jobs.select_related("project", "requested_by")[:JOBS_LISTED]
        return Response(ExportJobOut(jobs, many=True).data)

    @extend_schema(request=ExportJobIn, responses={201: ExportJobOut})
    def post(self, request: Request, slug: str) -> Response:
        project = access_project(request.user, slug, at_least=Role.ADMIN)
        options = export_options(project, **validated(ExportJobIn, request.data))
        job = export_job_start(project=project, user=request.user, options=options)
        return Response(ExportJobOut(job).data, status=status.HTTP_201_CREATED)


class ProjectExportJobApi(APIView):
    """One export job: status, rows written of the estimated total, error, and the download URL
    once done. The progress page polls this."""

    @extend_schema(responses=ExportJobOut)
    def get(self, request: Request, slug: str, pk: int) -> Response:
        project = access_project(request.user, slug, at_least=Role.ADMIN)
        job = get_object_or_404(
            ExportJob.objects.select_related("project", "requested_by"), project=project, pk=pk
        )
        return Response(ExportJobOut(job).data)


class ProjectExportFileApi(APIView):
    """The finished file of an export job, for scripts (`Authorization: Token ...`) as much as
    for a signed-in session: project admins and site staff, as on the download page. The answer
    carries Content-Length, so a client can show its progress; 404 until the job is done (or
    once its file has expired)."""

    renderer_classes = [JSONRenderer, CsvRenderer]

    @extend_schema(
        responses={
            (200, "text/csv"): OpenApiResponse(OpenApiTypes.STR, description="The CSV file."),
        },
    )
    def get(self, request: Request, slug: str, pk: int) -> FileResponse:
        project = access_project(request.user, slug, at_least=Role.ADMIN)
        job = get_object_or_404(ExportJob, project=project, pk=pk)
        path = export_job_file(job)
        if path is None:
            raise NotFound(f"Export {job.pk} has no file to download ({job.get_status_display()}).")
        return FileResponse(
            path.open("rb"),
            as_attachment=True,
            filename=job.file,
            content_type=export_content_type(job),
        )
