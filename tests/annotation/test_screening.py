"""Screening: handing candidates out, votes (idempotent, only on a candidate handed to the voter),
outcomes under both rules, the lead's decision on a dispute, and the false-positive rate."""

from __future__ import annotations

import pytest
from django.utils import timezone
from rest_framework.test import APIClient

from annotation.labeling.assignment import NoneReason
from annotation.models import Action, AuditEvent, Reservation, ScreeningRule, ScreeningVote, Stage
from annotation.screening.services import (
    NotHanded,
    screening_decide,
    screening_next_claim,
    screening_outcome,
    screening_stats,
    screening_vote,
)
from concord.errors import Conflict
from tests.annotation.labeling_helpers import hand_out, items


@pytest.fixture
def screening_project(project):
    project.screening_enabled = True
    project.screening_votes = 2
    project.save()
    return project


def vote(item, user, relevant, reason=""):
    """`user` votes the way the page does: handed the candidate first (unless they change their
    own vote), then voting."""
    if not ScreeningVote.objects.filter(item=item, volunteer=user).exists():
        hand_out(item, user)
    return screening_vote(item=item, volunteer=user, relevant=relevant, reason=reason)


def test_next_candidate_is_any_with_room_never_one_i_voted_on(screening_project, personas):
    """A random candidate per claim (others' votes do not order them: that would tell their
    counts), resumed until voted on, never one already voted on."""
    a, b = items(screening_project, 2, stage=Stage.CANDIDATE)
    items(screening_project, 1, stage=Stage.OPEN)  # not a candidate
    vote(a, personas["volunteer_b"], True)
    me = personas["volunteer_a"]
    claim = screening_next_claim(project=screening_project, volunteer=me)
    first = claim.item
    assert first in (a, b)
    assert Reservation.objects.filter(item=first, volunteer=me).exists()
    assert screening_next_claim(project=screening_project, volunteer=me).item == first  # resumed
    vote(first, me, True)
    second = screening_next_claim(project=screening_project, volunteer=me).item
    assert {first, second} == {a, b}
    vote(second, me, True)
    claim = screening_next_claim(project=screening_project, volunteer=me)
    assert (claim.item, claim.reason) == (None, NoneReason.NOTHING_TO_SCREEN)


def test_candidate_reserved_by_enough_others_is_not_handed_out(screening_project, personas):
    screening_project.screening_votes = 1
    screening_project.save()
    items(screening_project, 1, stage=Stage.CANDIDATE)
    assert screening_next_claim(project=screening_project, volunteer=personas["volunteer_a"]).item
    claim = screening_next_claim(project=screening_project, volunteer=personas["volunteer_b"])
    assert (claim.item, claim.reason) == (None, NoneReason.ALL_RESERVED_SCREENING)


def test_screening_off_says_so(project, personas):
    project.screening_enabled = False
    project.save()
    claim = screening_next_claim(project=project, volunteer=personas["volunteer_a"])
    assert claim.reason == NoneReason.SCREENING_OFF


def test_vote_is_idempotent_and_a_changed_mind_is_kept(screening_project, personas):
    (item,) = items(screening_project, 1, stage=Stage.CANDIDATE)
    me = personas["volunteer_a"]
    first, created = vote(item, me, True)
    again, created_again = vote(item, me, True, reason="retry")
    assert (created, created_again) == (True, False)
    assert first.pk == again.pk
    changed, _ = vote(item, me, False, reason="a pull request")
    assert (changed.pk, changed.relevant) == (first.pk, False)
    assert ScreeningVote.objects.filter(item=item).count() == 1
    assert AuditEvent.objects.filter(item=item, action=Action.SCREEN).count() == 2
    item.refresh_from_db()
    assert item.stage == Stage.CANDIDATE


@pytest.mark.parametrize(
    ("votes", "rule", "stage"),
    [
        ((True, True), ScreeningRule.LEAD, Stage.OPEN),
        ((False, False), ScreeningRule.LEAD, Stage.EXCLUDED),
        ((True, False), ScreeningRule.LEAD, Stage.SCREENING_DISPUTE),
        ((True, False), ScreeningRule.MAJORITY, Stage.SCREENING_DISPUTE),  # a tie
        ((True, True, False), ScreeningRule.MAJORITY, Stage.OPEN),
        ((False, True, False), ScreeningRule.MAJORITY, Stage.EXCLUDED),
        ((True, True, False), ScreeningRule.LEAD, Stage.SCREENING_DISPUTE),
    ],
)
def test_outcome_when_the_votes_are_in(screening_project, personas, votes, rule, stage):
    screening_project.screening_votes = len(votes)
    screening_project.screening_rule = rule
    screening_project.save()
    (item,) = items(screening_project, 1, stage=Stage.CANDIDATE)
    people = [personas["volunteer_a"], personas["volunteer_b"], personas["lead"]]
    for who, relevant in zip(people, votes, strict=False):
        vote(item, who, relevant)
    item.refresh_from_db()
    assert item.stage == stage
    decision = AuditEvent.objects.get(item=item, action=Action.SCREENING_DECISION)
    assert decision.actor is None
    assert decision.after["stage"] == stage
    assert (
        screening_outcome(relevant=sum(votes), irrelevant=len(votes) - sum(votes), rule=rule)
        == stage
    )


def test_vote_after_the_decision_is_a_conflict(screening_project, personas):
    (item,) = items(screening_project, 1, stage=Stage.CANDIDATE)
    vote(item, personas["volunteer_a"], True)
    vote(item, personas["volunteer_b"], True)
    with pytest.raises(Conflict, match="already screened"):
        vote(item, personas["lead"], False)
    # but repeating one's own vote is still fine
    assert vote(item, personas["volunteer_a"], True)[1] is False


def test_lead_decides_a_dispute_once(screening_project, personas):
    (item,) = items(screening_project, 1, stage=Stage.CANDIDATE)
    vote(item, personas["volunteer_a"], True)
    vote(item, personas["volunteer_b"], False)
    lead = personas["lead"]
    decided = screening_decide(item=item, lead=lead, relevant=False, reason="a duplicate")
    assert decided.stage == Stage.EXCLUDED
    assert screening_decide(item=item, lead=lead, relevant=False).stage == Stage.EXCLUDED
    with pytest.raises(Conflict, match="not a screening dispute"):
        screening_decide(item=item, lead=lead, relevant=True)
    event = AuditEvent.objects.get(item=item, action=Action.SCREENING_DECISION, actor=lead)
    assert event.after == {"stage": Stage.EXCLUDED, "reason": "a duplicate"}


def test_false_positive_rate_is_excluded_over_screened(screening_project, personas):
    a, b, c, d, e = items(screening_project, 5, stage=Stage.CANDIDATE)
    items(screening_project, 2, stage=Stage.OPEN)  # never screened: not counted
    for item, verdicts in [(a, (True, True)), (b, (False, False)), (c, (True, True)),
                           (d, (True, False))]:  # fmt: skip
        vote(item, personas["volunteer_a"], verdicts[0])
        vote(item, personas["volunteer_b"], verdicts[1])
    stats = screening_stats(screening_project)
    assert (stats.screened, stats.excluded, stats.waiting, stats.disputes) == (3, 1, 1, 1)
    assert stats.false_positive_rate == pytest.approx(1 / 3)
    screening_decide(item=d, lead=personas["lead"], relevant=False)
    stats = screening_stats(screening_project)
    assert (stats.screened, stats.excluded) == (4, 2)
    assert stats.false_positive_rate == pytest.approx(0.5)
    assert e.stage == Stage.CANDIDATE


def test_no_screening_yet_has_no_rate(screening_project):
    assert screening_stats(screening_project).false_positive_rate is None


# ---------------------------------------------------------------- only what was handed out

NOT_HANDED = "This candidate was not handed to you; ask for the next candidate."


def test_a_new_vote_needs_the_candidate_handed_to_the_voter(screening_project, personas):
    """As for labels: a volunteer votes on what "next candidate" handed them, not on a candidate
    held for someone else or one they picked; the refusal tells nothing of the candidate."""
    mine, theirs, decided = items(screening_project, 3, stage=Stage.CANDIDATE)
    me, other = personas["volunteer_a"], personas["volunteer_b"]
    hand_out(theirs, other)
    for item in (mine, theirs):
        with pytest.raises(NotHanded, match=NOT_HANDED) as refused:
            screening_vote(item=item, volunteer=me, relevant=True)
        assert refused.value.http_status == 403
    vote(decided, other, False)
    vote(decided, personas["lead"], False)
    decided.refresh_from_db()
    assert decided.stage == Stage.EXCLUDED
    with pytest.raises(NotHanded) as refused:  # not "already screened (it is excluded)"
        screening_vote(item=decided, volunteer=me, relevant=True)
    assert "excluded" not in refused.value.message
    assert not ScreeningVote.objects.filter(volunteer=me).exists()

    handed = screening_next_claim(project=screening_project, volunteer=me).item
    assert handed in (mine, theirs)  # theirs has a vote's room left beside the other's hold
    Reservation.objects.filter(item=handed, volunteer=me).update(expires_at=timezone.now())
    assert screening_vote(item=handed, volunteer=me, relevant=True)[1]  # expired, still mine
    assert not Reservation.objects.filter(item=handed, volunteer=me).exists()
    changed, created = screening_vote(item=handed, volunteer=me, relevant=False)  # changed mind
    assert (created, changed.relevant) == (False, False)


def test_without_reservations_any_candidate_takes_a_vote(screening_project, personas):
    screening_project.reservation_minutes = 0
    screening_project.save()
    (item,) = items(screening_project, 1, stage=Stage.CANDIDATE)
    assert screening_vote(item=item, volunteer=personas["volunteer_a"], relevant=True)[1]


def test_the_api_refuses_a_vote_not_handed_out_with_403(screening_project, personas):
    (item,) = items(screening_project, 1, stage=Stage.CANDIDATE)
    api = APIClient()
    api.force_authenticate(personas["volunteer_a"])
    url = f"/api/projects/{screening_project.slug}/items/{item.pk}/screening-vote/"
    refused = api.post(url, {"relevant": True}, format="json")
    assert (refused.status_code, refused.json()["detail"]) == (403, NOT_HANDED)
    assert (
        api.post(f"/api/projects/{screening_project.slug}/screening/next/").json()["id"] == item.pk
    )
    assert api.post(url, {"relevant": True}, format="json").status_code == 201
