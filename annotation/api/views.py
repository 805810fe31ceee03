from drf_spectacular.utils import extend_schema
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from annotation.access import access_project
from annotation.api.serializers import AgreementQuery, AgreementReportOut, validated
from annotation.models import Role
from annotation.selectors import project_agreement


class ProjectAgreementApi(APIView):
    """Fleiss' kappa and Krippendorff's alpha of a project, overall and per group.

    For leads and admins."""

    @extend_schema(parameters=[AgreementQuery], responses=AgreementReportOut)
    def get(self, request: Request, slug: str) -> Response:
        project = access_project(request.user, slug, at_least=Role.LEAD)
        report = project_agreement(project, **validated(AgreementQuery, request.query_params))
        return Response(AgreementReportOut(report).data)
