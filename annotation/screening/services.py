"""Screening: volunteers vote whether a keyword candidate is relevant; the votes (or the lead, on
a dispute) move it to open (labeling) or excluded. Candidates are handed out like items to label
(annotation.labeling.assignment.claim_next): one locked claim and an expiring reservation."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from django.db import models, transaction
from django.db.models import Count, Exists, F, OuterRef, Q, QuerySet, Subquery, Value
from django.db.models.functions import Coalesce
from django.utils import timezone
from django.utils.translation import gettext as _
from rest_framework import status

from annotation.access import user_role
from annotation.audit import audit_record
from annotation.blindness import BlindRefusal, refusal_seen
from annotation.gate import Write, gate, write_refusal
from annotation.labeling.assignment import (
    Claim,
    NoneReason,
    claim_next,
    lock_first,
    reservation_room,
    reserve,
)
from annotation.labeling.eligibility import claim_start, from_point
from annotation.lifecycle import item_move
from annotation.models import (
    Action,
    Item,
    Project,
    Reservation,
    ScreeningRule,
    ScreeningVote,
    Stage,
)
from concord.errors import ConcordError, Conflict


def _votes_on_outer_item() -> Coalesce:
    return Coalesce(
        Subquery(
            ScreeningVote.objects.filter(item=OuterRef("pk"))
            .values("item")
            .annotate(n=Count("pk"))
            .values("n")[:1],
            output_field=models.IntegerField(),
        ),
        Value(0),
    )


def _to_screen(*, project: Project, volunteer, now, start: int) -> QuerySet[Item]:
    """Candidates `volunteer` has not voted on with a slot left, from `start` on in their random
    `shuffle` order: a random one per claim, so the order tells nothing of others' votes (as
    eligibility.labeling_queue for labels)."""
    others = Reservation.objects.filter(item=OuterRef("pk"), expires_at__gt=now).exclude(
        volunteer=volunteer
    )
    reserved = Coalesce(
        Subquery(
            others.values("item").annotate(n=Count("pk")).values("n")[:1],
            output_field=models.IntegerField(),
        ),
        Value(0),
    )
    return (
        Item.objects.filter(project=project, stage=Stage.CANDIDATE)
        .exclude(Exists(ScreeningVote.objects.filter(item=OuterRef("pk"), volunteer=volunteer)))
        .alias(votes=_votes_on_outer_item(), reserved=reserved)
        .filter(votes__lt=project.screening_votes - F("reserved"), shuffle__gte=start)
        .order_by("shuffle", "pk")
    )


def screening_next_claim(*, project: Project, volunteer) -> Claim:
    """The candidate `volunteer` screens now (their live reservation first), or why none."""
    if not project.screening_enabled:
        return Claim(None, NoneReason.SCREENING_OFF)
    if write_refusal(volunteer, project, Write.SCREEN) is not None:  # archived: nothing handed out
        return Claim(None, NoneReason.ARCHIVED)
    now = timezone.now()
    held = (
        Reservation.objects.filter(
            volunteer=volunteer,
            expires_at__gt=now,
            item__project=project,
            item__stage=Stage.CANDIDATE,
        )
        .exclude(item__screening_votes__volunteer=volunteer)
        .select_related("item__issue")
        .first()
    )
    if held is not None:
        return Claim(held.item, expires_at=held.expires_at)

    def room(item: Item) -> bool:
        used = ScreeningVote.objects.filter(item=item).count()
        return reservation_room(
            item=item, volunteer=volunteer, capacity=project.screening_votes, used=used, now=now
        )

    def hold(item: Item) -> datetime | None:
        if not room(item):
            return None
        return reserve(item=item, volunteer=volunteer, now=now, minutes=project.reservation_minutes)

    start = claim_start()

    def pick(lost: list[int]) -> Item | None:
        return from_point(
            start,
            lambda at: lock_first(
                _to_screen(project=project, volunteer=volunteer, now=now, start=at), lost
            ),
        )

    claimed = claim_next(pick=pick, hold=hold)
    if claimed is not None:
        item, expires_at = claimed
        return Claim(item, expires_at=expires_at)
    waiting = Item.objects.filter(project=project, stage=Stage.CANDIDATE).exclude(
        Exists(ScreeningVote.objects.filter(item=OuterRef("pk"), volunteer=volunteer))
    )
    reason = NoneReason.ALL_RESERVED_SCREENING if waiting.exists() else NoneReason.NOTHING_TO_SCREEN
    return Claim(None, reason)


def screening_outcome(*, relevant: int, irrelevant: int, rule: str) -> str:
    """The stage the votes send a candidate to: unanimous votes decide; mixed votes go to the lead
    (rule lead) or to the majority (rule majority; a tie still goes to the lead)."""
    if irrelevant == 0:
        return Stage.OPEN
    if relevant == 0:
        return Stage.EXCLUDED
    if rule == ScreeningRule.MAJORITY and relevant != irrelevant:
        return Stage.OPEN if relevant > irrelevant else Stage.EXCLUDED
    return Stage.SCREENING_DISPUTE


class NotHanded(ConcordError):
    """A new vote on a candidate "next candidate" did not hand to the voter. It names nothing of
    the candidate (its stage, the votes on it): it is not theirs to know."""

    http_status = status.HTTP_403_FORBIDDEN


def _handed(item: Item, volunteer) -> bool:
    """Whether `item` was handed to `volunteer` (their reservation, even if it has expired)."""
    return Reservation.objects.filter(item=item, volunteer=volunteer).exists()


def screening_vote(
    *, item: Item, volunteer, relevant: bool, reason: str = ""
) -> tuple[ScreeningVote, bool]:
    """Record `volunteer`'s screening vote; returns (vote, created). Idempotent per volunteer: the
    same vote again changes nothing; a changed mind is allowed while the item is a candidate. The
    vote that reaches project.screening_votes decides (screening_outcome).

    As for labels, when the project reserves items a new vote needs the candidate to have been
    handed to the voter (screening_next_claim); otherwise a volunteer could vote on candidates
    held for others, or pick which ones to decide."""
    reason = " ".join((reason or "").split())[:300]
    gate(volunteer, item.project, Write.SCREEN)
    with transaction.atomic():
        item = (
            Item.objects.select_for_update(of=("self",)).select_related("project").get(pk=item.pk)
        )
        project = item.project
        mine = ScreeningVote.objects.filter(item=item, volunteer=volunteer).first()
        if mine is not None and mine.relevant == relevant:
            return mine, False
        if mine is None and project.reservation_minutes > 0 and not _handed(item, volunteer):
            raise NotHanded(_("This candidate was not handed to you; ask for the next candidate."))
        if item.stage != Stage.CANDIDATE:
            # its stage would tell a volunteer how the others voted: named only to whom may see it
            precise = _(
                "This item was already screened (it is %(stage)s); ask for the next candidate."
            ) % {"stage": Stage(item.stage).label.lower()}
            role = user_role(volunteer, project)
            raise Conflict(refusal_seen(item, project, role, precise, BlindRefusal.NOT_SCREENING))
        if mine is not None:
            before = {"relevant": mine.relevant, "reason": mine.reason}
            mine.relevant, mine.reason = relevant, reason
            mine.save(update_fields=["relevant", "reason"])
            audit_record(project=project, item=item, actor=volunteer, action=Action.SCREEN,
                         before=before, after={"relevant": relevant, "reason": reason})  # fmt: skip
            return mine, False
        vote = ScreeningVote.objects.create(
            item=item, volunteer=volunteer, relevant=relevant, reason=reason
        )
        Reservation.objects.filter(item=item, volunteer=volunteer).delete()
        audit_record(
            project=project,
            item=item,
            actor=volunteer,
            action=Action.SCREEN,
            after={"relevant": relevant, "reason": reason},
        )
        tally = ScreeningVote.objects.filter(item=item).aggregate(
            yes=Count("pk", filter=Q(relevant=True)), no=Count("pk", filter=Q(relevant=False))
        )
        if tally["yes"] + tally["no"] >= project.screening_votes:
            stage = screening_outcome(
                relevant=tally["yes"], irrelevant=tally["no"], rule=project.screening_rule
            )
            item_move(
                item=item,
                to=stage,
                action=Action.SCREENING_DECISION,
                after={"relevant": tally["yes"], "irrelevant": tally["no"]},
            )
        return vote, True


def screening_decide(*, item: Item, lead, relevant: bool, reason: str = "") -> Item:
    """The lead settles a screening dispute: relevant -> open, not relevant -> excluded. The same
    decision again (a double click) is a no-op; a decided item otherwise is a Conflict."""
    target = Stage.OPEN if relevant else Stage.EXCLUDED
    gate(lead, item.project, Write.SCREEN_DECIDE)
    with transaction.atomic():
        item = (
            Item.objects.select_for_update(of=("self",)).select_related("project").get(pk=item.pk)
        )
        if item.stage == target:
            return item
        if item.stage != Stage.SCREENING_DISPUTE:
            raise Conflict(
                _("This item is %(stage)s, not a screening dispute.")
                % {"stage": Stage(item.stage).label.lower()}
            )
        item_move(
            item=item,
            to=target,
            action=Action.SCREENING_DECISION,
            actor=lead,
            after={"reason": " ".join((reason or "").split())[:300]},
        )
        return item


def screening_disputes(project: Project) -> QuerySet[Item]:
    return (
        Item.objects.filter(project=project, stage=Stage.SCREENING_DISPUTE)
        .select_related("issue")
        .prefetch_related("screening_votes__volunteer")
        .order_by("pk")
    )


@dataclass(frozen=True)
class ScreeningStats:
    screened: int
    excluded: int
    waiting: int
    disputes: int

    @property
    def false_positive_rate(self) -> float | None:
        """Share of screened candidates found irrelevant (the study's false-positive rate)."""
        return self.excluded / self.screened if self.screened else None


def screening_stats(project: Project) -> ScreeningStats:
    """Screened = candidates the votes or the lead decided (open or excluded, and beyond), in
    one aggregate query."""
    voted = Exists(ScreeningVote.objects.filter(item=OuterRef("pk")))
    undecided = (Stage.CANDIDATE, Stage.SCREENING_DISPUTE)
    row = (
        Item.objects.filter(project=project)
        .alias(voted=voted)
        .aggregate(
            screened=Count("pk", filter=Q(voted=True) & ~Q(stage__in=undecided)),
            excluded=Count("pk", filter=Q(voted=True) & Q(stage=Stage.EXCLUDED)),
            waiting=Count("pk", filter=Q(stage=Stage.CANDIDATE)),
            disputes=Count("pk", filter=Q(stage=Stage.SCREENING_DISPUTE)),
        )
    )
    return ScreeningStats(**row)
