"""The interviews API (leads and admins): import files in the background and read the job's
report, list and filter quotes, map a code the taxonomy lacks."""

from __future__ import annotations

from django.utils.translation import gettext as _
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import extend_schema
from rest_framework import serializers, status
from rest_framework.generics import GenericAPIView
from rest_framework.parsers import MultiPartParser
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from annotation.access import access_project
from annotation.api_input import validated
from annotation.interviews.jobs import (
    MAX_FILE_BYTES,
    PARTS,
    interview_import_progress,
    interview_import_queue,
)
from annotation.interviews.priorities import participant_rankings, ranking_save, rankings_import
from annotation.interviews.selectors import QuoteFilters, project_quotes
from annotation.interviews.services import InterviewFile, unresolved_code_map
from annotation.interviews.triangulation import project_triangulation, triangulation_json
from annotation.jobs import JobProgressOut
from annotation.models import Role
from concord.errors import ErrorOut, NotFound
from taxonomy.interviews.models import InterviewImportJob, Participant, ParticipantKind, Quote


class InterviewFilesIn(serializers.Serializer):
    codebook = serializers.FileField(help_text="The codebook CSV.")
    background = serializers.FileField(required=False, help_text="The background .xlsx.")
    guideline = serializers.FileField(required=False, help_text="The guideline (Markdown).")


class InterviewImportOut(serializers.Serializer):
    id = serializers.IntegerField()
    status = serializers.CharField()
    is_active = serializers.BooleanField()
    files = serializers.ListField(child=serializers.DictField(), help_text="[{part, name}]")
    report = serializers.DictField(
        help_text="participants, users, developers, quotes, links, links_resolved, unresolved "
        "[{path, line, column, value}], background_rows, guideline; or errors "
        "[{path, line, column, message}]."
    )
    error = serializers.CharField()
    progress = JobProgressOut()
    created_at = serializers.DateTimeField()
    finished_at = serializers.DateTimeField(allow_null=True)


def _job_out(job: InterviewImportJob) -> dict:
    data = {
        "id": job.pk,
        "status": job.status,
        "is_active": job.is_active,
        "files": [{"part": f["part"], "name": f["name"]} for f in job.files],
        "report": job.report,
        "error": job.error,
        "progress": interview_import_progress(job),
        "created_at": job.created_at,
        "finished_at": job.finished_at,
    }
    return InterviewImportOut(data).data


class InterviewImportsApi(APIView):
    """Upload interview files (multipart: `codebook`, optional `background` and `guideline`) to
    import in the background; 202 with the job, whose URL gives the report. Leads and admins."""

    parser_classes = [MultiPartParser]
    max_body_bytes = len(PARTS) * MAX_FILE_BYTES

    @extend_schema(
        request={"multipart/form-data": InterviewFilesIn},
        responses={202: InterviewImportOut, 400: ErrorOut},
    )
    def post(self, request: Request, slug: str) -> Response:
        project = access_project(request.user, slug, at_least=Role.LEAD)
        data = validated(InterviewFilesIn, request.data)
        files = {part: InterviewFile(f.name, f.read()) for part, f in data.items() if f}
        queued = interview_import_queue(project=project, user=request.user, files=files)
        return Response(_job_out(queued.job), status=status.HTTP_202_ACCEPTED)


class InterviewImportApi(APIView):
    """An interview import's progress and report. Leads and admins."""

    @extend_schema(responses=InterviewImportOut)
    def get(self, request: Request, slug: str, pk: int) -> Response:
        project = access_project(request.user, slug, at_least=Role.LEAD)
        job = InterviewImportJob.objects.filter(project=project, pk=pk).first()
        if job is None:
            raise NotFound(_("No such interview import in this project."))
        return Response(_job_out(job))


class QuoteLinkOut(serializers.Serializer):
    code = serializers.CharField(help_text="As the file wrote it.")
    node = serializers.CharField(
        source="node.code", allow_null=True, default=None, help_text="Null: unresolved."
    )


class QuoteOut(serializers.Serializer):
    id = serializers.IntegerField()
    participant = serializers.CharField(source="participant.code")
    kind = serializers.CharField(source="participant.kind")
    experience = serializers.CharField(source="participant.experience")
    framework = serializers.CharField(source="participant.framework")
    prompt_category = serializers.CharField()
    text = serializers.CharField()
    insight = serializers.CharField()
    links = QuoteLinkOut(many=True, source="links.all")


class QuoteFiltersIn(serializers.Serializer):
    q = serializers.CharField(required=False, default="", allow_blank=True, max_length=200)
    node = serializers.CharField(required=False, default="", allow_blank=True, max_length=30)
    kind = serializers.ChoiceField(
        choices=[("", ""), *ParticipantKind.choices], required=False, default=""
    )
    framework = serializers.CharField(required=False, default="", allow_blank=True, max_length=200)


class InterviewQuotesApi(GenericAPIView):
    """The project's quotes, filtered (`q` words, `node` code, `kind` user|developer,
    `framework` words) and paginated. Leads and admins."""

    serializer_class = QuoteOut
    queryset = Quote.objects.none()

    @extend_schema(parameters=[QuoteFiltersIn], responses=QuoteOut(many=True))
    def get(self, request: Request, slug: str) -> Response:
        project = access_project(request.user, slug, at_least=Role.LEAD)
        filters = QuoteFilters(**validated(QuoteFiltersIn, request.query_params))
        quotes = project_quotes(project, filters)
        page = self.paginate_queryset(quotes)
        if page is None:
            return Response(QuoteOut(quotes, many=True).data)
        return self.get_paginated_response(QuoteOut(page, many=True).data)


class CodeMapIn(serializers.Serializer):
    code = serializers.CharField(max_length=30, help_text="A code the taxonomy lacks (C.11).")
    node = serializers.CharField(max_length=30, help_text="The project's category it means.")


class CodeMapOut(serializers.Serializer):
    code = serializers.CharField()
    node = serializers.CharField()
    links = serializers.IntegerField(help_text="Links now mapped.")


class InterviewCodeMapApi(APIView):
    """Map every quote link written with a code the taxonomy lacks to one of the project's
    categories. Leads and admins."""

    @extend_schema(request=CodeMapIn, responses={200: CodeMapOut, 400: ErrorOut})
    def post(self, request: Request, slug: str) -> Response:
        project = access_project(request.user, slug, at_least=Role.LEAD)
        data = validated(CodeMapIn, request.data)
        n = unresolved_code_map(
            project=project, actor=request.user, code=data["code"], node_code=data["node"]
        )
        return Response(CodeMapOut({"code": data["code"], "node": data["node"], "links": n}).data)


class TriangulationApi(APIView):
    """Per theme: final labels and their share, users and developers who raised it, ranks;
    Spearman's rank correlations with 95% intervals; the themes whose ranks part. Leads and
    admins (the same as the page, the CSV and `manage.py triangulation`)."""

    @extend_schema(responses=OpenApiTypes.OBJECT)
    def get(self, request: Request, slug: str) -> Response:
        project = access_project(request.user, slug, at_least=Role.LEAD)
        return Response(triangulation_json(project_triangulation(project)))


class RankingIn(serializers.Serializer):
    ranking = serializers.DictField(
        child=serializers.ListField(child=serializers.CharField(max_length=30), max_length=3),
        help_text='Issue type code -> theme codes, first place first: {"C": ["C.4", "C.9"]}.',
    )


class ParticipantRankingApi(APIView):
    """GET a participant's ranking; PUT replaces it for the issue types sent. Leads and
    admins."""

    @extend_schema(responses=RankingIn)
    def get(self, request: Request, slug: str, pk: int) -> Response:
        participant = _participant(request, slug, pk)
        return Response({"ranking": participant_rankings(participant)})

    @extend_schema(request=RankingIn, responses={200: RankingIn, 400: ErrorOut})
    def put(self, request: Request, slug: str, pk: int) -> Response:
        participant = _participant(request, slug, pk)
        data = validated(RankingIn, request.data)
        ranking_save(participant=participant, actor=request.user, choices=data["ranking"])
        return Response({"ranking": participant_rankings(participant)})


def _participant(request: Request, slug: str, pk: int) -> Participant:
    project = access_project(request.user, slug, at_least=Role.LEAD)
    participant = Participant.objects.filter(project=project, pk=pk).first()
    if participant is None:
        raise NotFound(_("No such participant in this project."))
    return participant


class RankingsFileIn(serializers.Serializer):
    rankings = serializers.FileField(help_text="Participant,Rank,Category (CSV).")


class RankingsImportApi(APIView):
    """Import rankings from a CSV (`Participant,Rank,Category`): all-or-nothing, problems by
    line and column. Leads and admins."""

    parser_classes = [MultiPartParser]
    max_body_bytes = MAX_FILE_BYTES

    @extend_schema(
        request={"multipart/form-data": RankingsFileIn},
        responses={200: OpenApiTypes.OBJECT, 400: ErrorOut},
    )
    def post(self, request: Request, slug: str) -> Response:
        project = access_project(request.user, slug, at_least=Role.LEAD)
        upload = validated(RankingsFileIn, request.data)["rankings"]
        n = rankings_import(
            project=project, actor=request.user, data=upload.read(), name=upload.name
        )
        return Response({"places": n})
