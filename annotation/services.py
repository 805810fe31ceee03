"""Writes in the annotation app."""

from __future__ import annotations

from collections.abc import Sequence

from django.db.models import Case, Count, Exists, F, IntegerField, OuterRef, Subquery, Value, When
from django.db.models.functions import Coalesce
from django.db.models.lookups import GreaterThan, GreaterThanOrEqual

from annotation.models import Annotation, Project, Resolution, Stage

CHUNK = 2000  # ids per UPDATE ... WHERE id IN (...), well under SQLite's variable limit


def item_stage(*, label_count: int, resolved: bool, overlap_k: int, stage: str) -> str:
    """The stage items_recount gives an item (the same rule in Python, for new items)."""
    if resolved:
        return Stage.FINAL
    if label_count >= overlap_k:
        return Stage.DISPUTED
    if label_count > 0:
        return Stage.LABELING
    return stage


def items_recount(*, project: Project, item_ids: Sequence[int]) -> None:
    """Set label_count from the annotations, and the stage of labelled items from their state:
    resolved -> final; k labels or more -> disputed (waiting for the lead); fewer -> labeling.

    One UPDATE per chunk, and it writes only the items whose count or stage changes (so a
    re-import writes nothing)."""
    label_count = Coalesce(
        Subquery(
            Annotation.objects.filter(item=OuterRef("pk"))
            .values("item")
            .annotate(n=Count("pk"))
            .values("n")[:1],
            output_field=IntegerField(),
        ),
        Value(0),
    )
    resolved = Exists(Resolution.objects.filter(item=OuterRef("pk")))
    stage = Case(  # item_stage() in SQL; unresolved and unlabelled: the stage stays as it is
        When(resolved, then=Value(Stage.FINAL)),
        When(GreaterThanOrEqual(label_count, project.overlap_k), then=Value(Stage.DISPUTED)),
        When(GreaterThan(label_count, 0), then=Value(Stage.LABELING)),
        default=F("stage"),
    )
    for start in range(0, len(item_ids), CHUNK):
        chunk = project.items.filter(pk__in=item_ids[start : start + CHUNK])
        changed = chunk.alias(new_count=label_count, new_stage=stage).exclude(
            label_count=F("new_count"), stage=F("new_stage")
        )
        changed.update(label_count=label_count, stage=stage)
