"""Writes of the near-duplicate feature: a lead's "not a duplicate" (kept across rebuilds) and
its taking back; each asks the gate first and leaves an audit row."""

from __future__ import annotations

from django.db import transaction

from annotation.audit import audit_record
from annotation.gate import Write, gate
from annotation.models import Action, DuplicatePair, NotDuplicate, Project


@transaction.atomic
def pair_mark_not_duplicate(*, project: Project, actor, pair: DuplicatePair) -> NotDuplicate:
    """The lead says the pair's items are not duplicates: the pair leaves every list, now and
    after each rebuild. A repeat returns the first decision."""
    gate(actor, project, Write.DUPLICATES)
    decision, created = NotDuplicate.objects.get_or_create(
        project=project,
        item_a_id=pair.item_a_id,
        item_b_id=pair.item_b_id,
        defaults={"decided_by": actor if getattr(actor, "pk", None) else None},
    )
    if created:
        audit_record(
            project=project,
            action=Action.NOT_DUPLICATE,
            actor=actor,
            # the project's trail, not an item's: item histories reach more readers
            after={"items": [pair.item_a_id, pair.item_b_id], "similarity": pair.similarity},
        )
    return decision
