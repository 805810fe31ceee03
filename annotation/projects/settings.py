"""A project's settings, written from the pages, the API and `manage.py create_project` alike:
create (the creator becomes the project's admin), edit, archive and restore. Every change is one
audit row with the fields before and after."""

from __future__ import annotations

from typing import Any

from django.db import IntegrityError, transaction
from django.utils import timezone
from django.utils.translation import gettext as _

from annotation.audit import audit_record
from annotation.gate import Write, gate
from annotation.lifecycle import items_settle
from annotation.models import LABELABLE_STAGES, Action, Membership, Project, Role
from concord.db import Lock, xact_lock
from concord.errors import Conflict
from taxonomy.models import Level

# The fields an admin sets; pilot_status belongs to the lead's pilot page, archived_at to
# project_archive.
SETTINGS_FIELDS = (
    "name",
    "slug",
    "taxonomy",
    "overlap_k",
    "label_depth",
    "screening_enabled",
    "screening_votes",
    "screening_rule",
    "reservation_minutes",
    "quota_per_volunteer",
    "reveal_after_cross_check",
    "guidelines",
)


# What the labeling rule reads of the project on every submit (annotation.labeling.eligibility and
# node_check): a change waits for the submits in flight, and they for it.
RULE_FIELDS = frozenset(
    {"overlap_k", "label_depth", "taxonomy", "quota_per_volunteer", "reservation_minutes"}
)


def _plain(project: Project) -> dict[str, Any]:
    """The settings as JSON-able values for the audit row (the taxonomy by id)."""
    values = {f: getattr(project, f) for f in SETTINGS_FIELDS if f != "taxonomy"}
    return {**values, "taxonomy": project.taxonomy_id}


@transaction.atomic
def project_create(*, creator, **settings: Any) -> Project:
    """A new project with `settings` (keys of SETTINGS_FIELDS); `creator` becomes its admin."""
    unknown = set(settings) - set(SETTINGS_FIELDS)
    if unknown:
        raise ValueError(f"not project settings: {sorted(unknown)}")
    if Project.objects.filter(slug=settings.get("slug")).exists():
        raise Conflict(f"A project with the slug {settings.get('slug')!r} exists already.")
    try:
        with transaction.atomic():
            project = Project.objects.create(**settings)
    except IntegrityError as exc:  # a concurrent create took the slug
        raise Conflict(f"A project with the slug {settings.get('slug')!r} exists already.") from exc
    if creator is not None:
        Membership.objects.create(project=project, user=creator, role=Role.ADMIN)
    audit_record(project=project, action=Action.PROJECT, actor=creator, after=_plain(project))
    return project


@transaction.atomic
def project_update(*, project: Project, actor, **changes: Any) -> Project:
    """Change some settings; only the fields that differ are written and audited."""
    unknown = set(changes) - set(SETTINGS_FIELDS)
    if unknown:
        raise ValueError(f"not project settings: {sorted(unknown)}")
    gate(actor, project, Write.SETTINGS)
    # NO KEY: other writes' audit rows still pass their foreign-key check on this row, so a skip
    # or a resolve holding an item this change re-settles finishes instead of waiting for it.
    locked = Project.objects.select_for_update(no_key=True).get(pk=project.pk)
    before = _plain(locked)
    for field, value in changes.items():
        setattr(locked, field, value)
    after = _plain(locked)
    changed = [f for f in after if after[f] != before[f]]
    if not changed:
        return locked
    if RULE_FIELDS.intersection(changed):
        # wait for the submits in flight; later ones wait for this change (concord.db.xact_lock)
        xact_lock(Lock.RULE, locked.pk)
    labeled = bool({"taxonomy", "label_depth"}.intersection(changed)) and (
        locked.items.filter(annotations__isnull=False).exists()
    )
    if labeled and "taxonomy" in changed:
        raise Conflict(
            "The project has labels in its taxonomy; the taxonomy cannot change any more "
            "(retire or add categories instead)."
        )
    if labeled:
        raise Conflict(
            _(
                "The project has labels at %(depth)s depth; the depth cannot change any more "
                "(an item would mix labels of two depths)."
            )
            % {"depth": Level(before["label_depth"]).label.lower()}
        )
    if (
        "slug" in changed
        and Project.objects.filter(slug=locked.slug).exclude(pk=locked.pk).exists()
    ):
        raise Conflict(f"A project with the slug {locked.slug!r} exists already.")
    audit_record(
        project=locked,
        action=Action.PROJECT,
        actor=actor,
        before={f: before[f] for f in changed},
        after={f: after[f] for f in changed},
    )
    if "overlap_k" in changed:
        _settle_at_k(locked, actor=actor)
    locked.save(update_fields=changed)  # last: a new slug locks the row against other writes
    return locked


def _settle_at_k(project: Project, *, actor) -> None:
    """After k changed: the items still open or labeling that have their (new) k labels reach
    cross-check as if their last label had just been given (lifecycle.items_settle). A lower k
    completes them; a higher one finds none and leaves labeling items more slots. Disputed and
    final items stay: they were complete under the k they were labeled with."""
    complete = (
        project.items.select_for_update()
        .filter(stage__in=LABELABLE_STAGES, label_count__gte=project.overlap_k)
        .order_by("pk")
        .values_list("pk", flat=True)
    )
    items_settle(
        project=project,
        item_ids=list(complete),
        actor=actor,
        details={"overlap_k": project.overlap_k},
    )


@transaction.atomic
def project_archive(*, project: Project, actor, archived: bool) -> Project:
    """Archive (read only: the labeling rule hands out and takes nothing; exports still work) or
    restore. Doing what is already done changes nothing."""
    gate(actor, project, Write.ARCHIVE)
    locked = Project.objects.select_for_update().get(pk=project.pk)
    if locked.is_archived == archived:
        return locked
    before = {"archived": locked.is_archived}
    locked.archived_at = timezone.now() if archived else None
    locked.save(update_fields=["archived_at"])
    audit_record(
        project=locked,
        action=Action.PROJECT,
        actor=actor,
        before=before,
        after={"archived": archived},
    )
    return locked
