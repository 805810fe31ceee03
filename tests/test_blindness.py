"""Blindness, generated over the URL conf: while an item is still being labeled, nothing a volunteer
can reach (a page, an API answer, an error message, a count, a download) shows another
volunteer's label on it, nor who gave it. Every URL the role matrix opens to volunteers is asked,
with its own method and with GET, before and after the volunteer labels the item themselves.

A new URL is covered as soon as it has its rule in tests/test_role_matrix.py.
"""

from __future__ import annotations

import re

import pytest
from django.contrib.auth import get_user_model
from django.urls import reverse

from annotation.labeling.assignment import next_item
from annotation.models import Stage
from annotation.review.proposals import proposal_create
from tests.annotation.labeling_helpers import items, label, node
from tests.factories import MembershipFactory, UserFactory
from tests.test_role_matrix import (
    ALLOWED,
    RULES,
    finished_export,
    interview_participant,
    interview_transcript,
    invitation_token,
    open_proposal,
)

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


def url_objects(project, personas, settings, tmp_path, item) -> dict[str, dict]:
    """Every object a URL of the role matrix may need, around `item`."""
    settings.VAR_DIR = tmp_path
    return {
        "project": {"slug": project.slug},
        "taxonomy": {"pk": project.taxonomy_id},
        "node": {"pk": node(project, "C.2").pk},
        "item": {"slug": project.slug, "item_id": item.pk},
        "candidate": {"slug": project.slug, "item_id": item.pk},  # a vote on it is refused
        "proposal": {"slug": project.slug, "pk": open_proposal(project, personas)},
        "export": {"slug": project.slug, "export_format": "study"},
        "export_job": {"slug": project.slug, "pk": finished_export(project)},
        "report_chart": {"slug": project.slug, "name": "confusion"},
        "invitation": {"token": invitation_token(project, personas)},
        # the public one-time ranking link of an interview participant (issue 27)
        "ranking_link": {"token": interview_participant(project, personas["lead"])[1]},
        "transcript": interview_transcript(project),
        "password_reset": {"uidb64": "MQ", "token": "set-password"},
        "": {},
    }


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
    return me, item, url_objects(project, personas, settings, tmp_path, item)


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


# ---------------------------------------------------------------- derived signals

VOLATILE = [
    (re.compile(r'name="csrfmiddlewaretoken" value="[^"]*"'), 'name="csrfmiddlewaretoken"'),
    (re.compile(r'nonce="[^"]*"'), "nonce"),
    (re.compile(r'"csrfToken":\s*"[^"]*"'), '"csrfToken"'),
]


def normalised(seen: dict[str, str]) -> dict[str, str]:
    """The answers without what changes on every request (CSRF tokens, CSP nonces)."""
    out = {}
    for where, body in seen.items():
        for pattern, replacement in VOLATILE:
            body = pattern.sub(replacement, body)
        out[where] = body
    return out


def looks(client, objects) -> dict[str, str]:
    """Every volunteer-reachable URL's GET answer (GET only: the walk must not change state)."""
    seen = {}
    for name in VOLUNTEER_URLS:
        url = reverse(name, kwargs=objects[RULES[name].kwargs])
        response = client.get(url)
        body = b"".join(response) if response.streaming else response.content
        seen[f"GET {url} ({response.status_code})"] = body.decode(errors="replace")
    return normalised(seen)


def test_nothing_a_volunteer_reaches_depends_on_others_work_before_all_k_labels(
    client, personas, project, settings, tmp_path
):
    """Not only labels and names: the stage, counts and order are derived from the others' work
    too. Every page and API answer a volunteer can reach is the same, byte for byte, before and
    after other volunteers label the item the volunteer holds and the rest of the queue."""
    me = personas["volunteer_a"]
    others = [UserFactory(username=f"{OTHER}{n}") for n in range(2)]
    for other in others:
        MembershipFactory(project=project, user=other)
    waiting = items(project, 4)
    held = next_item(project=project, volunteer=me)
    objects = url_objects(project, personas, settings, tmp_path, held)
    client.force_login(me)
    before = looks(client, objects)

    label(held, others[0], "C.2", summary=SECRET)  # k = 3: still one short after mine
    for item in waiting:
        if item != held:
            label(item, others[0], "A.1", summary=SECRET)
            label(item, others[1], "A.1", summary=SECRET)
    after = looks(client, objects)

    changed = [where for where in before if before[where] != after.get(where)]
    assert changed == [], changed
    assert before.keys() == after.keys()


def test_the_differential_walk_sees_a_revealed_item(client, personas, project, settings, tmp_path):
    """Control: once the held item has all k labels and is revealed, the same walk does see the
    difference, so the test above looks where a leak would show."""
    me = personas["volunteer_a"]
    items(project, 1)
    held = next_item(project=project, volunteer=me)
    objects = url_objects(project, personas, settings, tmp_path, held)
    label(held, me, "C.1", summary="mine")
    client.force_login(me)
    before = looks(client, objects)
    for n in range(2):
        other = UserFactory(username=f"{OTHER}{n}")
        MembershipFactory(project=project, user=other)
        label(held, other, "C.2", summary=SECRET)
    after = looks(client, objects)
    assert [where for where in before if before[where] != after.get(where)] != []


def test_anothers_proposal_shows_no_item_or_reason_before_i_may_see_the_item(
    client, personas, project
):
    """A proposal says how its proposer saw an item: a volunteer who has not labeled the item
    (and it is not revealed) sees the proposed category, to vote on it, but not which item it
    came from nor the proposer's reason; the lead sees both."""
    me = personas["volunteer_a"]
    (held,) = items(project, 1)
    other = UserFactory(username=OTHER)
    MembershipFactory(project=project, user=other)
    proposal = proposal_create(
        project=project,
        proposer=other,
        parent=node(project, "C"),
        name="A category only the other saw",
        reason=SECRET,
        item=held,
    )
    pages = [f"/projects/{project.slug}/proposals/", f"/api/projects/{project.slug}/proposals/"]
    client.force_login(me)
    for url in pages:
        body = client.get(url).content.decode()
        assert "A category only the other saw" in body
        assert SECRET not in body
        assert held.issue.url not in body
        assert f"items/{held.pk}/" not in body
    api = client.get(pages[1]).json()
    assert [(p["id"], p["items"], p["reason"]) for p in api] == [(proposal.pk, [], "")]
    label(held, me, "C.1")  # once I labeled it myself, I may see what others said of it
    assert client.get(pages[1]).json()[0]["items"] == [held.pk]
    client.force_login(personas["lead"])
    assert SECRET in client.get(pages[0]).content.decode()


# ---------------------------------------------------------------- near-duplicates (#29)


def test_an_items_duplicates_show_a_volunteer_nothing_of_unfinished_items(
    client, personas, project
):
    """The near-duplicates a volunteer is shown of the item they hold (the API; the lead's pages
    are closed to them) list only items whose labels they may already see: others' labels on
    the duplicates change nothing until one has all its k labels; then it shows (the control)."""
    from annotation.duplicates.index import duplicate_index_queue, duplicate_index_run

    me = personas["volunteer_a"]
    others = [UserFactory(username=f"{OTHER}{n}") for n in range(3)]
    for other in others:
        MembershipFactory(project=project, user=other)
    repeats = items(project, 3)
    for item in repeats:  # three reports of one error: each is the others' near-duplicate
        item.issue.title = "CUDA out of memory with sequence parallel and TP=4"
        item.issue.body = "CUDA out of memory at iteration 1 when sequence parallel is enabled."
        item.issue.save()
    duplicate_index_run(job_id=duplicate_index_queue(project=project).pk)
    held = next_item(project=project, volunteer=me)
    url = reverse("api-item-duplicates", kwargs={"slug": project.slug, "item_id": held.pk})
    client.force_login(me)
    before = client.get(url).content
    assert before == b"[]"

    rest = [item for item in repeats if item != held]
    for item in rest:
        label(item, others[0], "C.2", summary=SECRET)
        label(item, others[1], "C.2", summary=SECRET)  # k = 3: one short
    assert client.get(url).content == before

    label(rest[0], others[2], "C.2", summary=SECRET)  # all k labels: final, revealed
    seen = client.get(url).json()
    assert [d["item"]["item"] for d in seen] == [rest[0].pk]
    assert seen[0]["item"]["final_label"]["code"] == "C.2"
