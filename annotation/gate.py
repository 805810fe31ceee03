"""May this actor make this write in this project now? One gate, asked first by every service that
changes a project or something a project holds (and so by every page, API route, command and task
that writes). The labeling rule (annotation.labeling.eligibility) decides which item a volunteer may
label; the gate decides everything around it: the role the write needs, and the project's state.

- **Role.** Each kind of write names the least role it needs (volunteer < lead < admin; a site
  admin is admin everywhere). Non-members are refused.
- **Project state.** An archived project is read only: every write is refused except restoring it
  (and exports, which write nothing of the project's own).
- **Shared things.** A taxonomy node that one project added (ProjectNode) is curated by that
  project's leads; a node shared by projects changes only through a new taxonomy version or by
  site staff (`node_owner`).

Commands and background jobs started by the operator act as OPERATOR: the role check passes (they
hold the shell), the project's state still applies. A job queued by a person re-asks the gate as
that person when it runs, so a project archived meanwhile is not written.
"""

from __future__ import annotations

from dataclasses import dataclass

from django.core.exceptions import PermissionDenied
from django.db import models
from django.utils.translation import gettext
from django.utils.translation import gettext_lazy as _
from rest_framework import status

from annotation.access import role_reaches, user_role
from annotation.models import Project, ProjectNode, Role
from concord.errors import Conflict
from taxonomy.models import Node, Taxonomy


class Write(models.TextChoices):
    """Every kind of change a project takes; the label is what the refusal says it needs."""

    LABEL = "label", _("labeling (labels, edits, undo, skips, next item)")
    SCREEN = "screen", _("screening")
    DISCUSS = "discuss", _("the discussion")
    PROPOSE = "propose", _("category proposals")
    SCREEN_DECIDE = "screen_decide", _("settling screening disputes")
    RESOLVE = "resolve", _("resolving and re-opening items")
    PROPOSAL_SETTLE = "proposal_settle", _("adding proposed categories and sending items back")
    PILOT = "pilot", _("the pilot")
    CURATE = "curate", _("curating the project's own categories")
    ITEMS_FROM_SOURCE = "items_from_source", _("adding a source's issues")
    ITEMS_IMPORT = "items_import", _("importing items")
    LABELS_IMPORT = "labels_import", _("importing label files")
    PACKAGE_IMPORT = "package_import", _("importing a replication package")
    SETTINGS = "settings", _("changing the settings")
    MEMBERS = "members", _("managing members and invitations")
    ARCHIVE = "archive", _("archiving and restoring")
    EXPORT = "export", _("exporting")
    INTERVIEWS = "interviews", _("importing interviews and mapping their codes")
    DUPLICATES = "duplicates", _("the near-duplicate index and its pairs")
    CODE = "code", _("coding interview transcripts")


@dataclass(frozen=True)
class Policy:
    least: str  # a Role
    while_archived: bool = False  # the few writes an archived project still takes


POLICIES: dict[Write, Policy] = {
    Write.LABEL: Policy(Role.VOLUNTEER),
    Write.SCREEN: Policy(Role.VOLUNTEER),
    Write.DISCUSS: Policy(Role.VOLUNTEER),
    Write.PROPOSE: Policy(Role.VOLUNTEER),
    Write.SCREEN_DECIDE: Policy(Role.LEAD),
    Write.RESOLVE: Policy(Role.LEAD),
    Write.PROPOSAL_SETTLE: Policy(Role.LEAD),
    Write.PILOT: Policy(Role.LEAD),
    Write.CURATE: Policy(Role.LEAD),
    Write.ITEMS_FROM_SOURCE: Policy(Role.LEAD),
    Write.ITEMS_IMPORT: Policy(Role.ADMIN),
    Write.LABELS_IMPORT: Policy(Role.ADMIN),
    Write.PACKAGE_IMPORT: Policy(Role.ADMIN),
    Write.SETTINGS: Policy(Role.ADMIN),
    Write.MEMBERS: Policy(Role.ADMIN),
    Write.ARCHIVE: Policy(Role.ADMIN, while_archived=True),
    Write.EXPORT: Policy(Role.ADMIN, while_archived=True),
    Write.INTERVIEWS: Policy(Role.LEAD),
    Write.DUPLICATES: Policy(Role.LEAD),
    Write.CODE: Policy(Role.VOLUNTEER),
}


class _Operator:
    """Whoever runs a management command or a job with no person behind it: they hold the shell,
    so no project role is asked of them; the project's state is."""

    pk = None
    is_authenticated = True
    is_staff = True
    is_superuser = True

    def __repr__(self) -> str:
        return "OPERATOR"


OPERATOR = _Operator()


class WriteRefused(Conflict):
    """The gate's refusal: the project's state forbids the write now (409)."""


class WriteForbidden(WriteRefused, PermissionDenied):
    """The gate's refusal: the actor may not make this write (403). Also Django's
    PermissionDenied, which pages and the API already answer with 403."""

    http_status = status.HTTP_403_FORBIDDEN


# The labeling rule names the same state in the same words (eligibility.Refusal.ARCHIVED).
ARCHIVED = _("This project is archived: it is read only.")


def write_refusal(actor, project: Project, write: Write) -> WriteRefused | None:
    """Why `actor` may not make `write` in `project` now, or None. `actor` is a user, or
    OPERATOR for commands and jobs. A project from access_project answers the role from its
    annotation, so the gate costs no query on a request's path."""
    policy = POLICIES[write]
    if actor is not OPERATOR:
        role = user_role(actor, project) if actor is not None else None
        if role is None:
            return WriteForbidden(
                gettext("Only members of %(project)s may do this.") % {"project": project},
            )
        if not role_reaches(role, policy.least):
            return WriteForbidden(
                gettext("%(write)s needs the %(role)s role in %(project)s.")
                % {
                    "write": str(write.label).capitalize(),
                    "role": Role(policy.least).label.lower(),
                    "project": project,
                },
            )
    if project.is_archived and not policy.while_archived:
        return WriteRefused(str(ARCHIVED))
    return None


def gate(actor, project: Project, write: Write) -> None:
    """Raise the refusal if `actor` may not make `write` in `project` now (write_refusal)."""
    refusal = write_refusal(actor, project, write)
    if refusal is not None:
        raise refusal


def may_write(actor, project: Project, write: Write) -> bool:
    """For pages: whether to offer the write at all."""
    return write_refusal(actor, project, write) is None


def node_owner(node: Node) -> Project | None:
    """The project that added `node` through a proposal (it alone curates it), or None for a node
    of the taxonomy as loaded, which projects share."""
    owned = ProjectNode.objects.select_related("project").filter(node=node).first()
    return owned.project if owned is not None else None


def nodes_editable(actor, taxonomy: Taxonomy) -> set[int]:
    """The ids of `taxonomy`'s nodes `actor` may edit or retire: gate_node's rule for a whole
    tree at once (one query, plus one per project with nodes of its own), so a page offers an
    edit link only where following it is allowed."""
    nodes = taxonomy.nodes.values_list("pk", flat=True)
    if actor.is_authenticated and (actor.is_staff or actor.is_superuser):
        return set(nodes)
    owned: dict[Project, set[int]] = {}
    for row in ProjectNode.objects.filter(node__taxonomy=taxonomy).select_related("project"):
        owned.setdefault(row.project, set()).add(row.node_id)
    return {
        node
        for project, ids in owned.items()
        if write_refusal(actor, project, Write.CURATE) is None
        for node in ids
    }


def gate_node(actor, node: Node) -> Project | None:
    """May `actor` edit or retire `node`? Returns the project that owns it (None: shared). A
    project's own node: its leads (and site staff), while the project is not archived. A shared
    node: site staff only (or a new taxonomy version), since a change would reach every project
    that labels with it."""
    staff = actor is OPERATOR or (actor.is_authenticated and (actor.is_staff or actor.is_superuser))
    owner = node_owner(node)
    if owner is not None:
        refusal = write_refusal(OPERATOR if staff else actor, owner, Write.CURATE)
        if isinstance(refusal, WriteForbidden) and user_role(actor, owner) is None:
            # to someone outside the project, nothing of it: not even its name
            refusal = WriteForbidden(
                gettext("%(code)s is another project's category: only its leads change it.")
                % {"code": node.code}
            )
        if refusal is not None:
            raise refusal
        return owner
    if not staff:
        raise WriteForbidden(
            gettext(
                "%(code)s is shared by every project using %(taxonomy)s: it changes through a "
                "new taxonomy version or by site staff."
            )
            % {"code": node.code, "taxonomy": node.taxonomy},
        )
    return None
