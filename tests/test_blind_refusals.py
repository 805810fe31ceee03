"""Blind refusals: a volunteer who skips, takes a skip back, votes in screening or edits their label
on an item whose stage they may not see (blindness.stage_seen) is refused in the same words
whatever the stage, words that name no stage, in English and in Chinese. Trying item ids must not
tell a volunteer how others voted or labeled (open or labeling, candidate or screening dispute,
disputed or final where labels are never revealed).

Every request is made on the same world and undone after (a savepoint), so the answers differ
only by the item's stage: API answers are compared byte for byte, pages by what they say (the
page after the redirect, whole, or the error beside the form).
"""

from __future__ import annotations

import html
import re
from collections.abc import Callable
from dataclasses import dataclass
from functools import partial

import pytest
from django.db import transaction
from django.test import Client
from django.utils import translation

from annotation.blindness import BLIND, BlindRefusal, stage_seen
from annotation.labeling.assignment import item_skip
from annotation.models import Item, Reservation, Role, Skip, Stage
from tests.annotation.labeling_helpers import hand_out, items, label, volunteers
from tests.test_blindness import normalised

LANGUAGES = ("en", "zh-hans")


@dataclass(frozen=True)
class Answer:
    status: int
    said: str  # what the volunteer reads: the API's detail, or the page's messages / form error
    body: str  # what is compared across stages: the API's bytes, or the page normalised


def undone(call: Callable):
    """The answer to one request, whose every change is then rolled back."""
    with transaction.atomic():
        response = call()
        transaction.set_rollback(True)
    return response


def api_answer(response) -> Answer:
    detail = response.json().get("detail", "") if response.status_code >= 400 else ""
    return Answer(response.status_code, detail, response.content.decode())


def page_answer(response) -> Answer:
    """A page the refusal redirected to (its messages) or rendered with the form (its error)."""
    body = response.content.decode()
    if response.context is not None and response.context.get("error"):
        said = str(response.context["error"])
        return Answer(response.status_code, said, said)  # the page shows the item itself
    said = " ".join(
        html.unescape(re.sub(r"<[^>]+>", " ", m))
        for m in re.findall(r"<li class=\"error\">(.*?)</li>", body)
    )
    return Answer(response.status_code, said.strip(), normalised({"": body})[""])


def stage_names(language: str) -> list[str]:
    with translation.override(language):
        return [str(label).lower() for label in Stage.labels]


def vocabulary(language: str) -> list[str]:
    with translation.override(language):
        return [str(label) for label in BlindRefusal.labels]


def named_stages(text: str, language: str) -> list[str]:
    """The stage names `text` holds, beyond the blind vocabulary's own fixed words."""
    for words in vocabulary(language):
        text = text.replace(words, "")
    return [name for name in stage_names(language) if name in text.lower()]


@pytest.fixture(params=[True, False], ids=["revealed-after-cross-check", "never-revealed"])
def world(request, project, personas):
    """Items in every stage, as a volunteer (volunteer_a) may meet them: ones they never touched
    (`other`), ones they labeled (`mine`) and ones they skipped (`skipped`)."""
    project.reveal_after_cross_check = request.param
    project.save()
    me = personas["volunteer_a"]
    others = volunteers(project, 3, prefix="blind_other")

    def labeled(codes: list[str], *, by_me: str | None = None) -> Item:
        (item,) = items(project, 1)
        if by_me:
            label(item, me, by_me)
        for other, code in zip(others, codes, strict=False):
            label(item, other, code)
        item.refresh_from_db()
        return item

    other = {
        Stage.CANDIDATE: items(project, 1, stage=Stage.CANDIDATE)[0],
        Stage.SCREENING_DISPUTE: items(project, 1, stage=Stage.SCREENING_DISPUTE)[0],
        Stage.EXCLUDED: items(project, 1, stage=Stage.EXCLUDED)[0],
        Stage.OPEN: items(project, 1)[0],
        Stage.LABELING: labeled(["C.1"]),
        Stage.DISPUTED: labeled(["C.1", "C.1", "C.2"]),
        Stage.FINAL: labeled(["C.1", "C.1", "C.1"]),
    }
    mine = {
        Stage.LABELING: labeled([], by_me="C.1"),
        Stage.DISPUTED: labeled(["C.1", "C.2"], by_me="C.1"),
        Stage.FINAL: labeled(["C.1", "C.1"], by_me="C.1"),
    }
    skipped = {}
    for name, codes in (("disputed", ["C.1", "C.1", "C.2"]), ("final", ["C.1", "C.1", "C.1"])):
        (item,) = items(project, 1)
        hand_out(item, me)  # a skip is of an item handed out
        item_skip(item=item, volunteer=me)
        for who, code in zip(others, codes, strict=True):
            label(item, who, code)
        skipped[name] = item
    # final on fewer than k labels (an imported row with its Final_Label)
    (short,) = items(project, 1)
    hand_out(short, me)
    item_skip(item=short, volunteer=me)
    label(short, others[0], "C.1")
    Item.objects.filter(pk=short.pk).update(stage=Stage.FINAL)
    skipped["final, short of k"] = short
    # every item handed to me, so that a screening vote meets the item's stage, not the hand-out
    for item in other.values():
        hand_out(item, me)
    for group in (other, mine, skipped):
        for item in group.values():
            item.refresh_from_db()
    assert {stage: item.stage for stage, item in other.items()} == {s: s for s in other}
    assert {stage: item.stage for stage, item in mine.items()} == {s: s for s in mine}
    return project, me, {"other": other, "mine": mine, "skipped": skipped}


def client_in(user, language: str) -> Client:
    """A client as `user` in `language`: Chinese asked once by the browser's Accept-Language
    (the API) and once by the language cookie the language switch sets (the pages)."""
    client = Client(HTTP_ACCEPT_LANGUAGE=language)
    client.force_login(user)
    return client


def cookie_client(user, language: str) -> Client:
    client = Client()
    client.cookies["django_language"] = language
    client.force_login(user)
    return client


def asks(project) -> dict[str, tuple[str, Callable]]:
    """Each refusal-prone action, by API and by page: (the world's group of items, ask(client,
    item) -> Answer)."""
    api = f"/api/projects/{project.slug}/items"
    pages = f"/projects/{project.slug}/items"
    js = "application/json"
    edit = {"node": "C.2", "summary": "changed my mind", "version": 1}
    return {
        "skip (API)": (
            "other",
            lambda c, i: api_answer(c.post(f"{api}/{i.pk}/skip/", {"reason": ""}, content_type=js)),
        ),
        "skip (page)": (
            "other",
            lambda c, i: page_answer(c.post(f"{pages}/{i.pk}/skip/", {"reason": ""}, follow=True)),
        ),
        "screening vote (API)": (
            "other",
            lambda c, i: api_answer(
                c.post(f"{api}/{i.pk}/screening-vote/", {"relevant": True}, content_type=js)
            ),
        ),
        "screening vote (page)": (
            "other",
            lambda c, i: page_answer(
                c.post(f"{pages}/{i.pk}/screen/", {"verdict": "relevant"}, follow=True)
            ),
        ),
        "edit my label (API)": (
            "mine",
            lambda c, i: api_answer(c.put(f"{api}/{i.pk}/annotation/", edit, content_type=js)),
        ),
        "edit my label (page)": (
            "mine",
            lambda c, i: page_answer(c.post(f"{pages}/{i.pk}/label/", edit)),
        ),
        "take a skip back (API)": (
            "skipped",
            lambda c, i: api_answer(c.delete(f"{api}/{i.pk}/skip/")),
        ),
        "take a skip back (page)": (
            "skipped",
            lambda c, i: page_answer(c.post(f"{pages}/{i.pk}/unskip/", follow=True)),
        ),
    }


@pytest.mark.parametrize("language", LANGUAGES)
def test_a_volunteer_is_refused_in_the_same_words_whatever_stage_they_may_not_see(world, language):
    project, me, groups = world
    api_client = client_in(me, language)
    page_client = cookie_client(me, language) if language != "en" else client_in(me, language)
    blind_seen = 0
    for action, (group, ask) in asks(project).items():
        client = api_client if "(API)" in action else page_client
        answers = {
            stage: undone(partial(ask, client, item)) for stage, item in groups[group].items()
        }
        hidden = {
            stage: answer
            for stage, answer in answers.items()
            if answer.said and stage_seen(groups[group][stage], project, Role.VOLUNTEER) == BLIND
        }
        # The same bytes whatever the stage (API), the same page and message (pages) ...
        assert len({a.body for a in hidden.values()}) <= 1, (action, hidden)
        assert len({(a.status, a.said) for a in hidden.values()}) <= 1, (action, hidden)
        for stage, answer in hidden.items():
            # ... in words of the blind vocabulary, which name no stage, in the asker's language
            assert answer.said in vocabulary(language), (action, stage, answer.said)
            assert named_stages(answer.said, language) == [], (action, stage, answer.said)
            assert str(groups[group][stage].pk) not in answer.said
        blind_seen += len(hidden)
    # the walk did meet refusals of items in hidden stages: 3 skips, 4 votes, by API and page,
    # and (never revealed) 2 more of each, 2 edits and 3 skips taken back
    assert blind_seen == (14 if project.reveal_after_cross_check else 2 * (5 + 6 + 2 + 3))


@pytest.mark.parametrize("language", LANGUAGES)
def test_the_stage_is_named_to_whom_may_see_it(world, personas, language):
    """Control: the same refusals do name the stage where it is not hidden (the lead; a
    volunteer once the item is revealed), so the test above looks where a stage would show."""
    project, me, groups = world
    skip = asks(project)["skip (API)"][1]
    final = groups["other"][Stage.FINAL]
    hand_out(groups["other"][Stage.CANDIDATE], personas["lead"])  # a skip is of an item handed out
    lead = undone(
        lambda: skip(client_in(personas["lead"], language), groups["other"][Stage.CANDIDATE])
    )
    assert stage_names(language)[0] in named_stages(lead.said, language)  # candidate
    volunteer = undone(lambda: skip(client_in(me, language), final))
    if project.reveal_after_cross_check:
        assert stage_names(language)[-1] in named_stages(volunteer.said, language)  # final
    else:
        assert named_stages(volunteer.said, language) == []
    edit = asks(project)["edit my label (API)"][1]
    edited = undone(lambda: edit(client_in(me, language), groups["mine"][Stage.DISPUTED]))
    assert edited.status == 409
    if project.reveal_after_cross_check:
        assert named_stages(edited.said, language) != []
    else:
        assert edited.said in vocabulary(language)


def test_the_walk_leaves_the_world_as_it_was(world):
    """The walk's requests are undone: a skip of an open item does not stick."""
    project, me, groups = world
    item = groups["other"][Stage.OPEN]
    url = f"/api/projects/{project.slug}/items/{item.pk}/skip/"
    client = client_in(me, "en")
    skipped = undone(lambda: client.post(url, {"reason": ""}, content_type="application/json"))
    assert skipped.status_code == 201
    assert not Skip.objects.filter(item=item, volunteer=me).exists()
    assert Reservation.objects.filter(item=item, volunteer=me).exists()
