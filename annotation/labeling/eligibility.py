"""May this volunteer label this item now? The one rule, written once as named conditions on items.

The claim ("next item") hands out the first item that meets every condition; every submit path
refuses an item that fails one, naming the first it fails; the volunteer's progress counts what
still waits for them and the empty state explains why nothing was handed out, from the same list.

The conditions, in the order a refusal names them:
- pilot: while the lead runs a pilot only the lead labels, and only pilot items;
- quota: the volunteer has given fewer labels than the project's quota;
- full / closed: the item is short of k labels, and open for labeling;
- labeled / skipped: not already labeled (an edit of one's own label is not a new label) or
  skipped by this volunteer;
- handed (submit only, when the project reserves items): the item was handed to this volunteer
  by "next item" (their reservation, even if it has since expired);
- room: its labels plus other volunteers' live reservations are short of k, so a volunteer is
  never sent, and never fills, a slot held for someone else.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

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
from rest_framework import status

from annotation.access import has_role
from annotation.models import (
    LABELABLE_STAGES,
    Annotation,
    Item,
    PilotStatus,
    Project,
    Reservation,
    Role,
    Skip,
)
from concord.errors import Conflict


class Refusal(models.TextChoices):
    """Why a volunteer may not label an item now; the label is what they are told."""

    PILOT_RUNNING = "pilot_running", "The lead is running a pilot; labeling opens when it closes."
    QUOTA_REACHED = (
        "quota_reached",
        "You have reached this project's quota of labels — thank you!",
    )
    FULL = "full", "This item already has its {k} labels; ask for the next item."
    CLOSED = "closed", "This item is not open for labeling; ask for the next item."
    LABELED = "labeled", "You have labeled this item already."
    SKIPPED = "skipped", "You skipped this item, so it is no longer yours to label."
    NOT_HANDED = (
        "not_handed",
        "This item was not handed to you; ask for the next item to get one to label.",
    )
    NO_ROOM = (
        "no_room",
        "Your hold on this item expired and its last labels are now held by other volunteers; "
        "ask for the next item.",
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
        super().__init__(refusal.label.format(k=project.overlap_k))


@dataclass(frozen=True)
class Condition:
    """Items that meet it: `q`, or every item (True) or none (False) when it depends on the
    volunteer and project alone."""

    refusal: Refusal
    q: Q | bool


def is_editable(item: Item) -> bool:
    """Whether a volunteer may still change their own label on `item` (it is not complete)."""
    return item.stage in LABELABLE_STAGES


def labels_given(*, project: Project, volunteer) -> int:
    return Annotation.objects.filter(item__project=project, volunteer=volunteer).count()


def labeling_conditions(
    *, project: Project, volunteer, now: datetime, handed: bool = False, room: bool = True
) -> list[Condition]:
    """The rule for `volunteer` at `now`. `handed` adds the submit-only condition; `room=False`
    leaves out other volunteers' holds (what waits for me, held or not)."""
    mine = Q(item=OuterRef("pk"), volunteer=volunteer)
    conditions = []
    if project.pilot_status == PilotStatus.RUNNING:
        lead = has_role(volunteer, project, Role.LEAD)
        conditions.append(Condition(Refusal.PILOT_RUNNING, Q(in_pilot=True) if lead else False))
    if project.quota_per_volunteer is not None:
        under = labels_given(project=project, volunteer=volunteer) < project.quota_per_volunteer
        conditions.append(Condition(Refusal.QUOTA_REACHED, under))
    conditions += [
        Condition(Refusal.FULL, Q(label_count__lt=project.overlap_k)),
        Condition(Refusal.CLOSED, Q(stage__in=LABELABLE_STAGES)),
        Condition(Refusal.LABELED, ~Q(Exists(Annotation.objects.filter(mine)))),
        Condition(Refusal.SKIPPED, ~Q(Exists(Skip.objects.filter(mine)))),
    ]
    if handed and project.reservation_minutes > 0:
        conditions.append(
            Condition(Refusal.NOT_HANDED, Q(Exists(Reservation.objects.filter(mine))))
        )
    if room:
        conditions.append(Condition(Refusal.NO_ROOM, _room(project, volunteer, now)))
    return conditions


def _room(project: Project, volunteer, now: datetime) -> Q:
    held_by_others = (
        Reservation.objects.filter(item=OuterRef("pk"), expires_at__gt=now)
        .exclude(volunteer=volunteer)
        .values("item")
        .annotate(n=Count("pk"))
        .values("n")[:1]
    )
    held = Coalesce(Subquery(held_by_others, output_field=models.IntegerField()), Value(0))
    return Q(LessThan(F("label_count") + held, project.overlap_k))


def items_meeting(conditions: list[Condition], project: Project) -> QuerySet[Item]:
    """The project's items that meet every condition."""
    if any(c.q is False for c in conditions):
        return Item.objects.none()
    return Item.objects.filter(project=project).filter(
        *(c.q for c in conditions if isinstance(c.q, Q))
    )


def first_refusal(conditions: list[Condition], item: Item) -> Refusal | None:
    """The first condition `item` fails, in one query (none when only the volunteer's own
    conditions fail)."""
    for c in conditions:
        if c.q is False:
            return c.refusal
    checks = [c for c in conditions if isinstance(c.q, Q)]
    names = [f"c{n}" for n in range(len(checks))]
    flags = (
        Item.objects.filter(pk=item.pk)
        .annotate(
            **{
                name: ExpressionWrapper(c.q, output_field=BooleanField())
                for name, c in zip(names, checks, strict=True)
            }
        )
        .values_list(*names)
    )
    row = flags.first()
    if row is None:
        return Refusal.CLOSED
    return next((c.refusal for c, ok in zip(checks, row, strict=True) if not ok), None)


def labeling_refusal(*, item: Item, volunteer, now: datetime | None = None) -> Refusal | None:
    """Why `volunteer` may not give `item` (in item.project) a new label now, or None."""
    conditions = labeling_conditions(
        project=item.project, volunteer=volunteer, now=now or timezone.now(), handed=True
    )
    return first_refusal(conditions, item)


def labelable_for(*, project: Project, volunteer, now: datetime, room: bool = True):
    """Items `volunteer` may be handed now (room=False: also those others hold right now)."""
    return items_meeting(
        labeling_conditions(project=project, volunteer=volunteer, now=now, room=room), project
    )
