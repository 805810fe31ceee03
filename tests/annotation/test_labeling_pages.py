"""The volunteer's pages over HTTP: who may come in, labeling with POST-redirect-GET, stale edits,
skipping, screening, the lead's dispute list, empty states, and blindness in the HTML."""

from __future__ import annotations

import html
import re

import pytest
from django.test import Client
from django.utils import timezone

from annotation.labeling.services import annotation_submit
from annotation.models import Annotation, Item, PilotStatus, Reservation, ScreeningVote, Skip, Stage
from annotation.screening.services import screening_vote
from ingest.models import Comment, KeywordMatch, KeywordSet
from tests.annotation.labeling_helpers import hand_out, items, label, node

SECRET = "SECRET-SUMMARY-OF-B"


def page_text(response) -> str:
    return " ".join(html.unescape(re.sub(r"<[^>]+>", " ", response.content.decode())).split())


def as_user(client, user):
    client.force_login(user)
    return client


# ---------------------------------------------------------------- who may come in

PAGES = ["/label/", "/my-labels/", "/screen/"]


@pytest.mark.parametrize("page", PAGES)
def test_anonymous_is_sent_to_sign_in(client, project, page):
    response = client.get(f"/projects/{project.slug}{page}")
    assert response.status_code == 302
    assert response["Location"].startswith("/accounts/login/")


@pytest.mark.parametrize("page", [*PAGES, "/screening-disputes/"])
def test_member_of_another_project_gets_404(client, personas, project, page):
    as_user(client, personas["outsider"])
    assert client.get(f"/projects/{project.slug}{page}").status_code == 404


@pytest.mark.parametrize(("who", "code"), [("volunteer_a", 403), ("lead", 200), ("admin", 200)])
def test_screening_disputes_are_for_leads(client, personas, project, who, code):
    as_user(client, personas[who])
    assert client.get(f"/projects/{project.slug}/screening-disputes/").status_code == code


@pytest.mark.parametrize("who", ["volunteer_a", "lead", "admin"])
def test_members_may_label(client, personas, project, who):
    items(project, 1)
    as_user(client, personas[who])
    response = client.get(f"/projects/{project.slug}/label/")
    assert response.status_code == 200
    assert b'id="label-form"' in response.content


def test_forms_are_csrf_protected(personas, project):
    (item,) = items(project, 1)
    client = Client(enforce_csrf_checks=True)
    client.force_login(personas["volunteer_a"])
    url = f"/projects/{project.slug}/items/{item.pk}/label/"
    assert client.post(url, {"node": "C.1", "summary": "x"}).status_code == 403
    skip = f"/projects/{project.slug}/items/{item.pk}/skip/"
    assert client.post(skip, {"reason": "x"}).status_code == 403
    assert not Annotation.objects.exists()
    assert not Skip.objects.exists()


# ---------------------------------------------------------------- labeling


@pytest.fixture
def issue_item(project):
    (item,) = items(project, 1)
    issue = item.issue
    issue.title = "Llama2 <b>OOM</b>"
    issue.body = (
        "Training llama fails.\n\n```python\nmodel = llama()\n```\n<script>alert(1)</script>"
    )
    issue.labels = ["bug", "triage"]
    issue.save()
    Comment.objects.create(host="github", comment_id=1, issue=issue, author="maint",
                           body="Try **bf16** <img src=x onerror=alert(2)>")  # fmt: skip
    keywords = KeywordSet.objects.create(name="megatron", keywords=["llama"])
    KeywordMatch.objects.create(issue=issue, keyword_set=keywords, keywords=["llama"])
    return item


def test_label_page_shows_the_issue_safely_with_keywords_marked(client, personas, issue_item):
    as_user(client, personas["volunteer_a"])
    response = client.get(f"/projects/{issue_item.project.slug}/label/")
    body = response.content.decode()
    assert '<mark class="kw">Llama</mark>2 &lt;b&gt;OOM&lt;/b&gt;' in body
    assert '<code class="language-python">model = <mark class="kw">llama</mark>()' in body
    assert "<script>alert" not in body
    assert "onerror" not in body
    assert "<strong>bf16</strong>" in body
    assert 'href="https://github.com/NVIDIA/Megatron-LM/issues/' in body
    assert "triage" in body
    # the picker: the themes of the study taxonomy, numbered, with definitions and examples
    assert 'name="node"' in body
    assert 'value="C.1"' in body
    assert (
        body.count('name="node"')
        == issue_item.project.taxonomy.nodes.filter(level="theme", retired_at__isnull=True).count()
    )
    assert 'data-hint="Symptom' in body
    assert "js/labeling.js" in body
    assert "<script>" not in body  # no inline script under the CSP


def test_submit_redirects_to_the_next_item_and_a_retry_is_harmless(client, personas, project):
    both = items(project, 2)
    as_user(client, personas["volunteer_a"])
    client.get(f"/projects/{project.slug}/label/")
    first = Reservation.objects.get(volunteer=personas["volunteer_a"]).item  # the one handed out
    (second,) = [item for item in both if item != first]
    url = f"/projects/{project.slug}/items/{first.pk}/label/"
    response = client.post(url, {"node": "C.1", "summary": "loss is NaN", "version": ""})
    assert response.status_code == 302
    assert response["Location"] == f"/projects/{project.slug}/label/"
    again = client.post(url, {"node": "C.1", "summary": "loss is NaN", "version": ""})
    assert again.status_code == 302
    assert Annotation.objects.filter(item=first).count() == 1
    response = client.get(f"/projects/{project.slug}/label/", follow=True)
    assert f"items/{second.pk}/label/" in response.content.decode()


def test_bad_node_keeps_the_input_and_says_why(client, personas, project):
    (item,) = items(project, 1)
    as_user(client, personas["volunteer_a"])
    url = f"/projects/{project.slug}/items/{item.pk}/label/"
    response = client.post(url, {"node": "C", "summary": "my words"})
    assert response.status_code == 400
    assert "this project labels at theme depth" in page_text(response)
    assert 'value="my words"' in response.content.decode()


def test_a_category_retired_while_i_was_labeling_is_refused_and_my_words_kept(
    client, personas, project
):
    from django.utils import timezone

    (item,) = items(project, 1)
    as_user(client, personas["volunteer_a"])
    page = client.get(f"/projects/{project.slug}/label/")
    assert 'value="C.2"' in page.content.decode()  # offered when the page was built
    retired = node(project, "C.2")
    type(retired).objects.filter(pk=retired.pk).update(retired_at=timezone.now())
    response = client.post(
        f"/projects/{project.slug}/items/{item.pk}/label/", {"node": "C.2", "summary": "my words"}
    )
    assert response.status_code == 400
    assert "was retired" in page_text(response)
    assert 'value="my words"' in response.content.decode()
    assert not Annotation.objects.exists()


def test_an_item_finished_while_i_was_labeling_it_is_a_clear_conflict(client, personas, project):
    """k = 3: while I hold the item, my reservation lapses and three others label it."""
    from annotation.models import Reservation
    from tests.annotation.labeling_helpers import volunteers

    (item,) = items(project, 1)
    as_user(client, personas["volunteer_a"])
    client.get(f"/projects/{project.slug}/label/")
    Reservation.objects.filter(item=item).update(expires_at=timezone.now())  # lapsed
    for other in volunteers(project, 3, prefix="quick"):
        label(item, other, code="C.1")
    item.refresh_from_db()
    assert item.stage == Stage.FINAL
    response = client.post(
        f"/projects/{project.slug}/items/{item.pk}/label/", {"node": "C.2", "summary": "my words"}
    )
    assert response.status_code == 409
    assert "already has its 3 labels; ask for the next item" in page_text(response)
    assert 'value="my words"' in response.content.decode()
    assert not Annotation.objects.filter(volunteer=personas["volunteer_a"]).exists()


def test_stale_edit_is_409_shows_the_stored_label_and_keeps_my_input(client, personas, project):
    (item,) = items(project, 1)
    me = personas["volunteer_a"]
    annotation, _ = label(item, me, summary="first")
    annotation_submit(item=item, volunteer=me, node=node(project, "C.2"), summary="other tab",
                      version=1)  # fmt: skip
    as_user(client, me)
    url = f"/projects/{project.slug}/items/{item.pk}/label/"
    response = client.post(url, {"node": "C.3", "summary": "my new words", "version": "1"})
    assert response.status_code == 409
    text = page_text(response)
    assert "changed in another tab or by a retry" in text
    assert "Stored now: C.2" in text
    content = response.content.decode()
    assert 'value="my new words"' in content
    assert 'name="node" checked value="C.3"' in content
    assert 'name="version" value="2"' in content
    annotation.refresh_from_db()
    assert annotation.summary == "other tab"
    # sending again on the version now shown is a deliberate edit
    response = client.post(url, {"node": "C.3", "summary": "my new words", "version": "2"})
    assert response.status_code == 302
    annotation.refresh_from_db()
    assert (annotation.node.code, annotation.version) == ("C.3", 3)


def test_item_page_is_only_for_items_i_hold_or_labeled_others_lead_on(client, personas, project):
    both = items(project, 2)
    as_user(client, personas["volunteer_a"])
    client.get(f"/projects/{project.slug}/label/")  # reserves one of them
    held = Reservation.objects.get(volunteer=personas["volunteer_a"]).item
    (other,) = [item for item in both if item != held]
    assert client.get(f"/projects/{project.slug}/items/{held.pk}/label/").status_code == 200
    not_mine = client.get(f"/projects/{project.slug}/items/{other.pk}/label/")
    assert not_mine.status_code == 302  # on to the next item, the same for every id not mine
    assert not_mine["Location"] == f"/projects/{project.slug}/label/"
    assert client.get(f"/projects/{project.slug}/items/999999/label/")["Location"] == (
        f"/projects/{project.slug}/label/"
    )


def test_skip_asks_for_the_next_item(client, personas, project):
    first, second = items(project, 2)
    as_user(client, personas["volunteer_a"])
    hand_out(first, personas["volunteer_a"])
    response = client.post(
        f"/projects/{project.slug}/items/{first.pk}/skip/", {"reason": "not English"}
    )
    assert response.status_code == 302
    assert Skip.objects.get(item=first).reason == "not English"
    response = client.get(f"/projects/{project.slug}/label/")
    assert f"items/{second.pk}/label/" in response.content.decode()


def test_my_labels_lists_mine_with_edit_links_while_editable(client, personas, project):
    open_item, done = items(project, 2)
    me = personas["volunteer_a"]
    label(open_item, me, summary="mine open")
    label(done, me, summary="mine done")
    Item.objects.filter(pk=done.pk).update(stage=Stage.FINAL)
    label(open_item, personas["volunteer_b"], summary=SECRET)
    as_user(client, me)
    response = client.get(f"/projects/{project.slug}/my-labels/")
    text = page_text(response)
    assert "mine open" in text
    assert "mine done" in text
    assert SECRET not in text
    content = response.content.decode()
    assert f'href="/projects/{project.slug}/items/{open_item.pk}/label/">Edit' in content
    assert f'href="/projects/{project.slug}/items/{done.pk}/label/">View' in content


@pytest.mark.parametrize(
    ("setup", "says"),
    [
        ("nothing", "Nothing left to label"),
        ("quota", "reached this project's quota"),
        ("pilot", "The lead is running a pilot; labeling opens when it closes"),
    ],
)
def test_empty_states_say_why(client, personas, project, setup, says):
    me = personas["volunteer_a"]
    if setup == "quota":
        project.quota_per_volunteer = 1
        (item,) = items(project, 2)[:1]
        label(item, me)
    if setup == "pilot":
        project.pilot_status = PilotStatus.RUNNING
        items(project, 1, in_pilot=True)
    project.save()
    as_user(client, me)
    response = client.get(f"/projects/{project.slug}/label/")
    assert response.status_code == 200
    assert says in page_text(response)


# ---------------------------------------------------------------- blindness


@pytest.fixture
def two_labels(project, personas):
    """One item with labels from volunteer_b (the secret summary) and lead; volunteer_a next."""
    (item,) = items(project, 1)
    label(item, personas["volunteer_b"], code="C.2", summary=SECRET)
    label(item, personas["lead"], code="C.1", summary="lead's words")
    return item


def test_no_other_label_before_cross_check(client, personas, project, two_labels):
    as_user(client, personas["volunteer_a"])
    response = client.get(f"/projects/{project.slug}/label/")
    content = response.content.decode()
    assert f"items/{two_labels.pk}/label/" in content
    assert SECRET not in content
    assert "lead's words" not in content
    assert "volunteer_b" not in content
    assert 'id="others-labels"' not in content


@pytest.mark.parametrize("reveal", [True, False])
def test_others_labels_appear_after_cross_check_when_the_project_allows(
    client, personas, project, two_labels, reveal
):
    project.reveal_after_cross_check = reveal
    project.save()
    label(two_labels, personas["volunteer_a"], code="C.3", summary="my words")
    as_user(client, personas["volunteer_a"])
    response = client.get(f"/projects/{project.slug}/items/{two_labels.pk}/label/")
    assert response.status_code == 200
    content = response.content.decode()
    assert (SECRET in content) is reveal
    assert ("volunteer_b" in content) is reveal
    assert "my words" in content


# ---------------------------------------------------------------- screening


@pytest.fixture
def candidate(project):
    project.screening_enabled = True
    project.save()
    (item,) = items(project, 1, stage=Stage.CANDIDATE)
    return item


def test_screen_page_votes_and_moves_on(client, personas, project, candidate):
    as_user(client, personas["volunteer_a"])
    response = client.get(f"/projects/{project.slug}/screen/")
    assert f"items/{candidate.pk}/screen/" in response.content.decode()
    assert "js/screening.js" in response.content.decode()
    response = client.post(
        f"/projects/{project.slug}/items/{candidate.pk}/screen/",
        {"verdict": "irrelevant", "reason": "a pull request"},
    )
    assert response["Location"] == f"/projects/{project.slug}/screen/"
    vote = ScreeningVote.objects.get(item=candidate)
    assert (vote.relevant, vote.reason) == (False, "a pull request")
    response = client.get(f"/projects/{project.slug}/screen/")
    assert "Nothing left to screen" in page_text(response)


def test_lead_decides_a_screening_dispute_on_the_page(client, personas, project, candidate):
    for who in ("volunteer_a", "volunteer_b"):
        hand_out(candidate, personas[who])  # as the screening page does
    screening_vote(item=candidate, volunteer=personas["volunteer_a"], relevant=True)
    screening_vote(item=candidate, volunteer=personas["volunteer_b"], relevant=False, reason="dup")
    as_user(client, personas["lead"])
    response = client.get(f"/projects/{project.slug}/screening-disputes/")
    assert "dup" in page_text(response)
    url = f"/projects/{project.slug}/items/{candidate.pk}/screening-decision/"
    response = client.post(url, {"decision": "open", "reason": "real bug"})
    assert response.status_code == 302
    candidate.refresh_from_db()
    assert candidate.stage == Stage.OPEN
    as_user(client, personas["volunteer_a"])
    assert client.post(url, {"decision": "exclude"}).status_code == 403


# ---------------------------------------------------------------- home and project page


def test_home_and_project_page_show_what_waits_and_progress(client, personas, project):
    project.screening_enabled = True
    project.guidelines = "Label the **root cause**.\n\n<script>alert(1)</script>"
    project.save()
    items(project, 3, stage=Stage.OPEN)
    (cand,) = items(project, 1, stage=Stage.CANDIDATE)
    as_user(client, personas["volunteer_a"])
    home = client.get("/")
    text = page_text(home)
    assert "Screen 1" in text
    assert "Label 3" in text
    assert f'href="/projects/{project.slug}/#guidelines"' in home.content.decode()

    detail = client.get(f"/projects/{project.slug}/")
    content = detail.content.decode()
    assert "<strong>root cause</strong>" in content
    assert "<script>alert" not in content
    assert re.search(r"Start screening\s*<span class=\"count\">1</span>", content)
    assert re.search(r"Start labeling\s*<span class=\"count\">3</span>", content)
    assert "false-positive rate" in page_text(detail)
    assert cand.stage == Stage.CANDIDATE
