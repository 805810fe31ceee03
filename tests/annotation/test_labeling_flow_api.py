"""What the labeling page's no-reload flow asks of the API: the next item held ready beside the
current one (a second reservation through the same claim), the project's summary setting
enforced by the server, and a skip taken back (undo) through the one labeling rule."""

from __future__ import annotations

import pytest
from rest_framework.test import APIClient

from annotation.models import Action, Annotation, AuditEvent, Reservation, Skip
from tests.annotation.labeling_helpers import items, label


@pytest.fixture
def api(personas):
    client = APIClient()
    client.force_authenticate(personas["volunteer_a"])
    return client


def next_item(api, project, exclude=()):
    return api.post(
        f"/api/projects/{project.slug}/next-item/", {"exclude": list(exclude)}, format="json"
    )


def test_next_item_without_exclude_resumes_the_held_item(api, project):
    items(project, 3)
    first = next_item(api, project).json()["id"]
    assert next_item(api, project).json()["id"] == first


def test_excluded_items_are_passed_over_and_both_stay_reserved(api, personas, project):
    items(project, 3)
    current = next_item(api, project).json()["id"]
    ready = next_item(api, project, [current]).json()["id"]
    assert ready != current
    held = set(
        Reservation.objects.filter(volunteer=personas["volunteer_a"]).values_list(
            "item_id", flat=True
        )
    )
    assert held == {current, ready}
    # Asking again with the same hand resumes the prefetched item, not a third one.
    assert next_item(api, project, [current]).json()["id"] == ready


def test_nothing_beyond_the_excluded_says_nothing_left(api, project):
    (only,) = items(project, 1)
    assert next_item(api, project).json()["id"] == only.pk
    response = next_item(api, project, [only.pk])
    assert response.status_code == 204
    assert response["Concord-Reason"] == "nothing_left"


@pytest.mark.parametrize("exclude", [["x"], [0], list(range(1, 30)), "1"])
def test_bad_exclude_is_a_named_400(api, project, exclude):
    items(project, 1)
    response = api.post(
        f"/api/projects/{project.slug}/next-item/", {"exclude": exclude}, format="json"
    )
    assert response.status_code == 400
    assert "exclude" in response.json()["detail"] or "exclude" in response.json()


def put_label(api, project, item_id, summary, **extra):
    return api.put(
        f"/api/projects/{project.slug}/items/{item_id}/annotation/",
        {"node": "C.1", "summary": summary, **extra},
        format="json",
    )


def test_summary_required_by_the_server(api, project):
    items(project, 1)
    item_id = next_item(api, project).json()["id"]
    response = put_label(api, project, item_id, "   ")
    assert response.status_code == 400
    assert "summary" in response.json()["detail"]
    assert not Annotation.objects.filter(item_id=item_id).exists()
    assert put_label(api, project, item_id, "loss is NaN").status_code == 201


def test_summary_optional_when_the_project_says_so(api, project):
    project.summary_required = False
    project.save()
    items(project, 1)
    item_id = next_item(api, project).json()["id"]
    assert put_label(api, project, item_id, "").status_code == 201


def test_an_edit_cannot_drop_the_required_summary(api, personas, project):
    (item,) = items(project, 1)
    annotation, _ = label(item, personas["volunteer_a"], "C.1", summary="first words")
    response = put_label(api, project, item.pk, "", version=annotation.version)
    assert response.status_code == 400
    annotation.refresh_from_db()
    assert annotation.summary == "first words"


def skip_url(project, item_id):
    return f"/api/projects/{project.slug}/items/{item_id}/skip/"


def test_a_skip_taken_back_is_reserved_again_and_audited(api, personas, project):
    items(project, 2)
    item_id = next_item(api, project).json()["id"]
    assert api.post(skip_url(project, item_id), {"reason": "not English"}).status_code == 201
    assert next_item(api, project).json()["id"] != item_id  # never sent again while skipped

    response = api.delete(skip_url(project, item_id))
    assert response.status_code == 200
    assert response.json()["item"] == item_id
    me = personas["volunteer_a"]
    assert not Skip.objects.filter(item_id=item_id, volunteer=me).exists()
    assert Reservation.objects.filter(item_id=item_id, volunteer=me).exists()
    event = AuditEvent.objects.get(item_id=item_id, action=Action.UNSKIP)
    assert event.before == {"reason": "not English"}
    assert put_label(api, project, item_id, "back again").status_code == 201


def test_taking_back_a_skip_that_is_not_there_is_a_409(api, project):
    (item,) = items(project, 1)
    response = api.delete(skip_url(project, item.pk))
    assert response.status_code == 409
    assert "skip" in response.json()["detail"]


def test_a_skip_is_not_taken_back_when_the_item_filled_meanwhile(api, personas, project):
    project.overlap_k = 1
    project.save()
    (item,) = items(project, 1)
    assert next_item(api, project).json()["id"] == item.pk
    api.post(skip_url(project, item.pk), {"reason": ""})
    label(item, personas["volunteer_b"], "C.2")
    response = api.delete(skip_url(project, item.pk))
    assert response.status_code == 409
    assert "already has its 1 labels" in response.json()["detail"]
    assert Skip.objects.filter(item=item, volunteer=personas["volunteer_a"]).exists()


def test_my_labels_lists_my_skips_and_takes_one_back(client, personas, project):
    (item,) = items(project, 1)
    me = personas["volunteer_a"]
    client.force_login(me)
    claimed = client.post(f"/api/projects/{project.slug}/next-item/", {}).json()["id"]
    client.post(f"/projects/{project.slug}/items/{claimed}/skip/", {"reason": "not English"})
    page = client.get(f"/projects/{project.slug}/my-labels/").content.decode()
    assert 'id="my-skips"' in page
    assert "not English" in page
    assert f"/items/{item.pk}/unskip/" in page

    response = client.post(f"/projects/{project.slug}/items/{item.pk}/unskip/")
    assert response.status_code == 302
    assert response["Location"] == f"/projects/{project.slug}/items/{item.pk}/label/"
    assert not Skip.objects.filter(item=item, volunteer=me).exists()
    assert client.get(response["Location"]).status_code == 200  # reserved for me again


def test_taking_back_a_skip_refused_by_the_rule_says_why(client, personas, project):
    (item,) = items(project, 1)
    client.force_login(personas["volunteer_a"])
    response = client.post(f"/projects/{project.slug}/items/{item.pk}/unskip/", follow=True)
    assert "no skip to take back" in response.content.decode()
