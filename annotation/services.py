"""Writes in the annotation app."""

from __future__ import annotations

from collections.abc import Sequence

from django.db.models import Count, Exists, IntegerField, OuterRef, Subquery, Value
from django.db.models.functions import Coalesce

from annotation.models import Annotation, Project, Resolution, Stage

CHUNK = 2000  # ids per UPDATE ... WHERE id IN (...), well under SQLite's variable limit


def items_recount(*, project: Project, item_ids: Sequence[int]) -> None:
    """Set label_count from the annotations, and the stage of labelled items from their state:
    resolved -> final; k labels or more -> disputed (waiting for the lead); fewer -> labeling."""
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
    for start in range(0, len(item_ids), CHUNK):
        chunk = project.items.filter(pk__in=item_ids[start : start + CHUNK])
        chunk.update(label_count=label_count)
        chunk.alias(resolved=resolved).filter(resolved=True).update(stage=Stage.FINAL)
        unresolved = chunk.alias(resolved=resolved).filter(resolved=False, label_count__gt=0)
        unresolved.filter(label_count__gte=project.overlap_k).update(stage=Stage.DISPUTED)
        unresolved.filter(label_count__lt=project.overlap_k).update(stage=Stage.LABELING)

