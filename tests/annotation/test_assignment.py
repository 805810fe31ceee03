"""Handing items out: order, never twice to the same volunteer, reservations and their expiry,
quota, the pilot, skipping; and the claim, the quota and a change of k under concurrency (threads
on PostgreSQL)."""

from __future__ import annotations

import random
import threading
import time
from collections import Counter
from datetime import timedelta

import pytest
from django.db import connection, connections, transaction
from django.db.models import Count, Q
from django.utils import timezone

from annotation.labeling import assignment
from annotation.labeling.assignment import (
    HOLD_MAX,
    NoneReason,
    item_skip,
    next_item,
    next_item_claim,
)
from annotation.labeling.eligibility import LabelingRefused, Refusal
from annotation.labeling.services import annotation_submit
from annotation.models import (
    SHUFFLE_KEYS,
    Action,
    Annotation,
    AuditEvent,
    Item,
    PilotStatus,
    Project,
    Reservation,
    Role,
    Skip,
    Stage,
)
from concord.db import refresh_planner_statistics
from concord.errors import Conflict
from tests.annotation.labeling_helpers import hand_out, items, label, node, volunteers
from tests.conftest import load_study_taxonomy, needs_postgres
from tests.factories import ProjectFactory


def walk(project, me, starts: list[int], monkeypatch) -> list[int]:
    """The attacker's walk: ask for the next item, skip it, again, until nothing is left; the
    items in the order they came. Then the walk is undone (skips and holds dropped) so it can be
    walked again. `starts`: the random points the claims draw (claim_start), one per claim."""
    monkeypatch.setattr(assignment, "claim_start", iter(starts).__next__)
    handed = []
    while (item := next_item(project=project, volunteer=me)) is not None:
        handed.append(item.pk)
        item_skip(item=item, volunteer=me)
    Skip.objects.filter(volunteer=me).delete()
    Reservation.objects.filter(volunteer=me).delete()
    return handed


def test_the_order_tells_nothing_of_label_counts(project, personas, monkeypatch):
    """Walked as an attacker would, any number of times: which item comes next depends only on
    the claim's own random draw, never on how many labels others gave. The same draws give the
    same walk before and after others label half the items (under "fewest labels first", however
    shuffled within a count, the labeled half would come last and give its counts away)."""
    waiting = items(project, 12)
    me, others = personas["volunteer_a"], [personas["volunteer_b"], personas["lead"]]
    starts = [random.randrange(SHUFFLE_KEYS) for _ in range(len(waiting) + 1)]
    before = walk(project, me, starts, monkeypatch)
    for item in waiting[::2]:
        for other in others:  # two labels of k = 3: still open to me
            label(item, other)
    after = walk(project, me, starts, monkeypatch)
    assert sorted(before) == sorted(i.pk for i in waiting)
    assert after == before
    # each claim draws its own point: not simply the items' fixed order (1 in 12! that it is)
    by_key = Item.objects.filter(project=project).order_by("shuffle", "pk")
    assert before != list(by_key.values_list("pk", flat=True))


def test_a_volunteer_holds_no_more_than_the_page_needs(project, personas):
    """Asking with `exclude` (the items in hand) hands out at most HOLD_MAX items at once: the
    one on screen, the one held ready, one whose label is on its way. More would let a volunteer
    walk the queue without labeling, or hoard a k = 1 project's every item."""
    Project.objects.filter(pk=project.pk).update(overlap_k=1)
    project.refresh_from_db()
    items(project, 10)
    me, other = personas["volunteer_a"], personas["volunteer_b"]
    held: list[int] = []
    for _ in range(HOLD_MAX):
        held.append(next_item_claim(project=project, volunteer=me, exclude=held).item.pk)
    refused = next_item_claim(project=project, volunteer=me, exclude=held)
    assert (refused.item, refused.reason) == (None, NoneReason.HOLDING)
    assert Reservation.objects.filter(volunteer=me).count() == HOLD_MAX
    assert next_item(project=project, volunteer=other).pk not in held  # the rest is still free
    label(Item.objects.get(pk=held[0]), me)  # a label landing frees a place
    assert next_item_claim(project=project, volunteer=me, exclude=held).item is not None


def test_within_a_label_count_the_order_is_random_not_by_id(project, personas):
    """Skipping through the queue must not let a volunteer read labels counts off the order:
    each claim starts at a random point of the items' random order."""
    waiting = items(project, 30)
    me = personas["volunteer_a"]
    handed = []
    for _ in waiting:
        item = next_item(project=project, volunteer=me)
        handed.append(item.pk)
        item_skip(item=item, volunteer=me)
    assert sorted(handed) == sorted(i.pk for i in waiting)
    assert handed != sorted(handed)  # 1 in 30! that a random order is sorted
    shuffles = set(Item.objects.filter(pk__in=handed).values_list("shuffle", flat=True))
    assert len(shuffles) > 25  # one draw per row, not one per statement


def test_reload_resumes_the_same_reservation(project, personas):
    items(project, 3)
    first = next_item(project=project, volunteer=personas["volunteer_a"])
    assert next_item(project=project, volunteer=personas["volunteer_a"]) == first
    assert Reservation.objects.filter(volunteer=personas["volunteer_a"]).count() == 1


def test_never_an_item_i_labeled_or_skipped(project, personas):
    a, b, c = items(project, 3)
    me = personas["volunteer_a"]
    label(a, me)
    hand_out(b, me)
    item_skip(item=b, volunteer=me, reason="not in English")
    assert next_item(project=project, volunteer=me) == c
    label(c, me)
    claim = next_item_claim(project=project, volunteer=me)
    assert claim.item is None
    assert claim.reason == NoneReason.NOTHING_LEFT


def test_reservations_of_others_count_toward_k_until_they_expire(project, personas):
    project.overlap_k = 1
    project.save()
    (only,) = items(project, 1)
    assert next_item(project=project, volunteer=personas["volunteer_a"]) == only
    claim = next_item_claim(project=project, volunteer=personas["volunteer_b"])
    assert claim.item is None
    assert claim.reason == NoneReason.ALL_RESERVED

    Reservation.objects.filter(item=only).update(expires_at=timezone.now() - timedelta(seconds=1))
    assert next_item(project=project, volunteer=personas["volunteer_b"]) == only
    # the item is b's now; a's expired hold counts for nothing, and is dropped the next time a
    # is handed an item
    a = personas["volunteer_a"]
    assert next_item(project=project, volunteer=a) is None
    (other,) = items(project, 1)
    assert next_item(project=project, volunteer=a) == other
    held = Reservation.objects.filter(volunteer=a).values_list("item", flat=True)
    assert list(held) == [other.pk]


def test_a_hold_is_made_only_while_the_item_has_room(project, personas):
    """The claim's last step (reserve_if_room with the rule's room_query) checks the room and
    makes the hold in one go: an item whose last slot another volunteer took meanwhile is not
    held, and nothing is written; one with room is held, dropping the volunteer's expired holds."""
    from annotation.labeling.assignment import reserve, reserve_if_room
    from annotation.labeling.eligibility import room_query, who_labels

    project.overlap_k = 1
    project.save()
    taken, free, old = items(project, 3)
    a, b = personas["volunteer_a"], personas["volunteer_b"]
    now = timezone.now()
    reserve(item=taken, volunteer=b, now=now, minutes=30)
    reserve(item=old, volunteer=a, now=now - timedelta(hours=1), minutes=30)  # expired
    who = who_labels(project=project, volunteer=a)

    def hold(item):
        room = room_query(who, now, item.pk).statement()
        return reserve_if_room(item=item, volunteer=a, now=now, minutes=30, room=room)

    with transaction.atomic():
        assert hold(taken) is None
    assert not Reservation.objects.filter(item=taken, volunteer=a).exists()
    with transaction.atomic():
        assert hold(free) == now + timedelta(minutes=30)
    assert list(Reservation.objects.filter(volunteer=a).values_list("item", flat=True)) == [free.pk]


def test_items_with_k_labels_or_out_of_labeling_are_never_handed_out(project, personas):
    project.overlap_k = 2
    project.save()
    full, candidate, final, free = items(project, 4)
    Item.objects.filter(pk=full.pk).update(label_count=2, stage=Stage.LABELING)
    Item.objects.filter(pk=candidate.pk).update(stage=Stage.CANDIDATE)
    Item.objects.filter(pk=final.pk).update(stage=Stage.FINAL)
    assert next_item(project=project, volunteer=personas["volunteer_a"]) == free


def test_quota_counts_my_labels(project, personas):
    project.quota_per_volunteer = 1
    project.save()
    a, _ = items(project, 2)
    me = personas["volunteer_a"]
    label(a, me)
    claim = next_item_claim(project=project, volunteer=me)
    assert claim.item is None
    assert claim.reason == NoneReason.QUOTA_REACHED
    assert next_item(project=project, volunteer=personas["volunteer_b"]) is not None


def test_pilot_gives_volunteers_nothing_and_the_lead_only_pilot_items(project, personas):
    project.overlap_k = 2
    project.pilot_status = PilotStatus.RUNNING
    project.save()
    ordinary, pilot = items(project, 1) + items(project, 1, in_pilot=True)
    claim = next_item_claim(project=project, volunteer=personas["volunteer_a"])
    assert claim.item is None
    assert claim.reason == NoneReason.PILOT_RUNNING
    assert "pilot" in claim.message

    lead = personas["lead"]
    assert next_item(project=project, volunteer=lead) == pilot
    annotation, _ = label(pilot, lead)
    assert annotation.is_pilot
    assert next_item_claim(project=project, volunteer=lead).reason == NoneReason.NOTHING_LEFT

    # After the pilot, the pilot item is an ordinary item already carrying the lead's label: its
    # one slot left and the ordinary item's two go to three volunteers, in whatever order.
    project.pilot_status = PilotStatus.CLOSED
    project.save()
    people = [personas["volunteer_a"], personas["volunteer_b"], personas["admin"]]
    handed = Counter(next_item(project=project, volunteer=p) for p in people)
    assert handed == {ordinary: 2, pilot: 1}
    assert next_item_claim(project=project, volunteer=lead).reason == NoneReason.ALL_RESERVED


def test_skip_is_idempotent_releases_and_is_audited(project, personas):
    (only,) = items(project, 1)
    me = personas["volunteer_a"]
    assert next_item(project=project, volunteer=me) == only
    _, created = item_skip(item=only, volunteer=me, reason="  spam   issue ")
    again, created_again = item_skip(item=only, volunteer=me, reason="other")
    assert (created, created_again) == (True, False)
    assert again.reason == "spam issue"
    assert not Reservation.objects.filter(item=only).exists()
    assert AuditEvent.objects.filter(item=only, action=Action.SKIP).count() == 1


def test_skipping_an_item_out_of_labeling_is_a_conflict(project, personas):
    (item,) = items(project, 1, stage=Stage.FINAL)
    me = personas["volunteer_a"]
    with pytest.raises(Conflict, match="not handed to you"):  # an item never handed out
        item_skip(item=item, volunteer=me, reason="x")
    hand_out(item, me)  # handed out, then finished meanwhile
    with pytest.raises(Conflict, match="nothing to skip"):
        item_skip(item=item, volunteer=me, reason="x")


def test_claim_is_one_query_plan_that_uses_the_partial_index(project, personas):
    """The claim must not sort every labelable item: the partial index gives the order from the
    claim's random point on."""
    needs_postgres(connection)
    items(project, 30)
    from annotation.labeling.eligibility import claim_query, who_labels

    # The plan follows the tables' statistics, which what ran before in this test database (the
    # study-scale load test, imports that ANALYZE inside their transaction) may have left
    # describing other rows (it failed so once in make test): these 30 items' own.
    for model in (Item, Annotation, Skip, Reservation):
        refresh_planner_statistics(model)

    who = who_labels(project=project, volunteer=personas["volunteer_a"])
    sql, params = claim_query(who, timezone.now(), lost=[], start=2**30).statement()
    with connection.cursor() as cursor:
        cursor.execute("SET LOCAL enable_seqscan = off")
        cursor.execute("EXPLAIN " + sql, params)
        plan = "\n".join(row[0] for row in cursor.fetchall())
    assert "item_claim" in plan
    assert "Sort" not in plan.split("SubPlan")[0]


# ---------------------------------------------------------------- concurrency


@pytest.mark.django_db(transaction=True)
def test_twenty_volunteers_label_at_once_without_passing_k():
    """20 threads (each its own connection) ask for items and submit at once on 30 items with
    k=3: no item passes k, no item is ever reserved to more than k at a time, and every
    acknowledged submission is stored."""
    needs_postgres(connection)
    taxonomy = load_study_taxonomy()
    project = ProjectFactory(taxonomy=taxonomy, slug="race", overlap_k=3, label_depth="theme")
    items(project, 30)
    people = volunteers(project, 20, prefix="racer")
    theme = node(project, "C.1")
    acknowledged: list[tuple[int, int]] = []
    overbooked: list[int] = []
    errors: list[BaseException] = []
    lock = threading.Lock()
    start = threading.Barrier(len(people))

    def work(user) -> None:
        try:
            start.wait()
            for _ in range(200):
                claim = next_item_claim(project=project, volunteer=user)
                if claim.item is None:
                    if claim.reason == NoneReason.NOTHING_LEFT:
                        break
                    time.sleep(0.005)  # all held by others right now; they will submit
                    continue
                item = claim.item
                # Labels plus live reservations, read in one statement (one snapshot).
                live = Q(reservations__expires_at__gt=timezone.now())
                held = (
                    Item.objects.filter(pk=item.pk)
                    .annotate(r=Count("reservations", filter=live))
                    .values_list("label_count", "r")
                    .get()
                )
                if sum(held) > project.overlap_k:
                    with lock:
                        overbooked.append(item.pk)
                _, created = annotation_submit(
                    item=item, volunteer=user, node=theme, summary=f"by {user.username}"
                )
                if created:
                    with lock:
                        acknowledged.append((item.pk, user.pk))
        except BaseException as exc:
            with lock:
                errors.append(exc)
        finally:
            connections.close_all()

    at_once(work, people, timeout=120)
    assert errors == []
    assert overbooked == []
    stored = set(Annotation.objects.filter(item__project=project).values_list("item", "volunteer"))
    assert set(acknowledged) == stored
    assert len(acknowledged) == len(stored) == 30 * 3
    per_item = Counter(item for item, _ in stored)
    assert max(per_item.values()) == 3
    counts = dict(Item.objects.filter(project=project).values_list("pk", "label_count"))
    assert counts == dict(per_item)
    assert set(Item.objects.filter(project=project).values_list("stage", flat=True)) == {
        Stage.FINAL
    }


@pytest.mark.django_db(transaction=True)
def test_a_submit_waits_for_nothing_but_its_own_item():
    """A submit locks its item's row only: while another volunteer's submit on another item of
    the same project is still open (not committed), this one goes through at once. (Locking the
    project row as well made every submit of a project wait for the one before it to commit.)"""
    needs_postgres(connection)
    taxonomy = load_study_taxonomy()
    project = ProjectFactory(taxonomy=taxonomy, slug="locks", overlap_k=3, label_depth="theme")
    first_item, second_item = items(project, 2)
    first, second = volunteers(project, 2, prefix="locker")
    hand_out(first_item, first)
    hand_out(second_item, second)
    theme = node(project, "C.1")
    holding, done = threading.Event(), threading.Event()
    errors: list[BaseException] = []

    def open_submit() -> None:
        try:
            with transaction.atomic():
                annotation_submit(item=first_item, volunteer=first, node=theme, summary="first")
                holding.set()
                done.wait(timeout=30)  # the transaction stays open, its locks held
        except BaseException as exc:
            errors.append(exc)
            holding.set()
        finally:
            connections.close_all()

    other = threading.Thread(target=open_submit)
    other.start()
    try:
        assert holding.wait(timeout=30)
        with transaction.atomic():
            with connection.cursor() as cursor:
                cursor.execute("SET LOCAL lock_timeout = '2s'")  # waiting would fail, not hang
            _, created = annotation_submit(
                item=second_item, volunteer=second, node=theme, summary="second"
            )
        assert created
    finally:
        done.set()
        other.join(timeout=30)
    assert errors == []
    assert Annotation.objects.filter(item__project=project).count() == 2


def at_once(work, each: list, *, timeout: float) -> None:
    """`work(x)` for every x of `each`, each in a thread of its own, all started at once."""
    threads = [threading.Thread(target=work, args=(x,)) for x in each]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=timeout)


def _waiting(threads: list[threading.Thread], n: int) -> None:
    """Until `n` sessions wait for a lock (an advisory lock, or a row another holds) or the
    threads have ended; fail after 10 s."""
    deadline = time.monotonic() + 10
    with connections["default"].cursor() as cursor:
        while time.monotonic() < deadline:
            cursor.execute(
                "SELECT count(*) FROM pg_stat_activity "
                "WHERE datname = current_database() AND wait_event_type = 'Lock'"
            )
            if cursor.fetchone()[0] + sum(not t.is_alive() for t in threads) >= n:
                return
            time.sleep(0.01)
    raise AssertionError(f"not {n} sessions waiting for a lock")


@pytest.mark.django_db(transaction=True)
def test_a_quota_holds_for_submits_at_once():
    """One volunteer with a quota of 2 submits on 6 handed-out items at once, from 6 threads
    (each its own connection): the count of their labels and the new label are one step under
    the volunteer's lock, so exactly 2 are stored and the others are refused with the quota."""
    needs_postgres(connection)
    taxonomy = load_study_taxonomy()
    project = ProjectFactory(
        taxonomy=taxonomy, slug="quota-race", overlap_k=3, quota_per_volunteer=2
    )
    targets = items(project, 6)
    (me,) = volunteers(project, 1, prefix="eager")
    for item in targets:
        hand_out(item, me)
    theme = node(project, "C.1")
    start = threading.Barrier(len(targets))
    stored: list[int] = []
    refused: list[str] = []
    errors: list[BaseException] = []
    lock = threading.Lock()

    def submit(item) -> None:
        try:
            start.wait()
            annotation_submit(item=item, volunteer=me, node=theme, summary="at once")
            with lock:
                stored.append(item.pk)
        except LabelingRefused as exc:
            with lock:
                refused.append(exc.refusal)
        except BaseException as exc:
            with lock:
                errors.append(exc)
        finally:
            connections.close_all()

    at_once(submit, targets, timeout=60)
    assert errors == []
    assert len(stored) == 2
    assert refused == [Refusal.QUOTA_REACHED] * 4
    assert Annotation.objects.filter(volunteer=me).count() == 2


@pytest.mark.django_db(transaction=True)
def test_a_submit_waiting_behind_a_k_change_decides_by_the_new_k():
    """k 3 -> 2 while a submit on an item is open (its second label) and another volunteer's
    submit on the same item waits: the change waits for the open submit, then settles the item
    at its two labels; the waiting submit then sees the new k and the settled item, and stores
    no third label. (Without the project's rule lock the change did not wait: it missed the
    uncommitted second label and left the item labeling with its k labels for good.)"""
    from annotation.projects.settings import project_update
    from tests.factories import MembershipFactory, UserFactory

    needs_postgres(connection)
    taxonomy = load_study_taxonomy()
    project = ProjectFactory(taxonomy=taxonomy, slug="k-race", overlap_k=3, label_depth="theme")
    (item,) = items(project, 1)
    first, second, third = volunteers(project, 3, prefix="k-racer")
    admin = UserFactory(username="k-admin")
    MembershipFactory(project=project, user=admin, role=Role.ADMIN)
    theme = node(project, "C.1")
    label(item, first)
    hand_out(item, second)
    hand_out(item, third)
    holding, done = threading.Event(), threading.Event()
    outcomes: dict[str, object] = {}

    def run(name: str, action) -> None:
        try:
            outcomes[name] = action()
        except BaseException as exc:
            outcomes[name] = exc
        finally:
            connections.close_all()

    def open_submit() -> None:
        with transaction.atomic():
            annotation_submit(item=item, volunteer=second, node=theme, summary="second")
            holding.set()
            done.wait(timeout=30)  # the transaction stays open, its locks held

    def change_k():
        return project_update(project=Project.objects.get(pk=project.pk), actor=admin, overlap_k=2)

    def late_submit():
        return annotation_submit(item=item, volunteer=third, node=theme, summary="third")

    threads = [threading.Thread(target=run, args=("open", open_submit))]
    threads[0].start()
    try:
        assert holding.wait(timeout=30)
        threads.append(threading.Thread(target=run, args=("change", change_k)))
        threads[-1].start()
        _waiting(threads[1:], 1)  # the change, behind the open submit
        threads.append(threading.Thread(target=run, args=("late", late_submit)))
        threads[-1].start()
        _waiting(threads[1:], 2)  # the late submit, behind the change
    finally:
        done.set()
        for t in threads:
            t.join(timeout=30)
    assert outcomes["open"] is None
    assert isinstance(outcomes["change"], Project)
    assert isinstance(outcomes["late"], LabelingRefused)
    item.refresh_from_db()
    assert (item.label_count, item.stage) == (2, Stage.FINAL)  # two C.1 labels: unanimous at k=2
    assert Annotation.objects.filter(item=item).count() == 2
