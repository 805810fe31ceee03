"""Handing items out: "next item" for a volunteer, skipping, and releasing a reservation.

The claim is one ordered `SELECT ... FOR UPDATE SKIP LOCKED LIMIT 1` in a transaction, followed by
an expiring Reservation row, so concurrent volunteers are sent different items and two are never
sent the same last slot. A reservation counts toward k until it expires (expired ones are ignored
by every query and deleted lazily), is submitted or skipped.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import timedelta

from django.db import models, transaction
from django.db.models import Count, Exists, F, OuterRef, Q, QuerySet, Subquery, Value
from django.db.models.functions import Coalesce
from django.utils import timezone

from annotation.access import ROLE_RANK, user_role
from annotation.audit import audit_record
from annotation.models import (
    LABELABLE_STAGES,
    Action,
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

# A claim that loses a race (see _claim) tries again, never more often than this.
CLAIM_ATTEMPTS = 5


class NoneReason(models.TextChoices):
    """Why "next item" handed out nothing; the label is what the page says."""

    NOTHING_LEFT = "nothing_left", "Nothing left to label — thank you!"
    QUOTA_REACHED = "quota_reached", "You have reached this project's quota of labels — thank you!"
    PILOT_RUNNING = "pilot_running", "The lead is running a pilot; labeling opens when it closes."
    ALL_RESERVED = (
        "all_reserved",
        (
            "The items still waiting are handed out to other volunteers right now; "
            "try again in a few minutes."
        ),
    )
    NOTHING_TO_SCREEN = "nothing_to_screen", "Nothing left to screen — thank you!"
    SCREENING_OFF = "screening_off", "This project does not screen candidates."
    ALL_RESERVED_SCREENING = (
        "all_reserved_screening",
        (
            "The candidates still waiting are being screened by other volunteers right now; "
            "try again in a few minutes."
        ),
    )


@dataclass(frozen=True)
class Claim:
    """An item handed out (a live reservation for the volunteer), or why there is none."""

    item: Item | None
    reason: NoneReason | None = None
    expires_at: object = None

    @property
    def message(self) -> str:
        return self.reason.label if self.reason else ""


def is_lead(user, project: Project) -> bool:
    role = user_role(user, project)
    return role is not None and ROLE_RANK[Role(role)] >= ROLE_RANK[Role.LEAD]


def live_reservations(*, now=None) -> QuerySet[Reservation]:
    return Reservation.objects.filter(expires_at__gt=now or timezone.now())


def labels_given(*, project: Project, volunteer) -> int:
    return Annotation.objects.filter(item__project=project, volunteer=volunteer).count()


def _labelable(*, project: Project, volunteer, now) -> QuerySet[Item]:
    """Items `volunteer` may be handed now, in the order they are handed out.

    Served by the partial index `item_labelable` (project, label_count, id) WHERE stage is open
    or labeling: the scan stops at the first row that passes the per-row checks below."""
    items = Item.objects.filter(project=project, stage__in=LABELABLE_STAGES)
    if project.pilot_status == PilotStatus.RUNNING:
        items = items.filter(in_pilot=True)  # only the lead gets here while the pilot runs
    mine = Q(volunteer=volunteer, item=OuterRef("pk"))
    others = Reservation.objects.filter(item=OuterRef("pk"), expires_at__gt=now).exclude(
        volunteer=volunteer
    )
    return (
        items.filter(label_count__lt=project.overlap_k)
        .exclude(Exists(Annotation.objects.filter(mine)))
        .exclude(Exists(Skip.objects.filter(mine)))
        .alias(
            reserved=Coalesce(
                Subquery(
                    others.values("item").annotate(n=Count("pk")).values("n")[:1],
                    output_field=models.IntegerField(),
                ),
                Value(0),
            )
        )
        .filter(label_count__lt=project.overlap_k - F("reserved"))
        .order_by("label_count", "pk")
    )


def _held(*, project: Project, volunteer, now, stages) -> Reservation | None:
    """The volunteer's live reservation on an item of `project` still in `stages` (resume)."""
    return (
        Reservation.objects.filter(
            volunteer=volunteer,
            expires_at__gt=now,
            item__project=project,
            item__stage__in=stages,
        )
        .select_related("item__issue")
        .order_by("created_at")
        .first()
    )


def reservation_room(*, item: Item, volunteer, capacity: int, used: int, now) -> bool:
    """Whether `item` (locked by the caller) still has a slot for `volunteer`: `used` (labels or
    votes so far) plus other volunteers' live reservations below `capacity`. A fresh statement,
    so it sees reservations committed after the claim query started (see _claim)."""
    others = live_reservations(now=now).filter(item=item).exclude(volunteer=volunteer).count()
    return used + others < capacity


def claim_next(
    *,
    project: Project,
    volunteer,
    queue_of,
    room,
    now,
) -> Item | None:
    """Lock the first item of `queue_of(exclude_ids)` that still has room and reserve it.

    Under READ COMMITTED a claim query that started before a competing claim committed may still
    lock that item once the competitor's transaction ends (the item row itself did not change, so
    PostgreSQL does not re-check the row's conditions); `room` re-checks with a fresh statement,
    and the loop moves past such an item. It rarely runs more than once."""
    lost: list[int] = []
    for _ in range(CLAIM_ATTEMPTS):
        with transaction.atomic():
            queue = queue_of().exclude(pk__in=lost) if lost else queue_of()
            item = (
                queue.select_related("issue")
                .select_for_update(skip_locked=True, of=("self",))
                .first()
            )
            if item is None:
                return None
            if not room(item):
                lost.append(item.pk)
                continue
            Reservation.objects.update_or_create(
                item=item,
                volunteer=volunteer,
                defaults={
                    "expires_at": now + timedelta(minutes=project.reservation_minutes),
                    "created_at": now,
                },
            )
            return item
    return None


def next_item_claim(*, project: Project, volunteer) -> Claim:
    """The volunteer's item to label now: their live reservation if they hold one (a reload
    resumes it), else a newly reserved item, or the reason there is none."""
    now = timezone.now()
    # Lazily drop the volunteer's own expired reservations (no other row is touched, so
    # concurrent claims never contend on these deletes).
    Reservation.objects.filter(volunteer=volunteer, expires_at__lte=now).delete()
    if project.pilot_status == PilotStatus.RUNNING and not is_lead(volunteer, project):
        return Claim(None, NoneReason.PILOT_RUNNING)
    if project.quota_per_volunteer is not None and (
        labels_given(project=project, volunteer=volunteer) >= project.quota_per_volunteer
    ):
        return Claim(None, NoneReason.QUOTA_REACHED)
    held = _held(project=project, volunteer=volunteer, now=now, stages=LABELABLE_STAGES)
    if (
        held is not None
        and not Annotation.objects.filter(item_id=held.item_id, volunteer=volunteer).exists()
    ):
        return Claim(held.item, expires_at=held.expires_at)

    def room(item: Item) -> bool:
        return reservation_room(
            item=item,
            volunteer=volunteer,
            capacity=project.overlap_k,
            used=item.label_count,
            now=now,
        )

    item = claim_next(
        project=project,
        volunteer=volunteer,
        queue_of=lambda: _labelable(project=project, volunteer=volunteer, now=now),
        room=room,
        now=now,
    )
    if item is not None:
        return Claim(item, expires_at=now + timedelta(minutes=project.reservation_minutes))
    return Claim(None, _why_none(project=project, volunteer=volunteer, now=now))


def next_item(*, project: Project, volunteer) -> Item | None:
    """The item `volunteer` labels next (reserved for them), or None; see next_item_claim."""
    return next_item_claim(project=project, volunteer=volunteer).item


def _why_none(*, project: Project, volunteer, now) -> NoneReason:
    """Nothing could be claimed: is it all done (for this volunteer), or all held by others?"""
    waiting = Item.objects.filter(
        project=project, stage__in=LABELABLE_STAGES, label_count__lt=project.overlap_k
    )
    if project.pilot_status == PilotStatus.RUNNING:
        waiting = waiting.filter(in_pilot=True)
    mine = Q(volunteer=volunteer, item=OuterRef("pk"))
    waiting = waiting.exclude(Exists(Annotation.objects.filter(mine))).exclude(
        Exists(Skip.objects.filter(mine))
    )
    return NoneReason.ALL_RESERVED if waiting.exists() else NoneReason.NOTHING_LEFT


def release(*, item: Item, volunteer) -> int:
    """Give a reserved item back (its slot is free for others at once); returns rows deleted."""
    deleted, _ = Reservation.objects.filter(item=item, volunteer=volunteer).delete()
    return deleted


@transaction.atomic
def item_skip(*, item: Item, volunteer, reason: str = "") -> tuple[Skip, bool]:
    """`volunteer` passes on `item`: never sent it again, its reservation released. A repeat
    returns the first skip (created False) and records nothing."""
    reason = " ".join((reason or "").split())[:300]
    skip = Skip.objects.filter(item=item, volunteer=volunteer).first()
    if skip is not None:
        return skip, False
    if item.stage not in LABELABLE_STAGES:
        raise Conflict(
            f"This item is {Stage(item.stage).label.lower()}, not open for labeling; "
            "there is nothing to skip."
        )
    skip, created = Skip.objects.get_or_create(
        item=item, volunteer=volunteer, defaults={"reason": reason}
    )
    release(item=item, volunteer=volunteer)
    if created:
        audit_record(
            project=item.project,
            item=item,
            actor=volunteer,
            action=Action.SKIP,
            after={"reason": reason},
        )
    return skip, created
