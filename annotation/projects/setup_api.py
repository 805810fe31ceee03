"""The projects API for setting a study up: list and create, read and change settings, archive,
members and invitations, label-file imports. Access as on the pages: creating is for site staff,
reading for members, changing and archiving for the project's admins."""

from __future__ import annotations

from django.db import transaction
from django.urls import reverse
from drf_spectacular.utils import extend_schema
from rest_framework import status
from rest_framework.parsers import MultiPartParser
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from annotation.access import access_project, projects_of, require_project_creator
from annotation.api_input import validated
from annotation.models import LabelImportJob, Project, Role
from annotation.projects.label_imports import (
    MAX_FILE_BYTES,
    MAX_FILES,
    label_import_progress,
    label_import_queue,
)
from annotation.projects.members import (
    invitation_create,
    member_column_set,
    member_remove,
    member_role_set,
    members_bulk_add,
    parse_member_list,
)
from annotation.projects.serializers import (
    AddedOut,
    ArchiveIn,
    InvitationIn,
    InvitationOut,
    LabelFilesIn,
    LabelImportOut,
    MemberChangeIn,
    MemberOut,
    MembersIn,
    ProjectOut,
    ProjectSettingsIn,
)
from annotation.projects.settings import project_archive, project_create, project_update
from concord.errors import ErrorOut, NotFound


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


class ProjectMembersApi(APIView):
    """GET: the members. POST: create accounts by username or e-mail address and make them
    members; each gets an initial password, returned only in this answer. A name an account has
    already is reported as already a member or as not created (invite that person), and nobody is
    added for it. The project's admins."""

    @extend_schema(responses=MemberOut(many=True))
    def get(self, request: Request, slug: str) -> Response:
        project = access_project(request.user, slug, at_least=Role.ADMIN)
        members = project.memberships.select_related("user").order_by("user__username")
        return Response(MemberOut(members, many=True).data)

    @extend_schema(request=MembersIn, responses={201: AddedOut(many=True), 400: ErrorOut})
    def post(self, request: Request, slug: str) -> Response:
        project = access_project(request.user, slug, at_least=Role.ADMIN)
        data = validated(MembersIn, request.data)
        entries = parse_member_list("\n".join(data["people"]), "people")
        added = members_bulk_add(
            project=project, actor=request.user, entries=entries, role=data["role"]
        )
        return Response(AddedOut(added, many=True).data, status=status.HTTP_201_CREATED)


class ProjectMemberApi(APIView):
    """PATCH: a member's role and/or LabelJ column. DELETE: end the membership (labels stay).
    The project's admins; the last admin cannot be demoted or removed (409)."""

    @extend_schema(request=MemberChangeIn, responses={200: MemberOut, 400: ErrorOut, 409: ErrorOut})
    def patch(self, request: Request, slug: str, pk: int) -> Response:
        project = access_project(request.user, slug, at_least=Role.ADMIN)
        data = validated(MemberChangeIn, request.data)
        with transaction.atomic():
            membership = project.memberships.filter(pk=pk).first()
            if "role" in data:
                membership = member_role_set(
                    project=project, actor=request.user, membership_id=pk, role=data["role"]
                )
            if "column" in data:
                membership = member_column_set(
                    project=project, actor=request.user, membership_id=pk, column=data["column"]
                )
            if membership is None:
                raise NotFound("No such member in this project.")
        return Response(MemberOut(membership).data)

    @extend_schema(responses={204: None, 409: ErrorOut})
    def delete(self, request: Request, slug: str, pk: int) -> Response:
        project = access_project(request.user, slug, at_least=Role.ADMIN)
        member_remove(project=project, actor=request.user, membership_id=pk)
        return Response(status=status.HTTP_204_NO_CONTENT)


class ProjectInvitationsApi(APIView):
    """POST: a one-time invitation link with the chosen role, valid for `days`. The project's
    admins; the link is returned only here."""

    @extend_schema(request=InvitationIn, responses={201: InvitationOut, 400: ErrorOut})
    def post(self, request: Request, slug: str) -> Response:
        project = access_project(request.user, slug, at_least=Role.ADMIN)
        data = validated(InvitationIn, request.data)
        invitation, token = invitation_create(project=project, inviter=request.user, **data)
        url = request.build_absolute_uri(reverse("join", kwargs={"token": token}))
        out = {"url": url, "role": invitation.role, "expires_at": invitation.expires_at}
        return Response(InvitationOut(out).data, status=status.HTTP_201_CREATED)


def _label_import_out(job: LabelImportJob) -> dict:
    data = {
        field: getattr(job, field)
        for field in ("id", "status", "is_active", "refuse_repeats", "files", "files_done")
    }
    data |= {"report": job.report, "error": job.error, "created_at": job.created_at}
    data |= {"finished_at": job.finished_at, "progress": label_import_progress(job)}
    return LabelImportOut(data).data


class LabelImportsApi(APIView):
    """Upload study label files (multipart `files`, repeated) to import in the background;
    202 with the job, whose URL reports progress and, at the end, the per-file report. The
    project's admins."""

    parser_classes = [MultiPartParser]
    max_body_bytes = MAX_FILES * MAX_FILE_BYTES

    @extend_schema(
        request={"multipart/form-data": LabelFilesIn},
        responses={202: LabelImportOut, 400: ErrorOut},
    )
    def post(self, request: Request, slug: str) -> Response:
        project = access_project(request.user, slug, at_least=Role.ADMIN)
        data = validated(LabelFilesIn, request.data)
        queued = label_import_queue(
            project=project,
            user=request.user,
            uploads=data["files"],
            refuse_repeats=data["refuse_repeats"],
        )
        return Response(_label_import_out(queued.job), status=status.HTTP_202_ACCEPTED)


class LabelImportApi(APIView):
    """A label import's progress and per-file report. The project's admins."""

    @extend_schema(responses=LabelImportOut)
    def get(self, request: Request, slug: str, pk: int) -> Response:
        project = access_project(request.user, slug, at_least=Role.ADMIN)
        job = project.label_imports.filter(pk=pk).first()
        if job is None:
            raise NotFound("No such label import in this project.")
        return Response(_label_import_out(job))
