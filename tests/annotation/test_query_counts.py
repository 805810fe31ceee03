"""Query counts pinned on the hot paths (a volunteer's next item and submit, the lead's disputed
queue): a change that adds a query per request, or one per row, fails here. The counts do not
grow with the number of items or labels."""

from __future__ import annotations

import contextlib

import pytest
from rest_framework.test import APIClient

from annotation.labeling import assignment
from annotation.models import Reservation
from tests.annotation.labeling_helpers import items
from tests.annotation.lead_helpers import labeled_item, trio_fixture  # noqa: F401

# pinned at what the code does today (savepoints count); lower them when a change saves a query
# claim (the locked item with its issue), room check and hold in one statement, + the page:
# comments, keywords, picker and the nodes it leaves out (annotation.project_nodes) ...
NEXT_ITEM_PAGE = 17
NEXT_ITEM_PAGE_RESUMED = 14  # the reservation I hold, no claim
# a submit's first statement takes the project's rule lock, shared (concord.db.xact_lock): +1;
# the agreement figures follow it (annotation.figures.tallies.figures_kept): +3
PAGE_SUBMIT = 18
API_NEXT_ITEM = 8
API_SUBMIT = 15
# + the lead's single-key setting (concord.person_settings): one query on a cold cache only
DISPUTED_PAGE = 9
DISPUTED_API = 4


def nullcontext(_limit):
    """Uncounted: the first round compiles the hot path's queries (concord.prepared, once per
    process) and fills the caches; the second round counts the statements every later request
    sends."""
    return contextlib.nullcontext()


@pytest.fixture(params=[5, 40], ids=["few items", "more items"])
def waiting(request, project, monkeypatch):
    # The claim starts at a random point of the queue; one past the last item wraps to the start
    # with one statement more (a chance of about 1 in items + 1). Pinned at 0: the counts below
    # are those of every other claim.
    monkeypatch.setattr(assignment, "claim_start", lambda: 0)
    return items(project, request.param)


def test_next_item_and_submit_through_the_page(
    client, project, personas, waiting, django_assert_max_num_queries
):
    me = personas["volunteer_a"]
    client.force_login(me)
    url = f"/projects/{project.slug}/label/"
    for counted in (nullcontext, django_assert_max_num_queries):  # see nullcontext
        with counted(NEXT_ITEM_PAGE):
            assert client.get(url).status_code == 200
        with counted(NEXT_ITEM_PAGE_RESUMED):
            assert client.get(url).status_code == 200
        item = Reservation.objects.get(volunteer=me).item
        with counted(PAGE_SUBMIT):
            response = client.post(
                f"/projects/{project.slug}/items/{item.pk}/label/", {"node": "C.1", "summary": "x"}
            )
        assert response.status_code == 302


def test_next_item_and_submit_through_the_api(
    project, personas, waiting, django_assert_max_num_queries
):
    api = APIClient()
    api.force_authenticate(personas["volunteer_b"])
    for counted in (nullcontext, django_assert_max_num_queries):  # see nullcontext
        with counted(API_NEXT_ITEM):
            claimed = api.post(f"/api/projects/{project.slug}/next-item/")
        assert claimed.status_code == 200
        url = f"/api/projects/{project.slug}/items/{claimed.json()['id']}/annotation/"
        with counted(API_SUBMIT):
            submitted = api.put(url, {"node": "C.1", "summary": "x"}, format="json")
        assert submitted.status_code == 201


@pytest.mark.parametrize("disputed", [2, 12])
def test_disputed_queue(client, project, personas, trio, disputed, django_assert_max_num_queries):
    for _ in range(disputed):
        labeled_item(project, trio, ["C.1", "C.2", "A.1"])
    client.force_login(personas["lead"])
    with django_assert_max_num_queries(DISPUTED_PAGE):
        assert client.get(f"/projects/{project.slug}/disputed/").status_code == 200
    api = APIClient()
    api.force_authenticate(personas["lead"])
    with django_assert_max_num_queries(DISPUTED_API):
        listed = api.get(f"/api/projects/{project.slug}/disputed/")
    assert listed.status_code == 200
    assert listed.json()["count"] == disputed
