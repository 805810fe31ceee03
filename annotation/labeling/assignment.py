"""Handing items out: "next item" for a volunteer, skipping, and releasing a reservation.

The claim is one ordered `SELECT ... FOR UPDATE SKIP LOCKED LIMIT 1` in a transaction, followed by
an expiring Reservation row, so concurrent volunteers are sent different items and two are never
sent the same last slot. A reservation counts toward k until it expires (expired ones are ignored
by every query and deleted lazily), is submitted or skipped.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from functools import partial

from django.db import connection, models, transaction
from django.db.models import (
    BooleanField,
    Count,
    Exists,
    ExpressionWrapper,
    OuterRef,
    Q,
    QuerySet,
    Value,
    Window,
)
from django.utils import timezone
from django.utils.translation import gettext
from django.utils.translation import gettext_lazy as _

from annotation.access import user_role
from annotation.audit import audit_record
from annotation.blindness import BlindRefusal, refusal_seen
from annotation.gate import Write, gate
from annotation.labeling.eligibility import (
    LabelingRefused,
    Refusal,
    claim_query,
    claim_start,
    conditions_for,
    from_point,
    item_refusal,
    labelable_for,
    labeling_refused,
    room_query,
    who_labels,
)
from annotation.models import (
    LABELABLE_STAGES,
    Action,
    Annotation,
    Item,
    Project,
    Reservation,
    Skip,
    Stage,
)
from concord.errors import Conflict
from concord.prepared import PreparedQuery

# A claim that loses a race (see claim_next) tries again, never more often than this.
CLAIM_ATTEMPTS = 5


class NoneReason(models.TextChoices):
    """Why "next item" handed out nothing; the label is what the page says."""

    NOTHING_LEFT = "nothing_left", _("Nothing left to label — thank you!")
    QUOTA_REACHED = Refusal.QUOTA_REACHED.value, Refusal.QUOTA_REACHED.label
    ARCHIVED = Refusal.ARCHIVED.value, Refusal.ARCHIVED.label
    PILOT_RUNNING = Refusal.PILOT_RUNNING.value, Refusal.PILOT_RUNNING.label
    HOLDING = (
        "holding",
        _("You already hold the items your labeling page needs; label or skip one of them first."),
    )
    ALL_RESERVED = (
        "all_reserved",
        _(
            "The items still waiting are handed out to other volunteers right now; "
            "try again in a few minutes."
        ),
    )
    NOTHING_TO_SCREEN = "nothing_to_screen", _("Nothing left to screen — thank you!")
    SCREENING_OFF = "screening_off", _("This project does not screen candidates.")
    ALL_RESERVED_SCREENING = (
        "all_reserved_screening",
        _(
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
        return str(self.reason.label) if self.reason else ""


def live_reservations(*, now=None) -> QuerySet[Reservation]:
    return Reservation.objects.filter(expires_at__gt=now or timezone.now())


def lock_first(queue: QuerySet[Item], lost: list[int]) -> Item | None:
    """Lock and return the first item of `queue` not in `lost`, skipping rows others hold."""
    queue = queue.exclude(pk__in=lost) if lost else queue
    return queue.select_related("issue").select_for_update(skip_locked=True, of=("self",)).first()


# The most items a volunteer holds at once in a project: what the labeling page needs, the item
# on screen, the one it holds ready and one whose label is still on its way to the server. More
# would let one volunteer hoard a project's last slots, or walk the queue without labeling.
HOLD_MAX = 3


@dataclass(frozen=True)
class Held:
    """The volunteer's live reservations in a project, on items they have not labeled yet."""

    count: int
    resume: tuple[int, datetime] | None  # (item, expiry) of the oldest not in hand, if any

    @property
    def full(self) -> bool:
        """Holding all the volunteer may: nothing more is handed to them until a label lands."""
        return self.count >= HOLD_MAX


def _held_query(project: int, volunteer: int, now, stages: tuple[str, ...], **exclude: int):
    held = Reservation.objects.filter(
        volunteer_id=volunteer,
        expires_at__gt=now,
        item__project_id=project,
        item__stage__in=stages,
    )
    mine = Annotation.objects.filter(item=OuterRef("item"), volunteer_id=volunteer)
    in_hand = (
        ExpressionWrapper(Q(item_id__in=exclude.values()), output_field=BooleanField())
        if exclude
        else Value(False)
    )
    return (
        held.exclude(Exists(mine))
        .annotate(in_hand=in_hand, holding=Window(Count("pk")))
        .order_by("in_hand", "created_at", "pk")
        .values_list("item_id", "expires_at", "in_hand", "holding")[:1]
    )


# Compiled once per set of stages and count of excluded items (issue #16).
_held_queries: dict[tuple, PreparedQuery] = {}


def _held(*, project: Project, volunteer, now, stages, exclude: Sequence[int] = ()) -> Held:
    """How many live reservations the volunteer holds on items of `project` still in `stages`
    and not labeled by them, and the oldest of those not in `exclude` (to resume). One cheap
    statement: on most calls there is none."""
    stages = tuple(stages)
    key = (stages, len(exclude))
    query = _held_queries.get(key) or _held_queries.setdefault(
        key, PreparedQuery(partial(_held_query, stages=stages))
    )
    excluded = {f"exclude_{n}": item for n, item in enumerate(exclude)}
    row = query.first(project=project.pk, volunteer=volunteer.pk, now=now, **excluded)
    if row is None:
        return Held(0, None)
    item_id, expires_at, in_hand, holding = row
    return Held(holding, None if in_hand else (item_id, expires_at))


def reservation_room(*, item: Item, volunteer, capacity: int, used: int, now) -> bool:
    """Whether `item` (locked by the caller) still has a slot for `volunteer`: `used` (labels or
    votes so far) plus other volunteers' live reservations below `capacity`. A fresh statement,
    so it sees reservations committed after the claim query started (see _claim)."""
    others = live_reservations(now=now).filter(item=item).exclude(volunteer=volunteer).count()
    return used + others < capacity


def reserve(*, item: Item, volunteer, now, minutes: int) -> datetime:
    """Hold `item` for `volunteer` for `minutes` (the project's reservation time): insert, or
    renew their old one. Their other reservations that expired are dropped on the way (lazily:
    no other row is touched, so concurrent claims never contend on these deletes). Returns when
    the hold expires. One statement on PostgreSQL."""
    reserve_if_room(item=item, volunteer=volunteer, now=now, minutes=minutes, room=None)
    return now + timedelta(minutes=minutes)


def reserve_if_room(
    *, item: Item, volunteer, now, minutes: int, room: tuple[str, list] | None
) -> datetime | None:
    """reserve, if `room` (a statement answering one row with one boolean: whether the item
    still has room for the volunteer) says so; when the hold expires, or None. The room is
    checked and the hold made in one statement on PostgreSQL: a round trip of every claim less
    (issue #16). `room` None: always."""
    expires_at = now + timedelta(minutes=minutes)
    if connection.vendor != "postgresql":  # no DELETE inside WITH
        if room is not None:
            with connection.cursor() as cursor:
                cursor.execute(*room)
                if not cursor.fetchone()[0]:
                    return None
        _expired_drop(volunteer=volunteer, now=now, keep=item.pk)
        Reservation.objects.bulk_create(
            [Reservation(item=item, volunteer=volunteer, created_at=now, expires_at=expires_at)],
            update_conflicts=True,
            unique_fields=["item", "volunteer"],
            update_fields=["created_at", "expires_at"],
        )
        return expires_at
    room_sql, room_params = room or ("SELECT true", [])
    with connection.cursor() as cursor:
        cursor.execute(
            "WITH expired AS (DELETE FROM annotation_reservation "  # noqa: S608 - room: the rule's SQL, compiled by the ORM
            "WHERE volunteer_id = %s AND expires_at <= %s AND item_id <> %s) "
            "INSERT INTO annotation_reservation (item_id, volunteer_id, created_at, expires_at) "
            f"SELECT %s, %s, %s, %s FROM ({room_sql}) AS room (ok) WHERE room.ok "
            "ON CONFLICT (item_id, volunteer_id) "
            "DO UPDATE SET created_at = EXCLUDED.created_at, expires_at = EXCLUDED.expires_at "
            "RETURNING expires_at",
            [volunteer.pk, now, item.pk, item.pk, volunteer.pk, now, expires_at, *room_params],
        )
        held = cursor.fetchone()
    return expires_at if held else None


def claim_next(
    *,
    pick: Callable[[list[int]], Item | None],
    hold: Callable[[Item], datetime | None],
    passed: Sequence[int] = (),
) -> tuple[Item, datetime] | None:
    """Lock an item with `pick(lost)` (the first of the volunteer's queue, not one in `lost`,
    skipping rows other claims hold) and reserve it with `hold(item)` if it still has room (its
    expiry, or None); the item and its expiry, or None.

    Under READ COMMITTED a claim query that started before a competing claim committed may still
    lock that item once the competitor's transaction ends (the item row itself did not change, so
    PostgreSQL does not re-check the row's conditions); `hold` re-checks the room with a fresh
    statement, and the loop moves past such an item. It rarely runs more than once. Items in
    `passed` are never picked (the page's current and prefetched items)."""
    lost: list[int] = list(passed)
    for _attempt in range(CLAIM_ATTEMPTS):
        with transaction.atomic():
            item = pick(lost)
            if item is None:
                return None
            expires_at = hold(item)
            if expires_at is None:
                lost.append(item.pk)
                continue
            return item, expires_at
    return None


def next_item_claim(*, project: Project, volunteer, exclude: Sequence[int] = ()) -> Claim:
    """The volunteer's item to label now: their live reservation if they hold one (a reload
    resumes it), else a newly reserved item, or the reason there is none.

    `exclude`: items the caller already has in hand (the labeling page's current item, and the
    ones whose labels are still on their way to the server); the claim hands out another, so
    the page can hold the next item ready while the volunteer reads the current one."""
    now = timezone.now()
    who = who_labels(project=project, volunteer=volunteer)
    blocked = next((c.refusal for c in conditions_for(who, now) if c.blocked), None)
    if blocked is not None:  # archived, the pilot or the quota: nothing for this volunteer
        return Claim(None, NoneReason(blocked.value))
    held = _held(
        project=project, volunteer=volunteer, now=now, stages=LABELABLE_STAGES, exclude=exclude
    )
    if held.resume is not None:
        item_id, expires_at = held.resume
        return Claim(Item.objects.select_related("issue").get(pk=item_id), expires_at=expires_at)
    if held.full:
        return Claim(None, NoneReason.HOLDING)
    start = claim_start()

    def pick(lost: list[int]) -> Item | None:
        return from_point(start, lambda at: claim_query(who, now, lost, at).first())

    def hold(item: Item) -> datetime | None:
        room = room_query(who, now, item.pk).statement()
        minutes = project.reservation_minutes
        return reserve_if_room(item=item, volunteer=volunteer, now=now, minutes=minutes, room=room)

    claimed = claim_next(pick=pick, hold=hold, passed=exclude)
    if claimed is not None:
        item, expires_at = claimed
        return Claim(item, expires_at=expires_at)
    # Nothing free: is anything still waiting for me, held by others right now?
    waiting = labelable_for(project=project, volunteer=volunteer, now=now, room=False)
    if exclude:
        waiting = waiting.exclude(pk__in=exclude)
    return Claim(None, NoneReason.ALL_RESERVED if waiting.exists() else NoneReason.NOTHING_LEFT)


def next_item(*, project: Project, volunteer) -> Item | None:
    """The item `volunteer` labels next (reserved for them), or None; see next_item_claim."""
    return next_item_claim(project=project, volunteer=volunteer).item


def _expired_drop(*, volunteer, now, keep: int) -> None:
    """The volunteer's reservations that expired, but the one on `keep`, deleted (see reserve)."""
    Reservation.objects.filter(volunteer=volunteer, expires_at__lte=now).exclude(
        item_id=keep
    ).delete()


def release(*, item: Item, volunteer) -> int:
    """Give a reserved item back (its slot is free for others at once); returns rows deleted."""
    deleted, _ = Reservation.objects.filter(item=item, volunteer=volunteer).delete()
    return deleted


# The one condition a skip asks of the labeling rule: the item was handed to the volunteer.
HANDED = frozenset({Refusal.NOT_HANDED})


@transaction.atomic
def item_skip(*, item: Item, volunteer, reason: str = "") -> tuple[Skip, bool]:
    """`volunteer` passes on `item`: never sent it again, its reservation released. A repeat
    returns the first skip (created False) and records nothing. Only an item handed to them
    (as a label needs), so trying item ids tells nothing of which are still being labeled; one
    no longer open for labeling is refused in words that name its stage only to whom may see it
    (blindness.refusal_seen)."""
    gate(volunteer, item.project, Write.LABEL)
    reason = " ".join((reason or "").split())[:300]
    skip = Skip.objects.filter(item=item, volunteer=volunteer).first()
    if skip is not None:
        return skip, False
    who = who_labels(project=item.project, volunteer=volunteer)
    handed = not who.reserving or not item_refusal(
        who, timezone.now(), item.pk, handed=True, only=HANDED
    )
    if not handed:
        raise LabelingRefused(Refusal.NOT_HANDED, item.project)
    if item.stage not in LABELABLE_STAGES:
        precise = gettext(
            "This item is %(stage)s, not open for labeling; there is nothing to skip."
        ) % {"stage": Stage(item.stage).label.lower()}
        role = user_role(volunteer, item.project)
        raise Conflict(refusal_seen(item, item.project, role, precise, BlindRefusal.CLOSED))
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


@transaction.atomic
def skip_undo(*, item: Item, volunteer) -> Claim:
    """Take back `volunteer`'s skip of `item`: the item is theirs to label again, reserved for
    them, if the one rule (eligibility) lets them label it now; otherwise the skip stays and the
    refusal names the condition (the item's labels or stage only to whom may see its stage,
    blindness.refusal_seen). The item row is locked first, so no concurrent claim hands its
    last slot to someone else meanwhile (claims skip locked rows)."""
    gate(volunteer, item.project, Write.LABEL)
    item = Item.objects.select_for_update(of=("self",)).select_related("project").get(pk=item.pk)
    skip = Skip.objects.filter(item=item, volunteer=volunteer).first()
    if skip is None:
        raise Conflict(gettext("You have not skipped this item; there is no skip to take back."))
    skip.delete()
    now = timezone.now()
    refusal = item_refusal(who_labels(project=item.project, volunteer=volunteer), now, item.pk)
    if refusal is not None:  # the skip's delete is rolled back
        raise labeling_refused(refusal, item, volunteer)
    held = _held(project=item.project, volunteer=volunteer, now=now, stages=LABELABLE_STAGES)
    if held.full:  # taking skips back must not hoard items either
        raise Conflict(str(NoneReason.HOLDING.label))
    minutes = item.project.reservation_minutes
    expires_at = reserve(item=item, volunteer=volunteer, now=now, minutes=minutes)
    audit_record(
        project=item.project,
        item=item,
        actor=volunteer,
        action=Action.UNSKIP,
        before={"reason": skip.reason},
    )
    return Claim(item, expires_at=expires_at)
