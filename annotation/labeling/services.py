"""Labels: a volunteer submits or edits their label on an item (what they may see of items is in
annotation.labeling.selectors)."""

from __future__ import annotations

from datetime import datetime

from django.db import connection, transaction
from django.db.models import QuerySet
from django.utils import timezone
from django.utils.translation import gettext as _

from annotation.access import no_such_item
from annotation.audit import audit_record
from annotation.figures.tallies import figures_kept
from annotation.gate import Write, gate
from annotation.labeling.eligibility import (
    edit_refusal,
    labeling_refusal,
    labeling_refused,
)
from annotation.labeling.selectors import own_annotation
from annotation.lifecycle import item_settle
from annotation.models import Action, Annotation, Item, PilotStatus, Project, Reservation
from annotation.project_nodes import node_is_foreign, with_foreign_flag
from concord.db import Lock, xact_lock
from concord.errors import ConcordError, Conflict
from concord.prepared import PreparedQuery, saved
from taxonomy.models import Level, Node

SUMMARY_MAX = 500


def _usable_node(taxonomy: int, code: str, project: int) -> QuerySet[Node]:
    nodes = Node.objects.filter(taxonomy_id=taxonomy, code=code)  # (taxonomy, code) is unique
    return with_foreign_flag(nodes, Project(pk=project, taxonomy_id=taxonomy))


# The statements of every submit, compiled once (issue #16).
_NODE = PreparedQuery(_usable_node)
_LOCKED_ITEM = PreparedQuery(
    lambda item, project: Item.objects.select_for_update(of=("self",))
    .select_related("project", "issue")
    .filter(pk=item, project_id=project)
)


def label_node(*, project: Project, code: str) -> Node:
    """The node `code` of the project's taxonomy, if a label may go there (see node_check)."""
    code = (code or "").strip()
    if not code:
        raise ConcordError(_("Choose a category."))
    # with its foreign flag, so node_check needs no query
    node = _NODE.first(taxonomy=project.taxonomy_id, code=code, project=project.pk)
    if node is None:
        raise ConcordError(
            _("%(code)s is not a category of the taxonomy %(taxonomy)s.")
            % {"code": code, "taxonomy": project.taxonomy}
        )
    node_check(project=project, node=node)
    return node


def node_check(*, project: Project, node: Node) -> None:
    """A label is a node the project may use (annotation.project_nodes: of its taxonomy, not
    added by another project), at exactly the project's depth, not retired."""
    if node.taxonomy_id != project.taxonomy_id:
        raise ConcordError(
            _("%(code)s belongs to another taxonomy than %(taxonomy)s.")
            % {"code": node.code, "taxonomy": project.taxonomy}
        )
    if node_is_foreign(project, node):
        raise ConcordError(
            _(
                "%(code)s is not a category of %(project)s: another project added it to the "
                "shared taxonomy %(taxonomy)s."
            )
            % {"code": node.code, "project": project, "taxonomy": project.taxonomy}
        )
    if node.level != project.label_depth:
        raise ConcordError(
            _("%(code)s is a %(level)s; this project labels at %(depth)s depth.")
            % {
                "code": node.code,
                "level": Level(node.level).label.lower(),
                "depth": Level(project.label_depth).label.lower(),
            }
        )
    if node.retired_at is not None:
        raise ConcordError(
            _("%(code)s %(name)s was retired on %(date)s; choose a current category.")
            % {"code": node.code, "name": node.name, "date": f"{node.retired_at:%Y-%m-%d}"}
        )


def summary_check(*, project: Project, summary: str) -> None:
    """The project's summary setting, for new labels and edits alike (the page asks for a
    summary too, but only the server's answer counts: an API client sends what it likes)."""
    if project.summary_required and not summary:
        raise ConcordError(
            _("Write a one-line summary: this project requires one with every label.")
        )


def _stale(annotation: Annotation) -> Conflict:
    when = timezone.localtime(annotation.updated_at).strftime("%H:%M")
    return Conflict(
        _("This label was changed in another tab or by a retry at %(when)s; reload to see it.")
        % {"when": when}
    )


def annotation_submit(
    *,
    item: Item,
    volunteer,
    node: Node,
    summary: str,
    version: int | None = None,
) -> tuple[Annotation, bool]:
    """Store `volunteer`'s label on `item`, or edit it. Returns (annotation, created).

    Idempotent: the same node and summary again (double click, retry, a second tab) returns the
    stored annotation and changes nothing. A different label on an item already labeled is an
    edit, which needs the `version` the form was built from: a stale one is a Conflict, never a
    silent overwrite. The item row is locked for the whole transaction, so two submits for the
    same item (by anyone) run one after the other and label_count never passes k.

    `item` may be a reference (project_item_ref): it is loaded here, with the lock."""
    gate(volunteer, item.project, Write.LABEL)
    summary = " ".join((summary or "").split())
    if len(summary) > SUMMARY_MAX:
        raise ConcordError(
            _("The summary is %(n)d characters; keep it to %(max)d.")
            % {"n": len(summary), "max": SUMMARY_MAX}
        )
    with transaction.atomic():
        # The project's rule inputs, shared with every other submit: a settings change of k,
        # depth or quota waits for this submit to commit, and it for the change, so the project
        # read with the item below is the one the rule decides by (concord.db.xact_lock).
        xact_lock(Lock.RULE, item.project_id, shared=True)
        # Lock the item row only (`of`): locking the joined project row too would make every
        # submit in the project wait for the one before it to commit.
        item = _LOCKED_ITEM.first(item=item.pk, project=item.project_id)
        if item is None:
            raise no_such_item()
        project = item.project
        if project.quota_per_volunteer is not None:
            # the rule counts the volunteer's labels: their other submits wait till this commits
            xact_lock(Lock.QUOTA, project.pk, volunteer.pk)
        node_check(project=project, node=node)
        # The rule first: when it lets the volunteer give a new label (most submits) they have
        # none on the item, and looking for it would be a statement in vain under the lock.
        now = timezone.now()
        refusal = labeling_refusal(item=item, volunteer=volunteer, now=now)
        if refusal is None:
            # the agreement figures follow the writes only: a refused or repeated submit
            # (below) writes nothing and reads nothing more
            with figures_kept(item):
                created = _annotation_create(
                    item=item, volunteer=volunteer, node=node, summary=summary, now=now
                )
            return created, True
        mine = own_annotation(item=item, volunteer=volunteer)
        if mine is None:
            raise labeling_refused(refusal, item, volunteer)
        mine.item = item
        if mine.node_id == node.pk and mine.summary == summary:
            return mine, False
        with figures_kept(item):
            edited = _annotation_edit(
                item=item, annotation=mine, node=node, summary=summary, version=version
            )
        return edited, False


def _annotation_create(*, item: Item, volunteer, node: Node, summary: str, now) -> Annotation:
    """A new label, which the one rule (annotation.labeling.eligibility) let `volunteer` give."""
    project = item.project
    summary_check(project=project, summary=summary)  # after the rule: no summary asked in vain
    held_since = reservation_end(item=item, volunteer=volunteer)
    seconds = None if held_since is None else max(0, int((now - held_since).total_seconds()))
    annotation = Annotation(
        item=item,
        volunteer=volunteer,
        node=node,
        summary=summary,
        seconds_spent=seconds,
        # during a pilot the rule lets only the lead label, and only pilot items
        is_pilot=project.pilot_status == PilotStatus.RUNNING,
    )
    saved(annotation)
    item.label_count += 1
    item_settle(
        item=item,
        action=Action.LABEL,
        actor=volunteer,
        details={"node": node.code, "summary": summary},
        save=("label_count",),
    )
    return annotation


def reservation_end(*, item: Item, volunteer) -> datetime | None:
    """Delete `volunteer`'s reservation on `item` (their label fills the slot it held); when it
    was made, or None if they held none. One statement."""
    if connection.vendor != "postgresql":  # SQLite's RETURNING would give the time as text
        mine = Reservation.objects.filter(item=item, volunteer=volunteer)
        held = mine.first()
        mine.delete()
        return held.created_at if held else None
    with connection.cursor() as cursor:
        cursor.execute(
            "DELETE FROM annotation_reservation WHERE item_id = %s AND volunteer_id = %s "
            "RETURNING created_at",
            [item.pk, volunteer.pk],
        )
        row = cursor.fetchone()
    return row[0] if row else None


def _annotation_edit(
    *, item: Item, annotation: Annotation, node: Node, summary: str, version: int | None
) -> Annotation:
    refusal = edit_refusal(item)
    if refusal is not None:
        raise Conflict(refusal)
    if version is None or int(version) != annotation.version:
        raise _stale(annotation)
    summary_check(project=item.project, summary=summary)
    before = {"node": annotation.node.code, "summary": annotation.summary}
    annotation.node = node
    annotation.summary = summary
    annotation.version += 1
    annotation.save(update_fields=["node", "summary", "version", "updated_at"])
    audit_record(
        project=item.project,
        item=item,
        actor=annotation.volunteer,
        action=Action.EDIT,
        before=before,
        after={"node": node.code, "summary": summary},
    )
    return annotation
