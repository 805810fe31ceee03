"""Fetch a project scoped to the user's role, in one place: deny by default."""

from __future__ import annotations

from django.core.exceptions import PermissionDenied
from django.db.models import IntegerField, OuterRef, QuerySet, Subquery, Value
from django.http import Http404
from django.utils.translation import gettext as _

from annotation.models import Item, Membership, Project, Role
from concord.prepared import PreparedQuery

# Who may do what a role may do: an admin may do what a lead may, a lead what a volunteer may.
ROLE_RANK = {Role.VOLUNTEER: 1, Role.LEAD: 2, Role.ADMIN: 3}


def role_reaches(role: str | None, at_least: str) -> bool:
    """Whether `role` (None: not a member) may do what `at_least` may."""
    return role is not None and ROLE_RANK[Role(role)] >= ROLE_RANK[Role(at_least)]


def roles_reaching(at_least: str) -> list[str]:
    """The roles that may do what `at_least` may, for queries on Membership.role."""
    return [role for role in ROLE_RANK if role_reaches(role, at_least)]


def has_role(user, project: Project, at_least: str) -> bool:
    return role_reaches(user_role(user, project), at_least)


def user_role(user, project: Project) -> str | None:
    """The user's role in the project (site admins are admins everywhere), or None."""
    if not user.is_authenticated:
        return None
    if user.is_superuser:
        return Role.ADMIN
    # A project from access_project carries its viewer's role as query annotations (`viewer_id`,
    # `viewer_role`), so the role checks of the rest of that request cost no query. The role is
    # read from them only for that same user; anyone else (or a project loaded elsewhere) is
    # looked up.
    if getattr(project, "viewer_id", None) == user.pk:
        return getattr(project, "viewer_role", None)
    return (
        Membership.objects.filter(project=project, user=user).values_list("role", flat=True).first()
    )


def _project_with_role(slug: str, user_id: int) -> QuerySet[Project]:
    membership = Membership.objects.filter(project=OuterRef("pk"), user_id=user_id)
    return (
        Project.objects.select_related("taxonomy")
        .filter(slug=slug)
        .annotate(
            viewer_id=Value(user_id, output_field=IntegerField()),
            viewer_role=Subquery(membership.values("role")[:1]),
        )[:1]
    )


# Every request of a project's pages and API starts here (issue #16: compiled once).
_PROJECT_WITH_ROLE = PreparedQuery(_project_with_role)
_PROJECT_ITEM = PreparedQuery(
    lambda project, item: Item.objects.select_related("issue").filter(project_id=project, pk=item)
)


def access_project(user, slug: str, *, at_least: str = Role.VOLUNTEER) -> Project:
    """The project if `user` holds `at_least` that role in it. Non-members get 404 (the project's
    existence is not revealed), members with too small a role get 403.

    One query: the user's role comes with the project (annotated `viewer_id`, `viewer_role`),
    where user_role finds it for this user."""
    project = (
        _PROJECT_WITH_ROLE.first(slug=slug, user_id=user.pk) if user.is_authenticated else None
    )
    role = user_role(user, project) if project is not None else None
    if project is None or role is None:
        raise Http404(_("No such project."))
    if not role_reaches(role, at_least):
        raise PermissionDenied(
            _("This needs the %(role)s role in %(project)s.")
            % {"role": Role(at_least).label.lower(), "project": project}
        )
    return project


def project_item(project: Project, item_id: int) -> Item:
    """An item of `project` with its issue, or 404 (another project's item id reveals nothing)."""
    item = _PROJECT_ITEM.first(project=project.pk, item=item_id)
    if item is None:
        raise no_such_item()
    item.project = project  # the instance access_project loaded, with its taxonomy and role
    return item


def no_such_item() -> Http404:
    """The 404 for an item id that is not in the project (another project's reveals nothing)."""
    return Http404(_("No such item in this project."))


def project_item_ref(project: Project, item_id: int) -> Item:
    """A reference to item `item_id` of `project`, for a service that loads the item itself
    (annotation_submit locks it, answering 404 if it is not in the project): no query here."""
    return Item(pk=item_id, project=project)


def projects_of(user) -> QuerySet[Project]:
    projects = Project.objects.select_related("taxonomy").order_by("name")
    if user.is_superuser:
        return projects
    return projects.filter(memberships__user=user).distinct()


def may_create_projects(user) -> bool:
    """Projects are created by site staff (who then hold the admin role everywhere)."""
    return bool(user.is_authenticated and (user.is_staff or user.is_superuser))


def require_project_creator(user) -> None:
    if not may_create_projects(user):
        raise PermissionDenied("Creating a project is for site staff.")
