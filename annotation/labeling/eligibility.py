"""May this volunteer label this item now? The one rule, written once as named conditions on items.

The claim ("next item") hands out the first item that meets every condition; every submit path
refuses an item that fails one, naming the first it fails; the volunteer's progress counts what
still waits for them and the empty state explains why nothing was handed out, from the same list.

The conditions, in the order a refusal names them:
- archived: nothing is labeled in an archived project (it is read only);
- pilot: while the lead runs a pilot only the lead labels, and only pilot items;
- quota: the volunteer has given fewer labels than the project's quota;
- labeled / skipped: not already labeled (an edit of one's own label is not a new label) or
  skipped by this volunteer;
- handed (submit only, when the project reserves items): the item was handed to this volunteer
  by "next item" (their reservation, even if it has since expired);
- full / closed: the item is short of k labels, and open for labeling;
- room: its labels plus other volunteers' live reservations are short of k, so a volunteer is
  never sent, and never fills, a slot held for someone else.

The order is the blindness rule's as much as the labeling rule's: what the volunteer did
themselves comes first, then whether the item was handed to them, and only then the item's own
state, so a label sent for an item never handed out is refused alike whatever its stage; and the
item's state is worded by annotation.blindness (labeling_refused).
"""

from __future__ import annotations

import secrets
from collections.abc import Callable
from dataclasses import dataclass, replace
from datetime import datetime
from functools import cached_property

from django.db import models
from django.db.models import (
    BooleanField,
    Count,
    Exists,
    ExpressionWrapper,
    F,
    OuterRef,
    Q,
    QuerySet,
    Subquery,
    Value,
)
from django.db.models.functions import Coalesce
from django.db.models.lookups import LessThan
from django.utils import timezone
from django.utils.translation import gettext_lazy as _
from rest_framework import status

from annotation.access import has_role, user_role
from annotation.blindness import BlindRefusal, refusal_seen
from annotation.gate import ARCHIVED as ARCHIVED_TEXT
from annotation.models import (
    LABELABLE_STAGES,
    SHUFFLE_KEYS,
    Annotation,
    Item,
    PilotStatus,
    Project,
    Reservation,
    Role,
    Skip,
    Stage,
)
from concord.errors import Conflict
from concord.prepared import PreparedQuery


class Refusal(models.TextChoices):
    """Why a volunteer may not label an item now; the label is what they are told."""

    ARCHIVED = "archived", ARCHIVED_TEXT
    PILOT_RUNNING = (
        "pilot_running",
        _("The lead is running a pilot; labeling opens when it closes."),
    )
    QUOTA_REACHED = (
        "quota_reached",
        _("You have reached this project's quota of labels — thank you!"),
    )
    FULL = "full", _("This item already has its {k} labels; ask for the next item.")
    CLOSED = "closed", BlindRefusal.CLOSED.label  # the same words whatever the stage
    LABELED = "labeled", _("You have labeled this item already.")
    SKIPPED = "skipped", _("You skipped this item, so it is no longer yours to label.")
    NOT_HANDED = (
        "not_handed",
        _("This item was not handed to you; ask for the next item to get one to label."),
    )
    NO_ROOM = (
        "no_room",
        _(
            "Your hold on this item expired and it is no longer yours to label; ask for the "
            "next item."
        ),
    )


# Refusals that say the item is not the volunteer's (403); the others are the state of the
# item or the project (409).
FORBIDDEN = (Refusal.QUOTA_REACHED, Refusal.NOT_HANDED, Refusal.SKIPPED)


class LabelingRefused(Conflict):
    """A label refused by the rule; 403 when the item is not the volunteer's, else 409."""

    def __init__(self, refusal: Refusal, project: Project) -> None:
        self.refusal = refusal
        if refusal in FORBIDDEN:
            self.http_status = status.HTTP_403_FORBIDDEN
        super().__init__(str(refusal.label).format(k=project.overlap_k))


# Refusals about the item's own labels or stage, not about what the volunteer did.
ABOUT_THE_ITEM = (Refusal.FULL, Refusal.CLOSED)


def labeling_refused(refusal: Refusal, item: Item, volunteer) -> LabelingRefused:
    """The refusal `volunteer` is given for `item` (in item.project): a refusal about the item's
    labels or stage in the blindness rule's words (blindness.refusal_seen), which name them only
    to whom may see its stage."""
    refused = LabelingRefused(refusal, item.project)
    if refusal in ABOUT_THE_ITEM:
        role = user_role(volunteer, item.project)
        refused.message = refusal_seen(
            item, item.project, role, refused.message, BlindRefusal.CLOSED
        )
    return refused


@dataclass(frozen=True)
class Condition:
    """Items that meet it: `rule()`, a Q on items, or every item (True) or none (False) when it
    depends on the volunteer and project alone.

    The Q is built only when asked for (`q`): it holds subqueries whose construction costs more
    than running the compiled statement, and the claim and every submit bind their values into
    a statement compiled once (rule_query), needing only to know which conditions apply."""

    refusal: Refusal
    rule: bool | Callable[[], Q]

    @property
    def per_item(self) -> bool:
        return callable(self.rule)

    @property
    def blocked(self) -> bool:
        """False for every item: nothing to label for this volunteer, whatever the item."""
        return self.rule is False

    @cached_property
    def q(self) -> Q | bool:
        return self.rule() if callable(self.rule) else self.rule


def is_editable(item: Item) -> bool:
    """Whether a volunteer may still change their own label on `item` (it is not complete)."""
    return item.stage in LABELABLE_STAGES


def edit_refusal(item: Item, role: str | None = None) -> str | None:
    """Why someone with `role` in item.project (None: as a volunteer) may not change their own
    label on `item` now, or None: the project is archived, or the item left labeling. The stage
    is named only to whom stage_seen shows it: disputed or final would tell a volunteer whether
    the others agreed where the project never reveals labels (BlindRefusal)."""
    if item.project.is_archived:
        return str(Refusal.ARCHIVED.label)
    if not is_editable(item):
        stage = Stage(item.stage).label.lower()
        precise = _("This item is already %(stage)s; its labels can no longer be changed.") % {
            "stage": stage
        }
        return refusal_seen(item, item.project, role, precise, BlindRefusal.LABEL_KEPT)
    return None


def labels_given(*, project: Project, volunteer) -> int:
    return Annotation.objects.filter(item__project=project, volunteer=volunteer).count()


@dataclass(frozen=True)
class Who:
    """What the rule needs to know of the volunteer and the project, besides the items' rows."""

    project_id: int
    volunteer_id: int
    k: int
    pilot: str  # "off"; "lead": only pilot items; "blocked": nothing while the pilot runs
    under_quota: bool | None  # None: the project has no quota
    reserving: bool  # the project hands items out with reservations
    archived: bool = False


def who_labels(*, project: Project, volunteer) -> Who:
    pilot = "off"
    if project.pilot_status == PilotStatus.RUNNING:
        pilot = "lead" if has_role(volunteer, project, Role.LEAD) else "blocked"
    under_quota = None
    if project.quota_per_volunteer is not None:
        under_quota = labels_given(project=project, volunteer=volunteer) < (
            project.quota_per_volunteer
        )
    return Who(
        project_id=project.pk,
        volunteer_id=volunteer.pk,
        k=project.overlap_k,
        pilot=pilot,
        under_quota=under_quota,
        reserving=project.reservation_minutes > 0,
        archived=project.is_archived,
    )


def labeling_conditions(
    *, project: Project, volunteer, now: datetime, handed: bool = False, room: bool = True
) -> list[Condition]:
    """The rule for `volunteer` at `now` (see conditions_for)."""
    who = who_labels(project=project, volunteer=volunteer)
    return conditions_for(who, now, handed=handed, room=room)


def conditions_for(
    who: Who, now: datetime, *, handed: bool = False, room: bool = True
) -> list[Condition]:
    """The rule's conditions in the order a refusal names them. `handed` adds the submit-only
    condition; `room=False` leaves out other volunteers' holds (what waits for me, held or
    not)."""
    mine = Q(item=OuterRef("pk"), volunteer_id=who.volunteer_id)
    conditions = []
    if who.archived:
        conditions.append(Condition(Refusal.ARCHIVED, False))
    if who.pilot != "off":
        pilot: bool | Callable[[], Q] = (lambda: Q(in_pilot=True)) if who.pilot == "lead" else False
        conditions.append(Condition(Refusal.PILOT_RUNNING, pilot))
    if who.under_quota is not None:
        conditions.append(Condition(Refusal.QUOTA_REACHED, who.under_quota))
    conditions += [
        Condition(Refusal.LABELED, lambda: ~Q(Exists(Annotation.objects.filter(mine)))),
        Condition(Refusal.SKIPPED, lambda: ~Q(Exists(Skip.objects.filter(mine)))),
    ]
    if handed and who.reserving:
        conditions.append(
            Condition(Refusal.NOT_HANDED, lambda: Q(Exists(Reservation.objects.filter(mine))))
        )
    conditions += [
        Condition(Refusal.FULL, lambda: Q(label_count__lt=who.k)),
        Condition(Refusal.CLOSED, lambda: Q(stage__in=LABELABLE_STAGES)),
    ]
    if room:
        conditions.append(Condition(Refusal.NO_ROOM, lambda: _room(who, now)))
    return conditions


def _room(who: Who, now: datetime) -> Q:
    held_by_others = (
        Reservation.objects.filter(item=OuterRef("pk"), expires_at__gt=now)
        .exclude(volunteer_id=who.volunteer_id)
        .values("item")
        .annotate(n=Count("pk"))
        .values("n")[:1]
    )
    held = Coalesce(Subquery(held_by_others, output_field=models.IntegerField()), Value(0))
    return Q(LessThan(F("label_count") + held, who.k))


def items_meeting(conditions: list[Condition], project_id: int) -> QuerySet[Item]:
    """The project's items that meet every condition."""
    if any(c.blocked for c in conditions):
        return Item.objects.none()
    return Item.objects.filter(project_id=project_id).filter(
        *(c.q for c in conditions if c.per_item)
    )


def item_refusal(
    who: Who,
    now: datetime,
    item_id: int,
    *,
    handed: bool = False,
    only: frozenset[Refusal] | None = None,
) -> Refusal | None:
    """The first condition the item fails (of `only`, if given), or None; one query."""
    checks = _checked(who, now, handed, only)
    blocked = next((c.refusal for c in checks if c.blocked), None)
    if blocked is not None:
        return blocked
    refusals = [c.refusal for c in checks if c.per_item]
    row = _check_query(who, now, item_id, handed, only).first()
    if row is None:
        return Refusal.CLOSED
    return next((refusal for refusal, ok in zip(refusals, row, strict=True) if not ok), None)


# The claim re-checks only other volunteers' holds once it has locked an item (claim_next).
ROOM = frozenset({Refusal.NO_ROOM})


def room_query(who: Who, now: datetime, item_id: int) -> BoundQuery:
    """Whether the item still has room for the volunteer (its labels plus other volunteers'
    live holds short of k): one row, one boolean, as item_refusal(..., only=ROOM) asks it."""
    return _check_query(who, now, item_id, False, ROOM)


def _checked(
    who: Who, now: datetime, handed: bool, only: frozenset[Refusal] | None
) -> list[Condition]:
    """The conditions a check asks: the rule's (with `handed`), those of `only` if given."""
    kept = conditions_for(who, now, handed=handed)
    return [c for c in kept if only is None or c.refusal in only]


def _check_query(
    who: Who, now: datetime, item_id: int, handed: bool, only: frozenset[Refusal] | None
) -> BoundQuery:
    """One boolean per checked condition (those that hold for every item left out)."""
    return rule_query(
        ("check", handed, only),
        lambda who, now, item_id, lost, start: _flags(_checked(who, now, handed, only), item_id),
        who=who,
        now=now,
        item_id=item_id,
    )


def _flags(conditions: list[Condition], item_id: int) -> QuerySet:
    """One boolean per condition for the item (those that hold for every item are left out)."""
    checks = [c.rule() for c in conditions if callable(c.rule)]
    names = [f"c{n}" for n in range(len(checks))]
    return (
        Item.objects.filter(pk=item_id)
        .annotate(
            **{
                name: ExpressionWrapper(q, output_field=BooleanField())
                for name, q in zip(names, checks, strict=True)
            }
        )
        .values_list(*names)
    )


def claim_query(who: Who, now: datetime, lost: list[int], start: int) -> BoundQuery:
    """The claim: lock the first item of the volunteer's queue from `start` on (not one in
    `lost`), skipping rows other claims hold; the item with its issue, or nothing."""

    def build(who: Who, now: datetime, item_id: int, lost: list[int], start: int) -> QuerySet:
        queue = labeling_queue(conditions_for(who, now), who.project_id, start)
        if lost:
            queue = queue.exclude(pk__in=lost)
        locked = queue.select_for_update(skip_locked=True, of=("self",))
        return locked.select_related("issue")[:1]

    return rule_query(("claim",), build, who=who, now=now, lost=lost, start=start)


def claim_start() -> int:
    """Where a claim starts reading the queue: a point drawn anew for every claim."""
    return secrets.randbelow(SHUFFLE_KEYS)


def from_point(start: int, pick_at: Callable[[int], Item | None]) -> Item | None:
    """`pick_at(start)`, the first item past the claim's random point, or, nothing being past
    it, `pick_at(0)`: the queue read round from the point (labels and screening alike)."""
    item = pick_at(start)
    return item if item is not None or start == 0 else pick_at(0)


def labeling_queue(conditions: list[Condition], project_id: int, start: int) -> QuerySet[Item]:
    """The items meeting the rule's `conditions` from `start` on, in the order of their random
    `shuffle` keys. Each claim starts at a point of its own (claim_start) and, finding nothing
    past it, from 0: the item handed out is a random one of those the volunteer may label, so
    neither which item comes nor the order of many claims tells anything of the items' label
    counts (an order by count, however shuffled within a count, gives counts away to a volunteer
    who walks it twice). An item's chance is the gap of random keys before it: its own draw,
    never its labels (not a uniform draw, which would mean sorting every item on each claim).
    The partial index item_claim gives that order, so the claim reads a few rows of the index
    instead of sorting."""
    items = items_meeting(conditions, project_id)
    return items.filter(shuffle__gte=start).order_by("shuffle", "pk")


# Django takes ~4 ms to compile the claim's query and ~2 ms the submit's check; PostgreSQL runs
# either in about a millisecond, and both run on every request. Their SQL depends only on the
# rule's shape (pilot, quota, reservations, how many items to pass over), not on whose or which
# item: each shape is a PreparedQuery, compiled once, into which each request binds its values.
_rule_queries: dict[tuple, PreparedQuery] = {}


@dataclass(frozen=True)
class BoundQuery:
    """A rule query with one request's values."""

    query: PreparedQuery
    values: dict[str, object]

    def run(self) -> list:
        return self.query.run(**self.values)

    def first(self):
        return self.query.first(**self.values)

    def statement(self) -> tuple[str, list]:
        return self.query.statement(**self.values)


def rule_query(
    shape: tuple,
    build: Callable[[Who, datetime, int, list[int], int], QuerySet],
    *,
    who: Who,
    now: datetime,
    item_id: int = 0,
    lost: list[int] | None = None,
    start: int = 0,
) -> BoundQuery:
    """`build(who, now, item_id, lost, start)` as a query compiled once per shape of the
    rule."""
    lost = lost or []
    key = (shape, who.pilot, who.under_quota, who.reserving, who.archived, len(lost))
    query = _rule_queries.get(key)
    if query is None:
        shape_of = who  # what the statement's shape depends on; the ids and k are bound

        def bound(project, volunteer, k, item, now, start, **passed):
            who = replace(shape_of, project_id=project, volunteer_id=volunteer, k=k)
            return build(who, now, item, list(passed.values()), start)

        # a shape may leave values out (no item in the claim, no time in some checks)
        query = _rule_queries.setdefault(key, PreparedQuery(bound, strict=False))
    values = {
        "project": who.project_id,
        "volunteer": who.volunteer_id,
        "k": who.k,
        "item": item_id,
        "now": now,
        "start": start,
        **{f"lost_{n}": item for n, item in enumerate(lost)},
    }
    return BoundQuery(query, values)


def labeling_refusal(*, item: Item, volunteer, now: datetime | None = None) -> Refusal | None:
    """Why `volunteer` may not give `item` (in item.project) a new label now, or None."""
    who = who_labels(project=item.project, volunteer=volunteer)
    return item_refusal(who, now or timezone.now(), item.pk, handed=True)


def labelable_for(*, project: Project, volunteer, now: datetime, room: bool = True):
    """Items `volunteer` may be handed now (room=False: also those others hold right now)."""
    return items_meeting(
        labeling_conditions(project=project, volunteer=volunteer, now=now, room=room), project.pk
    )
