"""Blindness, generated over the URL conf: while an item is still being labeled, nothing a volunteer
can reach (a page, an API answer, an error message, a count, a download) shows another
volunteer's label on it, nor who gave it. Every URL the role matrix opens to volunteers is asked,
with its own method and with GET, before and after the volunteer labels the item themselves.

A new URL is covered as soon as it has its rule in tests/test_role_matrix.py.
"""

from __future__ import annotations

import pytest
from django.contrib.auth import get_user_model
from django.urls import reverse

from annotation.labeling.assignment import next_item
from annotation.models import Stage
from tests.annotation.labeling_helpers import items, label, node
from tests.factories import MembershipFactory, UserFactory
from tests.test_role_matrix import ALLOWED, RULES, finished_export, open_proposal

User = get_user_model()
SECRET = "SECRET-SUMMARY-OF-ANOTHER-VOLUNTEER"
OTHER = "blindness_other"  # the other volunteer's name: who labeled is hidden too
NOT_WALKED = {"login", "logout"}  # signing out would end the walk
HANDS_BACK = ("label-skip", "api-skip")  # an empty skip is a skip: asked last, it gives the item up
VOLUNTEER_URLS = sorted(
    (name for name, rule in RULES.items() if "volunteer" in ALLOWED[rule.least]),
    key=lambda name: (name in HANDS_BACK, name),
)
VOLUNTEER_URLS = [name for name in VOLUNTEER_URLS if name not in NOT_WALKED]


@pytest.fixture
def world(personas, project, settings, tmp_path):
    """An item with another volunteer's label (k = 3, so far from cross-check) that the
    volunteer now holds; every other object a URL may need."""
    other = UserFactory(username=OTHER)
    MembershipFactory(project=project, user=other)
    (item,) = items(project, 1)
    label(item, other, "C.2", summary=SECRET)
    me = personas["volunteer_a"]
    assert next_item(project=project, volunteer=me).pk == item.pk  # now mine to label
    objects = {
        "project": {"slug": project.slug},
        "taxonomy": {"pk": project.taxonomy_id},
        "node": {"pk": node(project, "C.2").pk},
        "item": {"slug": project.slug, "item_id": item.pk},
        "proposal": {"slug": project.slug, "pk": open_proposal(project, personas)},
        "export": {"slug": project.slug, "export_format": "study"},
        "export_job": {"slug": project.slug, "pk": finished_export(project, settings, tmp_path)},
        "report_chart": {"slug": project.slug, "name": "confusion"},
        "": {},
    }
    return me, item, objects


def answers(client, objects) -> dict[str, str]:
    """Every volunteer-reachable URL's answer: GET, and its own method with an empty body."""
    seen = {}
    for name in VOLUNTEER_URLS:
        rule = RULES[name]
        url = reverse(name, kwargs=objects[rule.kwargs])
        for method in dict.fromkeys(("get", rule.method)):
            response = getattr(client, method)(url)
            body = b"".join(response) if response.streaming else response.content
            seen[f"{method.upper()} {url} ({response.status_code})"] = body.decode(errors="replace")
    return seen


def leaks(seen: dict[str, str]) -> list[str]:
    return [where for where, body in seen.items() if SECRET in body or OTHER in body]


def test_nothing_a_volunteer_reaches_shows_anothers_label_before_cross_check(
    client, world, project
):
    me, _item, objects = world
    client.force_login(me)
    before = answers(client, objects)
    assert len(before) >= len(VOLUNTEER_URLS)
    assert leaks(before) == []

    # The walk skipped the item at its end, so it is no longer mine to label.
    refused = client.post(
        reverse("label-item", kwargs=objects["item"]), {"node": "C.1", "summary": "mine"}
    )
    assert refused.status_code == 403
    assert leaks({"refused label": refused.content.decode()}) == []

    # Labeling another item the other volunteer labeled, handed to me (k = 3: still one label
    # short of the cross-check), changes nothing.
    (second,) = items(project, 1)
    label(second, User.objects.get(username=OTHER), "C.2", summary=SECRET)
    assert next_item(project=project, volunteer=me).pk == second.pk
    objects["item"] = {"slug": project.slug, "item_id": second.pk}
    mine = client.post(
        reverse("label-item", kwargs=objects["item"]), {"node": "C.1", "summary": "mine"}
    )
    assert mine.status_code == 302
    second.refresh_from_db()
    assert second.stage == Stage.LABELING
    assert second.label_count == 2
    after = answers(client, objects)
    assert leaks(after) == []


def test_the_check_sees_a_revealed_label(client, world, personas, project):
    """The same walk does find the label once the item is cross-checked and revealed: the test
    above looks where a leak would show."""
    me, item, objects = world
    third = UserFactory(username="blindness_third")
    MembershipFactory(project=project, user=third)
    label(item, me, "C.1", summary="mine")
    label(item, third, "C.1", summary="third")
    item.refresh_from_db()
    assert item.stage == Stage.DISPUTED
    client.force_login(me)
    assert leaks(answers(client, objects)) != []
