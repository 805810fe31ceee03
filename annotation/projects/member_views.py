"""The members page (the project's admins): members with role, LabelJ column and removal; an
invitation link; adding a list of people. Secrets (the link, initial passwords) are shown once,
in the answer to the POST that made them. And the join page an invitation link opens."""

from __future__ import annotations

from collections import Counter

from django.contrib import messages
from django.contrib.auth import login
from django.contrib.auth.decorators import login_required
from django.db import transaction
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils.translation import gettext as _
from django.views.decorators.http import require_POST

from annotation.access import access_project
from annotation.models import Role
from annotation.projects.forms import InvitationForm, MemberForm, MemberListForm, SignUpForm
from annotation.projects.members import (
    InvitationUnusable,
    Outcome,
    invitation_accept,
    invitation_create,
    invitation_valid,
    member_column_set,
    member_remove,
    member_role_set,
    members_bulk_add,
    parse_member_list,
)
from concord.errors import ConcordError, utf8_text


def _members_page(request, project, *, status: int = 200, **extra):
    members = project.memberships.select_related("user").order_by("column", "user__username")
    context = {
        "project": project,
        "members": members,
        "invite_form": InvitationForm(),
        "list_form": MemberListForm(),
        "roles": Role.choices,
        **extra,
    }
    return render(request, "annotation/project_members.html", context, status=status)


@login_required
def project_members_page(request, slug: str):
    """GET: the page. POST: create accounts for the listed names that are free, showing each
    new account's initial password once; a taken name adds nobody (members_bulk_add)."""
    project = access_project(request.user, slug, at_least=Role.ADMIN)
    if request.method != "POST":
        return _members_page(request, project)
    form = MemberListForm(request.POST, request.FILES)
    if not form.is_valid():
        return _members_page(request, project, list_form=form)
    try:
        entries = parse_member_list(*_list_text(form))
        added = members_bulk_add(
            project=project, actor=request.user, entries=entries, role=form.cleaned_data["role"]
        )
    except ConcordError as exc:
        form.add_error(None, str(exc))
        return _members_page(request, project, list_form=form)
    outcomes = Counter(a.outcome for a in added)
    return _members_page(
        request,
        project,
        added=added,
        created=outcomes[Outcome.CREATED],
        not_created=outcomes[Outcome.NOT_CREATED],
    )


def _list_text(form: MemberListForm) -> tuple[str, str]:
    upload = form.cleaned_data.get("file")
    if upload:
        return utf8_text(upload.read(), upload.name), upload.name
    return form.cleaned_data["people"], "the pasted list"


@require_POST
@login_required
def project_invite(request, slug: str):
    project = access_project(request.user, slug, at_least=Role.ADMIN)
    form = InvitationForm(request.POST)
    if not form.is_valid():
        return _members_page(request, project, invite_form=form, status=400)
    invitation, token = invitation_create(
        project=project, inviter=request.user, **form.cleaned_data
    )
    link = request.build_absolute_uri(reverse("join", kwargs={"token": token}))
    return _members_page(request, project, invitation=invitation, link=link)


@require_POST
@login_required
def project_member_change(request, slug: str, pk: int):
    project = access_project(request.user, slug, at_least=Role.ADMIN)
    form = MemberForm(request.POST)
    if not form.is_valid():
        errors = "; ".join(f"{k}: {' '.join(map(str, v))}" for k, v in form.errors.items())
        messages.error(request, errors)
        return _members_page(request, project, status=400)
    data = form.cleaned_data
    try:
        if data["action"] == "remove":
            member_remove(project=project, actor=request.user, membership_id=pk)
        else:
            with transaction.atomic():
                member_role_set(
                    project=project, actor=request.user, membership_id=pk, role=data["role"]
                )
                member_column_set(
                    project=project, actor=request.user, membership_id=pk, column=data["column"]
                )
    except ConcordError as exc:
        messages.error(request, exc.message)
        return _members_page(request, project, status=exc.http_status)
    messages.success(request, "Member removed." if data["action"] == "remove" else "Saved.")
    return redirect("project-members", slug=project.slug)


def join(request, token: str):
    """An invitation link: a signed-in person joins with one click; anyone else signs up here
    (or signs in and comes back)."""
    try:
        invitation = invitation_valid(token)
    except InvitationUnusable as exc:
        return _unusable(request, exc)
    form = None if request.user.is_authenticated else SignUpForm(request.POST or None)
    if request.method == "POST" and (form is None or form.is_valid()):
        try:
            with transaction.atomic():  # a used-up link creates no account either
                user = request.user if form is None else form.save()
                membership = invitation_accept(token=token, user=user)
        except InvitationUnusable as exc:
            return _unusable(request, exc)
        if form is not None:
            login(request, user, backend="django.contrib.auth.backends.ModelBackend")
        role = membership.get_role_display().lower()
        messages.success(
            request,
            _("Welcome to %(project)s (%(role)s).")
            % {"project": membership.project.name, "role": role},
        )
        return redirect("project-detail", slug=membership.project.slug)
    context = {"invitation": invitation, "form": form, "token": token}
    return render(request, "annotation/join.html", context)


def _unusable(request, exc: InvitationUnusable):
    return render(request, "annotation/join.html", {"problem": exc.message}, status=410)
