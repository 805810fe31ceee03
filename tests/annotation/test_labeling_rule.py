"""One rule decides whether a volunteer may label an item now (annotation.labeling.eligibility):
the claim, the API's PUT and the page's POST all follow it. Each bypass the old submit path let
through is refused here, through the API and through the page, with the volunteer's words kept."""

from __future__ import annotations

import html
from datetime import timedelta

import pytest
from django.utils import timezone
from rest_framework.test import APIClient

from annotation.labeling.assignment import item_skip, next_item, next_item_claim
from annotation.labeling.eligibility import Refusal, labeling_refusal
from annotation.labeling.selectors import volunteer_progress
from annotation.models import Annotation, Reservation
from tests.annotation.labeling_helpers import hand_out, items, label, volunteers

WORDS = "words I typed and want to keep"


def api_put(user, item):
    api = APIClient()
    api.force_authenticate(user)
    url = f"/api/projects/{item.project.slug}/items/{item.pk}/annotation/"
    return api.put(url, {"node": "C.1", "summary": WORDS}, format="json")


def page_post(client, user, item):
    client.force_login(user)
    url = f"/projects/{item.project.slug}/items/{item.pk}/label/"
    return client.post(url, {"node": "C.1", "summary": WORDS})


def refused_everywhere(client, user, item, status: int, refusal: Refusal) -> None:
    """The API and the page refuse with `status`, say why, keep the words; nothing is stored."""
    assert labeling_refusal(item=item, volunteer=user) == refusal
    api = api_put(user, item)
    assert api.status_code == status, api.content
    assert api.json()["detail"] == refusal.label.format(k=item.project.overlap_k)
    page = page_post(client, user, item)
    assert page.status_code == status
    text = html.unescape(page.content.decode())
    assert refusal.label.format(k=item.project.overlap_k) in text
    assert WORDS in text  # the form comes back with what they typed
    assert not Annotation.objects.filter(item=item, volunteer=user).exists()
    item.refresh_from_db()
    assert item.label_count == item.annotations.count()


@pytest.fixture
def me(personas):
    return personas["volunteer_a"]


def test_an_item_never_handed_to_me_is_refused(client, project, me):
    both = items(project, 2)
    handed = next_item(project=project, volunteer=me)  # I was handed one of them only
    (other,) = [item for item in both if item != handed]
    refused_everywhere(client, me, other, 403, Refusal.NOT_HANDED)


def test_an_item_i_skipped_is_refused(client, project, me):
    (item,) = items(project, 1)
    assert next_item(project=project, volunteer=me) == item
    item_skip(item=item, volunteer=me, reason="not sure")
    hand_out(item, me)  # even a reservation left behind does not bring it back
    refused_everywhere(client, me, item, 403, Refusal.SKIPPED)


def test_an_item_whose_last_slot_another_holds_is_refused_and_theirs_goes_through(
    client, project, me, personas
):
    (item,) = items(project, 1)
    first, second = volunteers(project, 2, prefix="early")
    label(item, first)
    label(item, second)  # k = 3: one slot left
    # I was handed it once, my hold ran out, and the last slot went to volunteer B
    hand_out(item, me)
    Reservation.objects.filter(item=item, volunteer=me).update(
        expires_at=timezone.now() - timedelta(minutes=1)
    )
    other = personas["volunteer_b"]
    assert next_item(project=project, volunteer=other) == item
    refused_everywhere(client, me, item, 409, Refusal.NO_ROOM)
    assert api_put(other, item).status_code == 201  # B's own label is not lost to mine


def test_a_label_past_my_quota_is_refused(client, project, me):
    project.quota_per_volunteer = 1
    project.save(update_fields=["quota_per_volunteer"])
    held, other = items(project, 2)
    hand_out(held, me)  # handed while I was under the quota
    label(other, me)
    assert next_item_claim(project=project, volunteer=me).reason.value == "quota_reached"
    refused_everywhere(client, me, held, 403, Refusal.QUOTA_REACHED)


def test_a_label_during_the_lead_s_pilot_is_refused(client, project, me, personas):
    from annotation.review.pilot import pilot_start

    (item,) = items(project, 1)
    hand_out(item, me)
    pilot_start(project=project, lead=personas["lead"], n=1)
    project.refresh_from_db()
    refused_everywhere(client, me, item, 409, Refusal.PILOT_RUNNING)


def test_progress_and_empty_state_follow_the_same_rule(project, me, personas):
    """What waits for me is what the claim can hand me: not skipped, not labeled by me, not
    complete; held by others still counts as waiting (the empty state says so)."""
    skipped, held_by_other, free = items(project, 3)
    hand_out(skipped, me)
    item_skip(item=skipped, volunteer=me)
    for v in volunteers(project, 3, prefix="holder"):
        hand_out(held_by_other, v)  # all k slots held by others
    assert volunteer_progress(project=project, volunteer=me).waiting_to_label == 2
    assert next_item(project=project, volunteer=me) == free
    label(free, me)
    assert volunteer_progress(project=project, volunteer=me).waiting_to_label == 1
    claim = next_item_claim(project=project, volunteer=me)
    assert (claim.item, claim.reason.value) == (None, "all_reserved")


def test_my_own_edit_needs_no_new_hand_out(project, me):
    (item,) = items(project, 1)
    annotation, _ = label(item, me)
    assert not Reservation.objects.filter(item=item, volunteer=me).exists()
    edited, created = label(item, me, code="C.2", version=annotation.version)
    assert (created, edited.node.code) == (False, "C.2")
