"""An item's stage: the one rule that derives it, the table of allowed moves, and the one gateway
that changes it.

```
candidate ──screening──> open | excluded | screening_dispute ──lead──> open | excluded
open ──first label──> labeling ──k-th label──> final (unanimous) | disputed ──lead──> final
final ──re-open──> disputed (labeling below k);   any labeled stage ──proposal send-back──> open
```

Every path that changes a stage (live labels, import, screening, pilot, send-back, resolve,
re-open) calls `item_move` for one item or `items_move` for many: both check TRANSITIONS and write
the audit row in the caller's transaction, so the lead's stale-form check (review.services
item_version, built from audit ids) sees every change. A move back (BACK_MOVES: re-open,
send-back, an import) also ends the item's part in a pilot, in the same transaction: it is no
worked example any more, and the lead's pilot label on it is a label like any other. Where labels
or a resolution changed, the caller asks `item_outcome` for the stage the rows give, so live
labeling and import cannot drift apart; where the project's k changed, `items_settle` asks it for
every item the change completes.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from django.db.models import Exists, OuterRef, QuerySet

from annotation.audit import audit_record
from annotation.models import Action, Annotation, AuditEvent, Item, Method, Resolution, Stage
from concord.errors import Conflict
from concord.prepared import PreparedQuery, saved
from ingest.services import insert_rows

# Stages an item without labels can be in; which one is the screening's business.
UNLABELED_STAGES = (Stage.CANDIDATE, Stage.SCREENING_DISPUTE, Stage.EXCLUDED, Stage.OPEN)

TRANSITIONS: dict[str, frozenset[str]] = {
    Stage.CANDIDATE: frozenset(
        {
            Stage.OPEN,
            Stage.EXCLUDED,
            Stage.SCREENING_DISPUTE,
            Stage.LABELING,
            Stage.DISPUTED,
            Stage.FINAL,
        }  # labels imported for a candidate the study had already screened
    ),
    Stage.SCREENING_DISPUTE: frozenset(
        {Stage.OPEN, Stage.EXCLUDED, Stage.LABELING, Stage.DISPUTED, Stage.FINAL}
    ),
    Stage.EXCLUDED: frozenset({Stage.LABELING, Stage.DISPUTED, Stage.FINAL}),  # by import only
    Stage.OPEN: frozenset({Stage.LABELING, Stage.DISPUTED, Stage.FINAL}),
    Stage.LABELING: frozenset({Stage.DISPUTED, Stage.FINAL, Stage.OPEN}),
    Stage.DISPUTED: frozenset({Stage.FINAL, Stage.OPEN}),
    # re-opened: back to the lead, or to labeling when it has fewer than k labels (a pilot
    # example, an imported row with a Final_Label and missing labels)
    Stage.FINAL: frozenset({Stage.DISPUTED, Stage.LABELING, Stage.OPEN}),
}


# Moves back from a later stage to an earlier one. An item on its way back is blind again (or
# back before the lead): whatever it was in a pilot ends with the move, so that no worked example
# (review.pilot, which shows the lead's label on it to every member) is ever handed out to label,
# whichever path moves it. During a pilot its items only move forward (open -> labeling, and to
# final at pilot_close).
BACK_MOVES = frozenset(
    {
        (Stage.LABELING, Stage.OPEN),
        (Stage.DISPUTED, Stage.OPEN),
        (Stage.FINAL, Stage.OPEN),
        (Stage.FINAL, Stage.LABELING),
        (Stage.FINAL, Stage.DISPUTED),
    }
)


class InvalidTransition(Conflict):
    """A move the lifecycle does not allow (a bug in the caller, or a stale request)."""


def transition_check(before: str, after: str) -> None:
    if after not in TRANSITIONS.get(before, frozenset()):
        raise InvalidTransition(
            f"An item cannot go from {Stage(before).label.lower()} to {Stage(after).label.lower()}."
        )


@dataclass(frozen=True)
class Outcome:
    """What an item's rows make of it: its stage, the node of a unanimous resolution to create
    (when the k-th label agrees with the others), and the share of labels on the most common
    answer (orders the lead's queue; None below k)."""

    stage: str
    unanimous_node: int | None = None
    agreement: float | None = None


def item_outcome(*, stage: str, labels: Sequence[int], resolved: bool, k: int) -> Outcome:
    """The stage an item's stored rows give it: resolved -> final; k labels or more -> final
    through a unanimous resolution when every label agrees and the item only now reaches k,
    otherwise disputed (waiting for the lead); some labels -> labeling; none -> where screening
    left it (open if it had been labeled before a send-back).

    `labels` are node ids; `stage` is the item's stage before the change. An item the lead
    re-opened (disputed, k labels, no resolution) stays disputed even if its labels agree."""
    n = len(labels)
    if n >= k:
        agreement = max(Counter(labels).values()) / n
        if resolved:
            return Outcome(Stage.FINAL, agreement=agreement)
        if stage != Stage.DISPUTED and len(set(labels)) == 1:
            return Outcome(Stage.FINAL, unanimous_node=labels[0], agreement=agreement)
        return Outcome(Stage.DISPUTED, agreement=agreement)
    if resolved:
        return Outcome(Stage.FINAL)
    if n > 0:
        return Outcome(Stage.LABELING)
    return Outcome(stage if stage in UNLABELED_STAGES else Stage.OPEN)


def item_move(
    *,
    item: Item,
    to: str,
    action: Action,
    actor=None,
    before: dict | None = None,
    after: dict | None = None,
    save: Sequence[str] = (),
) -> AuditEvent:
    """Move `item` (its row locked by the caller, in the caller's transaction) to stage `to`,
    and record `action` with the stage change in one audit row. Raises InvalidTransition for a
    move TRANSITIONS does not allow. Saves the stage and the fields named in `save` (changed by
    the caller on the instance) in one UPDATE; any other change is the caller's to save. A move
    back (BACK_MOVES) takes the item out of the pilot in the same UPDATE (and its pilot labels,
    pilot_labels_end)."""
    transition_check(item.stage, to)
    was = item.stage
    item.stage = to
    fields = ["stage", *save]
    if (was, to) in BACK_MOVES:
        item.in_pilot = False
        if "in_pilot" not in fields:
            fields.append("in_pilot")
        pilot_labels_end(Item.objects.filter(pk=item.pk))
    saved(item, update_fields=fields)
    return audit_record(
        project=item.project,
        item=item,
        actor=actor,
        action=action,
        before={"stage": was, **(before or {})},
        after={"stage": to, **(after or {})},
    )


@dataclass(frozen=True)
class Move:
    item_id: int
    before: str
    after: str
    details: dict | None = None  # the action's own after-values for this item
    inserted: bool = False  # the caller inserted the item at `after`: record the move only


def items_move(*, project, moves: Iterable[Move], action: str, actor=None) -> int:
    """Bulk `item_move` (imports, pilot close): check every move, set each group of items'
    stage with one UPDATE per (before, after) pair, and write one audit row per item in one
    INSERT (COPY on PostgreSQL: an import moves tens of thousands of items). The caller holds
    the transaction. Returns how many items moved."""
    groups: dict[tuple[str, str], list[int]] = {}
    events = []
    actor_id = actor.pk if actor is not None and actor.is_authenticated else None
    for move in moves:
        if move.before == move.after:
            continue
        transition_check(move.before, move.after)
        if not move.inserted:
            groups.setdefault((move.before, move.after), []).append(move.item_id)
        details = {"stage": move.after, **(move.details or {})}
        events.append((project.pk, move.item_id, actor_id, action, {"stage": move.before}, details))
    for (was, to), ids in groups.items():
        back = (was, to) in BACK_MOVES
        for start in range(0, len(ids), CHUNK):
            chunk = ids[start : start + CHUNK]
            # `stage=was` makes a concurrent change a no-op instead of a silent overwrite
            moved = Item.objects.filter(pk__in=chunk, stage=was)
            if back:  # out of the pilot too (item_move)
                pilot_labels_end(moved)
                moved.update(stage=to, in_pilot=False)
            else:
                moved.update(stage=to)
    fields = ("project_id", "item_id", "actor_id", "action", "before", "after")
    insert_rows(AuditEvent, fields, events)
    return len(events)


def pilot_labels_end(items: QuerySet[Item]) -> None:
    """The lead's pilot labels on `items`, moving back (BACK_MOVES), become labels like any
    other: they stay on the item and count toward its k (its cross-check, and agreement, which
    leaves pilot labels out only while they are worked examples)."""
    Annotation.objects.filter(item__in=items, is_pilot=True).update(is_pilot=False)


# Every label settles its item: what it reads of the item, in one statement compiled once
# (issue #16): a row per label, (node id, resolved), or one (None, resolved) with no label.
_LABELS_AND_RESOLVED = PreparedQuery(
    lambda item: Item.objects.filter(pk=item).values_list(
        "annotations__node_id", Exists(Resolution.objects.filter(item_id=OuterRef("pk")))
    )
)
CHUNK = 2000  # ids per UPDATE ... WHERE id IN (...), well under SQLite's variable limit


def item_settle(
    *,
    item: Item,
    action: Action = Action.CROSS_CHECK,
    actor=None,
    details: dict | None = None,
    save: Sequence[str] = (),
) -> str:
    """Record `action` (which changed the labels of `item`, its row locked by the caller) and
    bring the item's stage in line with item_outcome, in one or two audit rows; the fields named
    in `save` (e.g. the label count the caller changed) go in the same UPDATE as the stage.

    Short of k labels the action's row carries the stage change, if any (open -> labeling). At
    the k-th label the cross-check follows in a row of its own, by Concord: a unanimous item
    gets its resolution (method unanimous) and goes final, any other goes to the lead as
    disputed, with its agreement kept for the queue's order. Returns the new stage."""
    rows = _LABELS_AND_RESOLVED.run(item=item.pk)
    labels = [node for node, _ in rows if node is not None]
    resolved = any(resolved for _, resolved in rows)
    outcome = item_outcome(
        stage=item.stage, labels=labels, resolved=resolved, k=item.project.overlap_k
    )
    agreement = outcome.agreement
    cross_check = agreement is not None and outcome.stage != item.stage
    if outcome.stage == item.stage or (cross_check and action != Action.CROSS_CHECK):
        audit_record(project=item.project, item=item, actor=actor, action=action, after=details)
    if outcome.stage == item.stage:
        if save:
            saved(item, update_fields=list(save))
        return item.stage
    if not cross_check or agreement is None:  # (agreement is set whenever cross_check is)
        item_move(item=item, to=outcome.stage, action=action, actor=actor, after=details, save=save)
        return item.stage
    if outcome.unanimous_node is not None:
        Resolution.objects.create(
            item=item, node_id=outcome.unanimous_node, method=Method.UNANIMOUS
        )
    item.agreement = agreement
    item_move(
        item=item,
        to=outcome.stage,
        action=Action.CROSS_CHECK,
        after={"agreement": round(agreement, 3)},
        save=(*save, "agreement"),
    )
    return item.stage


def items_settle(
    *, project, item_ids: Sequence[int], actor=None, details: dict | None = None
) -> int:
    """Bring items whose labels stayed but whose k changed (project_update) in line with
    item_outcome at the project's k, in bulk: each item (its row locked by the caller) that now
    has its k labels gets the cross-check item_settle gives the k-th label: unanimous -> final
    through a unanimous resolution, any other -> disputed with its agreement; one audit row per
    item (a cross-check, with `details`). Items with fewer labels stay where they are. The
    caller holds the transaction. Returns how many items moved."""
    k = project.overlap_k
    labels: dict[int, list[int]] = {pk: [] for pk in item_ids}
    stages: dict[int, str] = {}
    resolved: set[int] = set()
    for start in range(0, len(item_ids), CHUNK):
        chunk = item_ids[start : start + CHUNK]
        stages.update(Item.objects.filter(pk__in=chunk).values_list("pk", "stage"))
        rows = Annotation.objects.filter(item_id__in=chunk).values_list("item_id", "node_id")
        for item_id, node_id in rows:
            labels[item_id].append(node_id)
        resolved.update(
            Resolution.objects.filter(item_id__in=chunk).values_list("item_id", flat=True)
        )
    moves, unanimous, agreements = [], [], []
    for pk, stage in stages.items():
        outcome = item_outcome(stage=stage, labels=labels[pk], resolved=pk in resolved, k=k)
        if outcome.stage == stage or outcome.agreement is None:
            continue
        if outcome.unanimous_node is not None:
            unanimous.append((pk, outcome.unanimous_node, Method.UNANIMOUS))
        agreements.append(Item(pk=pk, agreement=outcome.agreement))
        after = {"agreement": round(outcome.agreement, 3), **(details or {})}
        moves.append(Move(pk, stage, outcome.stage, after))
    insert_rows(Resolution, ("item_id", "node_id", "method"), unanimous)
    Item.objects.bulk_update(agreements, ["agreement"], batch_size=CHUNK)
    return items_move(project=project, moves=moves, action=Action.CROSS_CHECK, actor=actor)


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
