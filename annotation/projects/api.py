"""The projects API: list and create, read and change settings, archive. Access as on the pages:
creating is for site staff, reading for members, changing and archiving for the project's admins."""

from __future__ import annotations

from drf_spectacular.utils import extend_schema
from rest_framework import status
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from annotation.access import access_project, projects_of, require_project_creator
from annotation.api_input import validated
from annotation.models import Project, Role
from annotation.projects.serializers import ArchiveIn, ProjectOut, ProjectSettingsIn
from annotation.projects.settings import project_archive, project_create, project_update
from concord.errors import ErrorOut


def _settings(data, *, instance: Project | None = None, partial: bool = False) -> dict:
    serializer = ProjectSettingsIn(instance=instance, data=data, partial=partial)
    serializer.is_valid(raise_exception=True)
    return dict(serializer.validated_data)


class ProjectListApi(APIView):
    """GET: the projects the caller is a member of (all, for site staff). POST: create a project
    (site staff); the creator becomes its admin."""

    @extend_schema(responses=ProjectOut(many=True))
    def get(self, request: Request) -> Response:
        return Response(ProjectOut(projects_of(request.user), many=True).data)

    @extend_schema(
        request=ProjectSettingsIn, responses={201: ProjectOut, 400: ErrorOut, 409: ErrorOut}
    )
    def post(self, request: Request) -> Response:
        require_project_creator(request.user)
        project = project_create(creator=request.user, **_settings(request.data))
        return Response(ProjectOut(project).data, status=status.HTTP_201_CREATED)


class ProjectDetailApi(APIView):
    """GET: a project's settings (members). PATCH: change some (the project's admins)."""

    @extend_schema(responses=ProjectOut)
    def get(self, request: Request, slug: str) -> Response:
        return Response(ProjectOut(access_project(request.user, slug)).data)

    @extend_schema(
        request=ProjectSettingsIn, responses={200: ProjectOut, 400: ErrorOut, 409: ErrorOut}
    )
    def patch(self, request: Request, slug: str) -> Response:
        project = access_project(request.user, slug, at_least=Role.ADMIN)
        changes = _settings(request.data, instance=project, partial=True)
        return Response(
            ProjectOut(project_update(project=project, actor=request.user, **changes)).data
        )


class ProjectArchiveApi(APIView):
    """Archive (read only, still exportable) or restore a project. The project's admins."""

    @extend_schema(request=ArchiveIn, responses={200: ProjectOut, 400: ErrorOut})
    def post(self, request: Request, slug: str) -> Response:
        project = access_project(request.user, slug, at_least=Role.ADMIN)
        archived = validated(ArchiveIn, request.data)["archived"]
        return Response(
            ProjectOut(project_archive(project=project, actor=request.user, archived=archived)).data
        )
