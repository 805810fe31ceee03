"""The labeling API: access rules, next item (200/204 with a reason), submit/edit (201/200/409),
skip, my annotations, screening, the lead's decision; item payloads stay blind."""

from __future__ import annotations

import json

import pytest
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

from annotation.models import Annotation, PilotStatus, Skip, Stage
from annotation.screening.services import screening_vote
from tests.annotation.labeling_helpers import hand_out, items, label

SECRET = "SECRET-SUMMARY-OF-B"


@pytest.fixture
def api():
    return APIClient()


def as_user(api, user):
    api.force_authenticate(user)
    return api


def urls(slug, item_id=0):
    base = f"/api/projects/{slug}"
    return {
        "next": ("post", f"{base}/next-item/"),
        "annotation": ("put", f"{base}/items/{item_id}/annotation/"),
        "skip": ("post", f"{base}/items/{item_id}/skip/"),
        "unskip": ("delete", f"{base}/items/{item_id}/skip/"),
        "mine": ("get", f"{base}/my-annotations/"),
        "screen-next": ("post", f"{base}/screening/next/"),
        "vote": ("post", f"{base}/items/{item_id}/screening-vote/"),
        "decision": ("post", f"{base}/items/{item_id}/screening-decision/"),
    }


@pytest.mark.parametrize("name", list(urls("x")))
def test_anonymous_is_refused(api, project, name):
    method, url = urls(project.slug)[name]
    assert getattr(api, method)(url, {}, format="json").status_code == 401


@pytest.mark.parametrize("name", list(urls("x")))
def test_member_of_another_project_gets_404(api, personas, project, name):
    (item,) = items(project, 1)
    method, url = urls(project.slug, item.pk)[name]
    response = getattr(as_user(api, personas["outsider"]), method)(url, {}, format="json")
    assert response.status_code == 404


@pytest.mark.parametrize(("who", "code"), [("volunteer_a", 403), ("lead", 200), ("admin", 200)])
def test_screening_decision_is_for_leads(api, personas, project, who, code):
    (item,) = items(project, 1, stage=Stage.SCREENING_DISPUTE)
    _, url = urls(project.slug, item.pk)["decision"]
    response = as_user(api, personas[who]).post(url, {"relevant": True}, format="json")
    assert response.status_code == code


def test_token_auth_works(api, personas, project):
    items(project, 1)
    token = Token.objects.create(user=personas["volunteer_a"])
    api.credentials(HTTP_AUTHORIZATION=f"Token {token.key}")
    assert api.post(f"/api/projects/{project.slug}/next-item/").status_code == 200


def test_next_item_then_submit_edit_and_conflicts(api, personas, project):
    (item,) = items(project, 1)
    as_user(api, personas["volunteer_a"])
    response = api.post(f"/api/projects/{project.slug}/next-item/")
    assert response.status_code == 200
    data = response.json()
    assert data["id"] == item.pk
    assert data["issue"]["url"] == item.issue.url
    assert data["mine"] is None
    assert data["others"] == []
    assert data["reserved_until"]

    url = f"/api/projects/{project.slug}/items/{item.pk}/annotation/"
    created = api.put(url, {"node": "C.1", "summary": "NaN loss"}, format="json")
    assert created.status_code == 201
    assert created.json()["version"] == 1
    same = api.put(url, {"node": "C.1", "summary": "NaN loss"}, format="json")
    assert same.status_code == 200
    assert same.json()["id"] == created.json()["id"]
    stale = api.put(url, {"node": "C.2", "summary": "OOM"}, format="json")
    assert stale.status_code == 409
    assert "another tab" in stale.json()["detail"]
    edited = api.put(url, {"node": "C.2", "summary": "OOM", "version": 1}, format="json")
    assert edited.status_code == 200
    assert (edited.json()["node"], edited.json()["version"]) == ("C.2", 2)
    wrong = api.put(url, {"node": "C", "summary": "x", "version": 2}, format="json")
    assert wrong.status_code == 400
    assert "theme depth" in wrong.json()["detail"]
    assert Annotation.objects.filter(item=item).count() == 1

    none = api.post(f"/api/projects/{project.slug}/next-item/")
    assert none.status_code == 204
    assert none["Concord-Reason"] == "nothing_left"


def test_full_item_is_409(api, personas, project):
    project.overlap_k = 2
    project.save()
    (item,) = items(project, 1)
    label(item, personas["volunteer_b"])
    label(item, personas["lead"], code="C.2")
    url = f"/api/projects/{project.slug}/items/{item.pk}/annotation/"
    me = as_user(api, personas["volunteer_a"])
    # never handed to me: refused as such, whatever the item's state (blindness: no stage told)
    never = me.put(url, {"node": "C.1"}, format="json")
    assert never.status_code == 403
    assert "not handed to you" in never.json()["detail"]
    hand_out(item, personas["volunteer_a"])  # my hold, lapsed while the others filled it
    response = me.put(url, {"node": "C.1"}, format="json")
    assert response.status_code == 409
    assert "already has its 2 labels" in response.json()["detail"]


def test_pilot_reason_in_the_header(api, personas, project):
    project.pilot_status = PilotStatus.RUNNING
    project.save()
    items(project, 1, in_pilot=True)
    response = as_user(api, personas["volunteer_a"]).post(
        f"/api/projects/{project.slug}/next-item/"
    )
    assert response.status_code == 204
    assert response["Concord-Reason"] == "pilot_running"
    assert (
        as_user(api, personas["lead"]).post(f"/api/projects/{project.slug}/next-item/").status_code
        == 200
    )


def test_skip_and_my_annotations(api, personas, project):
    a, b = items(project, 2)
    me = personas["volunteer_a"]
    as_user(api, me)
    hand_out(a, me)
    first = api.post(f"/api/projects/{project.slug}/items/{a.pk}/skip/", {"reason": "spam"})
    again = api.post(f"/api/projects/{project.slug}/items/{a.pk}/skip/", {"reason": "spam"})
    assert (first.status_code, again.status_code) == (201, 200)
    assert Skip.objects.filter(item=a, volunteer=me).count() == 1
    label(b, me, summary="mine")
    label(b, personas["volunteer_b"], summary=SECRET)
    response = api.get(f"/api/projects/{project.slug}/my-annotations/")
    data = response.json()
    assert data["count"] == 1
    assert data["results"][0]["summary"] == "mine"
    assert data["results"][0]["editable"] is True
    assert SECRET not in json.dumps(data)


def test_item_payload_is_blind_until_cross_check(api, personas, project):
    (item,) = items(project, 1)
    label(item, personas["volunteer_b"], code="C.2", summary=SECRET)
    label(item, personas["lead"], summary="lead's words")
    as_user(api, personas["volunteer_a"])
    response = api.post(f"/api/projects/{project.slug}/next-item/")
    body = json.dumps(response.json())
    assert response.json()["id"] == item.pk
    assert SECRET not in body
    assert "lead's words" not in body
    assert "volunteer_b" not in body
    assert "label_count" not in body


def test_screening_over_the_api(api, personas, project):
    project.screening_enabled = True
    project.save()
    (item,) = items(project, 1, stage=Stage.CANDIDATE)
    as_user(api, personas["volunteer_a"])
    response = api.post(f"/api/projects/{project.slug}/screening/next/")
    assert response.json()["id"] == item.pk
    url = f"/api/projects/{project.slug}/items/{item.pk}/screening-vote/"
    voted = api.post(url, {"relevant": False, "reason": "PR"}, format="json")
    assert voted.status_code == 201
    assert voted.json()["stage"] == "blind"  # how the others voted is not the voter's to see
    assert api.post(url, {"relevant": False}, format="json").status_code == 200
    none = api.post(f"/api/projects/{project.slug}/screening/next/")
    assert none.status_code == 204
    assert none["Concord-Reason"] == "nothing_to_screen"

    hand_out(item, personas["volunteer_b"])  # as screening/next/ does
    screening_vote(item=item, volunteer=personas["volunteer_b"], relevant=True)
    item.refresh_from_db()
    assert item.stage == Stage.SCREENING_DISPUTE
    decision = f"/api/projects/{project.slug}/items/{item.pk}/screening-decision/"
    lead = as_user(APIClient(), personas["lead"])
    response = lead.post(decision, {"relevant": False, "reason": "a PR"}, format="json")
    assert response.json() == {"item": item.pk, "stage": Stage.EXCLUDED}
    conflict = lead.post(decision, {"relevant": True}, format="json")
    assert conflict.status_code == 409


def test_schema_lists_the_labeling_endpoints(api, personas):
    as_user(api, personas["volunteer_a"])
    schema = api.get("/api/schema/", HTTP_ACCEPT="application/json").content.decode()
    for path in ("next-item", "annotation", "my-annotations", "screening-vote"):
        assert path in schema
