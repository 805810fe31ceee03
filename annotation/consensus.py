"""From k blind labels to a final label: unanimous items finish by themselves, the rest wait for
the lead (annotation.lead holds what the lead does with them)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence

from annotation.audit import audit_record
from annotation.models import Action, Item, Method, Resolution, Stage


def resolution_method(labels: Sequence[int], final: int) -> str:
    """Unanimous if every label is the final one, majority if it is (one of) the most common,
    else a lead decision. Labels and final are node ids."""
    if labels and all(label == final for label in labels):
        return Method.UNANIMOUS
    counts = Counter(labels)
    top = max(counts.values(), default=0)
    return Method.MAJORITY if counts.get(final, 0) == top and top > 0 else Method.LEAD


def majority_suggestion(labels: Sequence[int]) -> int | None:
    """The node id with strictly the most votes; None on a tie or with no labels."""
    ranked = Counter(labels).most_common(2)
    if not ranked or (len(ranked) == 2 and ranked[0][1] == ranked[1][1]):
        return None
    return ranked[0][0]


def item_cross_check(*, item: Item) -> str:
    """Called in the transaction that gave `item` (locked by the caller) its k-th label.

    Unanimous at the project's depth -> final with method unanimous; otherwise -> disputed, with
    the share of the most common label kept on the item so the lead sees the worst first.
    Returns the new stage.
    """
    labels = list(item.annotations.values_list("node_id", flat=True))
    counts = Counter(labels)
    item.agreement = max(counts.values()) / len(labels)
    if len(counts) == 1:
        node_id = labels[0]
        Resolution.objects.create(item=item, node_id=node_id, method=Method.UNANIMOUS)
        item.stage = Stage.FINAL
    else:
        item.stage = Stage.DISPUTED
    item.save(update_fields=["stage", "agreement"])
    audit_record(
        project=item.project,
        item=item,
        action=Action.CROSS_CHECK,
        after={"stage": item.stage, "agreement": round(item.agreement, 3)},
    )
    return item.stage
