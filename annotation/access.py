"""Fetch a project scoped to the user's role, in one place: deny by default."""

from __future__ import annotations

from django.core.exceptions import PermissionDenied
from django.db.models import QuerySet
from django.http import Http404

from annotation.models import Membership, Project, Role

# Who may do what a role may do: an admin may do what a lead may, a lead what a volunteer may.
ROLE_RANK = {Role.VOLUNTEER: 1, Role.LEAD: 2, Role.ADMIN: 3}


def user_role(user, project: Project) -> str | None:
    if not user.is_authenticated:
        return None
    if user.is_superuser:
        return Role.ADMIN
    return (
        Membership.objects.filter(project=project, user=user).values_list("role", flat=True).first()
    )


def access_project(user, slug: str, *, at_least: str = Role.VOLUNTEER) -> Project:
    """The project if `user` holds `at_least` that role in it. Non-members get 404 (the project's
    existence is not revealed), members with too small a role get 403."""
    project = Project.objects.select_related("taxonomy").filter(slug=slug).first()
    role = user_role(user, project) if project else None
    if role is None:
        raise Http404("No such project.")
    if ROLE_RANK[Role(role)] < ROLE_RANK[Role(at_least)]:
        raise PermissionDenied(f"This needs the {Role(at_least).label.lower()} role in {project}.")
    return project


def projects_of(user) -> QuerySet[Project]:
    projects = Project.objects.select_related("taxonomy").order_by("name")
    if user.is_superuser:
        return projects
    return projects.filter(memberships__user=user).distinct()
