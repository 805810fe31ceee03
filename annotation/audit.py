"""The audit trail: one append-only row per change, written in the same transaction as it."""

from __future__ import annotations

from annotation.models import Action, AuditEvent, Item, Project
from concord.prepared import saved


def audit_record(
    *,
    project: Project,
    action: Action,
    actor=None,
    item: Item | None = None,
    before: dict | None = None,
    after: dict | None = None,
) -> AuditEvent:
    """Record that `actor` (None: Concord itself) did `action`, `before` -> `after` as plain
    JSON-able values (node codes, not ids, so the trail reads well after the taxonomy grows)."""
    event = AuditEvent(
        project=project,
        item=item,
        # the operator of a command (gate.OPERATOR) is no account: recorded as Concord's step
        actor=actor if actor is not None and actor.is_authenticated and actor.pk else None,
        action=action,
        before=before,
        after=after,
    )
    saved(event)  # every label writes one: its INSERT written once
    return event
