"""The volunteer's pages in a real chromium, driven from the keyboard: screening, labeling two
items, a draft that survives a reload, and blindness before cross-check."""

from __future__ import annotations

import json
import re
from urllib.parse import parse_qs, urlsplit

import pytest
from django.urls import reverse
from playwright.sync_api import Page, expect

from annotation.models import Annotation, Item, ScreeningVote, Skip, Stage
from concord.models import PersonSettings
from ingest.models import Issue
from tests.annotation.labeling_helpers import items, label
from tests.browser.test_pages import collect_errors, scripts_ready, sign_in
from tests.factories import PASSWORD

pytestmark = pytest.mark.browser

SECRET = "SECRET-SUMMARY-OF-B"


def body_focused(page: Page) -> None:
    """Start keyboard work from the page once its scripts run, not from a link the sign-in left
    focused."""
    scripts_ready(page)
    page.evaluate("document.activeElement && document.activeElement.blur()")


def test_volunteer_screens_and_labels_two_items_with_the_keyboard(page, personas, project):
    project.screening_enabled = True
    project.screening_votes = 1
    project.save()
    (candidate,) = items(project, 1, stage=Stage.CANDIDATE)
    first, second = items(project, 2)
    errors = collect_errors(page)
    sign_in(page, "volunteer_a")

    page.goto(f"/projects/{project.slug}/screen/")
    expect(page.locator("#screen-form")).to_have_attribute(
        "action", re.compile(rf"/items/{candidate.pk}/screen/$")
    )
    body_focused(page)
    page.keyboard.press("?")  # the key list: a modal dialog, Tab stays in it, Esc closes it
    expect(page.locator("#keys-overlay")).to_be_visible()
    expect(page.locator("#keys-close")).to_be_focused()
    for _ in range(4):
        page.keyboard.press("Tab")
        assert page.evaluate(
            "document.getElementById('keys-overlay').contains(document.activeElement)"
        )
    page.keyboard.press("Escape")
    expect(page.locator("#keys-overlay")).to_be_hidden()
    body_focused(page)
    page.keyboard.press("r")
    expect(page.locator("#screen-reason")).to_be_focused()
    page.keyboard.type("a real bug report")
    page.keyboard.press("Enter")
    expect(page.locator("#why-none")).to_contain_text("Nothing left to screen")
    vote = ScreeningVote.objects.get(item=candidate)
    assert (vote.relevant, vote.reason) == (True, "a real bug report")

    page.goto(f"/projects/{project.slug}/label/")
    label_with_keys(page, "3", "1", "loss becomes NaN with bf16")  # C Bug > C.1
    expect(page.locator("#flow-status")).to_contain_text("Saved: C.1")
    label_with_keys(page, "1", "2", "how to resume training")  # A Question > A.2
    expect(page.locator("#flow-status")).to_contain_text("Saved: A.2")

    mine = dict(
        Annotation.objects.filter(volunteer=personas["volunteer_a"]).values_list(
            "item_id", "node__code"
        )
    )
    # The screened candidate is open now: two of the three open items got a label each, in
    # the queue's random order, and the third is on screen, waiting.
    three = [candidate.pk, first.pk, second.pk]
    assert sorted(mine.values()) == ["A.2", "C.1"]
    assert set(mine) < set(three)
    assert Item.objects.filter(pk__in=three, label_count=0).count() == 1
    assert errors == []


def shown_item(page: Page) -> int:
    return int(page.locator("#issue").get_attribute("data-item"))


def label_with_keys(page: Page, type_key: str, theme_key: str, summary: str) -> int:
    """Label the item on screen with the keyboard alone; returns its id once the next one (or
    the empty state) is on screen."""
    expect(page.locator("#label-form")).to_be_visible()
    body_focused(page)
    item = shown_item(page)
    page.keyboard.press(type_key)
    expect(page.locator("#picker-path")).to_contain_text("\u203a")
    page.keyboard.press(theme_key)
    expect(page.locator("#summary")).to_be_focused()
    hint = page.locator("#summary-hint")
    expect(hint).to_contain_text("Symptom" if type_key == "3" else "Intent")
    page.keyboard.type(summary)
    page.keyboard.press("Enter")
    expect(page.locator(f'#issue[data-item="{item}"]')).to_have_count(0)
    return item


def test_draft_survives_a_reload_and_is_cleared_on_submit(page, personas, project):
    (item,) = items(project, 1)
    sign_in(page, "volunteer_a")
    page.goto(f"/projects/{project.slug}/label/")
    expect(page).to_have_url(re.compile(rf"/items/{item.pk}/label/$"))  # the URL follows
    body_focused(page)
    page.keyboard.press("2")  # B Requirement
    page.keyboard.press("Backspace")  # up again
    expect(page.locator("#picker-path")).to_contain_text("Choose a type")
    page.keyboard.press("2")
    page.keyboard.press("1")  # B.1
    page.keyboard.type("support for NPUs")

    page.reload()
    expect(page.locator("#summary")).to_have_value("support for NPUs")
    expect(page.locator('input[name="node"][value="B.1"]')).to_be_checked()
    expect(page.locator("#draft-status")).to_contain_text("restored")
    page.locator("#summary").press("Enter")
    # The last item: once the label is confirmed, the server's page says why nothing is left.
    expect(page.locator("#why-none")).to_contain_text("Nothing left")
    annotation = Annotation.objects.get(item=item)
    assert (annotation.node.code, annotation.summary) == ("B.1", "support for NPUs")
    key = f"concord:draft:{project.slug}:{item.pk}:{personas['volunteer_a'].pk}"
    assert page.evaluate(f"localStorage.getItem('{key}')") is None


def test_search_and_key_list(page, personas, project):
    items(project, 1)
    sign_in(page, "volunteer_a")
    page.goto(f"/projects/{project.slug}/label/")
    body_focused(page)
    page.keyboard.press("?")
    expect(page.locator("#keys-overlay")).to_be_visible()
    page.keyboard.press("Escape")
    expect(page.locator("#keys-overlay")).to_be_hidden()
    page.keyboard.press("/")
    expect(page.locator("#label-search")).to_be_focused()
    page.keyboard.type("quantization")
    expect(page.locator("#search-status")).to_contain_text("matching")
    page.keyboard.press("Enter")
    expect(page.locator("#summary")).to_be_focused()
    checked = page.locator('input[name="node"]:checked')
    expect(checked).to_have_count(1)


def test_label_page_shows_no_other_label_before_cross_check(page, personas, project):
    (item,) = items(project, 1)
    label(item, personas["volunteer_b"], "C.2", summary=SECRET)
    sign_in(page, "volunteer_a")
    page.goto(f"/projects/{project.slug}/label/")
    expect(page.locator("#label-form")).to_have_attribute(
        "action", re.compile(rf"/items/{item.pk}/label/$")
    )
    content = page.content()
    assert SECRET not in content
    assert "volunteer_b" not in content
    assert Item.objects.get(pk=item.pk).label_count == 1


# ---------------------------------------------------------------- no page load between items


def stay_on_this_document(page: Page) -> None:
    """Mark the document; the mark is gone if a page load happens."""
    page.evaluate("window.__sameDocument = true")


def still_same_document(page: Page) -> bool:
    return page.evaluate("window.__sameDocument === true")


def test_ten_labels_with_the_keyboard_alone_including_c10_and_an_undo(page, personas, project):
    items(project, 12)
    errors = collect_errors(page)
    sign_in(page, "volunteer_a")
    page.goto(f"/projects/{project.slug}/label/")
    body_focused(page)
    stay_on_this_document(page)
    # Bug has ten themes: C.10 has a letter, shown on its button.
    page.keyboard.press("3")
    expect(page.locator('li.opt[data-code="C.10"] kbd')).to_have_text("a")
    expect(page.locator('li.opt[data-code="C.10"]')).to_be_visible()
    page.keyboard.press("Backspace")

    keys = [("3", "a"), ("1", "1"), ("2", "2"), ("3", "9"), ("1", "4"),
            ("2", "4"), ("3", "3"), ("1", "3"), ("3", "5")]  # fmt: skip
    labeled = []
    for n, (type_key, theme_key) in enumerate(keys):
        labeled.append(quick_label(page, type_key, theme_key, f"summary {n}"))
    expect(page.locator("#flow-status")).to_contain_text("Saved: C.5")

    # Undo: back to the label just given (C.5), change it to C.6, and go on.
    page.keyboard.press("u")
    expect(page.locator("#issue")).to_have_attribute("data-item", str(labeled[-1]))
    expect(page.locator('input[name="node"][value="C.5"]')).to_be_checked()
    expect(page.locator("#summary")).to_have_value("summary 8")
    expect(page).to_have_url(re.compile(rf"/items/{labeled[-1]}/label/$"))
    expect(page.locator("#summary")).to_be_focused()
    page.keyboard.press("Escape")  # out of the summary box: keys choose again
    page.keyboard.press("Backspace")  # up a level: the type stays chosen
    page.keyboard.press("6")
    expect(page.locator("#summary")).to_be_focused()
    page.keyboard.press("Enter")
    expect(page.locator("#flow-status")).to_contain_text("is C.6")
    labeled.append(quick_label(page, "2", "1", "the tenth"))
    expect(page.locator("#flow-status")).to_contain_text("Saved: B.1")

    assert still_same_document(page)  # ten labels, one undo, no page load
    mine = Annotation.objects.filter(volunteer=personas["volunteer_a"])
    codes = dict(mine.values_list("item_id", "node__code"))
    assert len(codes) == 10
    assert codes[labeled[0]] == "C.10"
    assert codes[labeled[8]] == "C.6"
    assert mine.get(item_id=labeled[8]).version == 2
    assert codes[labeled[9]] == "B.1"
    assert errors == []


def quick_label(page: Page, type_key: str, theme_key: str, summary: str) -> int:
    item = shown_item(page)
    page.keyboard.press(type_key)
    page.keyboard.press(theme_key)
    expect(page.locator("#summary")).to_be_focused()
    page.keyboard.type(summary)
    page.keyboard.press("Enter")
    expect(page.locator("#issue")).not_to_have_attribute("data-item", str(item))
    return item


def test_refusals_say_what_is_missing_and_a_refused_label_comes_back(page, personas, project):
    items(project, 2)
    sign_in(page, "volunteer_a")
    page.goto(f"/projects/{project.slug}/label/")
    body_focused(page)
    error = page.locator("#label-error")
    page.keyboard.press("Enter")
    expect(error).to_contain_text("Nothing chosen yet")
    page.keyboard.press("3")
    page.keyboard.press("Enter")
    expect(error).to_contain_text("Only Bug so far")
    page.keyboard.press("2")
    page.keyboard.press("Enter")  # from the summary box, still empty
    expect(error).to_contain_text("requires one")
    # The server refuses too: the item left labeling meanwhile.
    shown = shown_item(page)
    Item.objects.filter(pk=shown).update(stage=Stage.EXCLUDED)
    page.keyboard.type("my careful words")
    page.keyboard.press("Enter")
    # The next item stays on screen; the refused one waits in a notice, and the volunteer, who
    # has not begun on the next one, finds the way back focused.
    notice = page.locator("#refused-notice")
    expect(notice).to_contain_text("This item is not open for labeling")
    expect(notice).to_contain_text("kept as a draft")
    expect(page.locator("#issue")).not_to_have_attribute("data-item", str(shown))
    go_back = notice.get_by_role("button", name="Go back to it")
    expect(go_back).to_be_focused()
    page.keyboard.press("Enter")
    expect(error).to_contain_text("Not saved: This item is not open for labeling")
    expect(page.locator("#issue")).to_have_attribute("data-item", str(shown))
    # brought back, it is announced as a new item is (issue #32)
    expect(page.locator("#issue-title")).to_be_focused()
    expect(page.locator("#issue-announce")).to_have_text(Item.objects.get(pk=shown).issue.title)
    expect(notice).to_be_hidden()
    expect(page.locator("#summary")).to_have_value("my careful words")
    expect(page.locator('input[name="node"][value="C.2"]')).to_be_checked()
    assert not Annotation.objects.exists()
    page.locator("#go-on").focus()  # the way on, from the keyboard too
    page.keyboard.press("Enter")
    expect(page.locator("#issue")).not_to_have_attribute("data-item", str(shown))
    expect(page.locator("#label-error")).to_be_hidden()


def test_a_skip_is_undone_with_u(page, personas, project):
    items(project, 2)
    sign_in(page, "volunteer_a")
    page.goto(f"/projects/{project.slug}/label/")
    body_focused(page)
    skipped = shown_item(page)
    page.keyboard.press("s")
    expect(page.locator("#skip-reason")).to_be_focused()
    page.keyboard.type("not in English")
    page.keyboard.press("Enter")
    expect(page.locator("#flow-status")).to_contain_text("Skipped")
    assert shown_item(page) != skipped
    assert Skip.objects.filter(item_id=skipped).exists()
    page.keyboard.press("u")
    expect(page.locator("#flow-status")).to_contain_text("Skip taken back")
    expect(page.locator("#issue")).to_have_attribute("data-item", str(skipped))
    assert not Skip.objects.filter(item_id=skipped).exists()


def test_open_the_original_leads_to_the_issues_tracker_for_items_the_script_renders(
    page, personas, project
):
    """The first item is the server's HTML, the next ones the script's, from the API's JSON: in
    both, the link is built from the issue's host, names and number. A stored URL (a row from
    before the check) with a `"` or another host never becomes an attribute or a link."""
    hostile = 'https://evil.example/x" onmouseover="window.__x=1" data-x="'
    for item in items(project, 2):
        Issue.objects.filter(pk=item.issue_id).update(url=hostile)
    sign_in(page, "volunteer_a")
    page.goto(f"/projects/{project.slug}/label/")
    body_focused(page)
    for rendered_by in ("server", "script"):
        issue = Item.objects.get(pk=shown_item(page)).issue
        own = f"https://github.com/{issue.owner}/{issue.repo}/issues/{issue.number}"
        expect(page.locator("#issue-link")).to_have_attribute("href", own)
        page.locator("#issue-link").hover()
        assert page.locator("[onmouseover], [data-x]").count() == 0, rendered_by
        assert page.evaluate("window.__x === undefined"), rendered_by
        if rendered_by == "server":
            page.keyboard.press("s")  # skip: the next item is the script's rendering
            page.keyboard.type("checking the link")
            page.keyboard.press("Enter")
            expect(page.locator("#flow-status")).to_contain_text("Skipped")


def test_arrows_move_focus_and_show_definition_and_examples(page, personas, project):
    items(project, 1)
    sign_in(page, "volunteer_a")
    page.goto(f"/projects/{project.slug}/label/")
    body_focused(page)
    page.keyboard.press("ArrowDown")  # the types: their definitions
    info = page.locator("#option-info")
    expect(info).to_contain_text("A Question")
    expect(info.locator(".definition")).to_contain_text("User confusion")
    page.keyboard.press("Escape")
    page.evaluate("document.activeElement.blur()")
    page.keyboard.press("3")  # Bug: its themes
    page.keyboard.press("ArrowDown")
    page.keyboard.press("ArrowDown")
    expect(info).to_contain_text("C.2")
    expect(info.locator(".below")).to_contain_text("Includes:")
    expect(info.locator(".examples li").first).to_be_visible()  # its sub-themes' examples
    expect(page.locator('li.opt[data-code="C.2"] #option-info')).to_have_count(1)  # beside it
    expect(page.locator('input[name="node"]:checked')).to_have_count(0)  # nothing chosen
    page.keyboard.press("Enter")  # chooses the focused one
    expect(page.locator('input[name="node"][value="C.2"]')).to_be_checked()


def test_digits_pick_search_results(page, personas, project):
    items(project, 1)
    sign_in(page, "volunteer_a")
    page.goto(f"/projects/{project.slug}/label/")
    body_focused(page)
    page.keyboard.press("/")
    page.keyboard.type("install")
    expect(page.locator("#search-status")).to_contain_text("matching")
    second = page.locator("#picker .leaf-level li.opt:not([hidden])").nth(1)
    code = second.get_attribute("data-code")
    page.keyboard.press("2")
    expect(page.locator(f'input[name="node"][value="{code}"]')).to_be_checked()
    expect(page.locator("#label-search")).to_have_value("")


LONG_ISSUE = (
    "See https://github.com/NVIDIA/Megatron-LM/blob/main/megatron/core/"
    + "a" * 300
    + "\n\nsha256:"
    + "f" * 200
    + "\n\n| "
    + " | ".join(f"column {n}" for n in range(30))
    + " |\n|"
    + "---|" * 30
    + "\n\n```\n"
    + "x" * 400
    + "\n```\n\n"
    + "\n\n".join(f"Paragraph {n}: the loss diverges after step {n}." for n in range(80))
    + "\n\n![loss curve](https://example.org/loss.png)\n\n> quoted log line"
)


@pytest.mark.parametrize(("width", "height"), [(390, 844), (1366, 768)])
def test_labeling_page_never_scrolls_sideways(browser, live_server, personas, project, width,
                                              height):  # fmt: skip
    (item,) = items(project, 1)
    issue = item.issue
    issue.title = "Crash in `torch.distributed.launch` with " + "x" * 120
    issue.body = LONG_ISSUE
    issue.save()
    context = browser.new_context(
        base_url=live_server.url, viewport={"width": width, "height": height}
    )
    page = context.new_page()
    try:
        sign_in(page, "volunteer_a")
        page.goto(f"/projects/{project.slug}/label/")
        scripts_ready(page)
        sideways = page.evaluate(
            "document.documentElement.scrollWidth - document.documentElement.clientWidth"
        )
        assert sideways <= 0
        expect(page.locator("#issue-title code")).to_have_text("torch.distributed.launch")
        expect(page.locator("#issue a.image-link")).to_contain_text("loss curve (example.org)")
        # The label panel is reachable without scrolling past the whole issue: its top is on
        # the first screen.
        top = page.evaluate("document.querySelector('.label-panel').getBoundingClientRect().top")
        assert top < height
    finally:
        context.close()


def test_screening_r_and_n_switch_from_the_reason_box_and_enter_alone_is_refused(
    page, personas, project
):
    project.screening_enabled = True
    project.screening_votes = 1
    project.save()
    (candidate,) = items(project, 1, stage=Stage.CANDIDATE)
    sign_in(page, "volunteer_a")
    page.goto(f"/projects/{project.slug}/screen/")
    body_focused(page)
    page.keyboard.press("Enter")
    expect(page.locator("#screen-error")).to_contain_text("Choose first")
    page.keyboard.press("r")
    expect(page.locator("#screen-reason")).to_be_focused()
    page.keyboard.press("n")  # changed my mind, from the reason box
    expect(page.locator("#verdict-irrelevant")).to_be_checked()
    expect(page.locator("#screen-reason")).to_have_value("")
    page.keyboard.type("no framework")  # once a reason is typed, letters are text
    expect(page.locator("#verdict-irrelevant")).to_be_checked()
    page.keyboard.press("Enter")
    expect(page.locator("#why-none")).to_contain_text("Nothing left to screen")
    vote = ScreeningVote.objects.get(item=candidate)
    assert (vote.relevant, vote.reason) == (False, "no framework")


def test_the_url_follows_the_item_so_reload_and_back_work(page, personas, project):
    items(project, 3)
    sign_in(page, "volunteer_a")
    page.goto(f"/projects/{project.slug}/label/")
    body_focused(page)
    first = quick_label(page, "3", "1", "first words")
    second = shown_item(page)
    expect(page).to_have_url(re.compile(rf"/items/{second}/label/$"))
    expect(page.locator("#flow-status")).to_contain_text("Saved: C.1")
    page.reload()
    expect(page.locator("#issue")).to_have_attribute("data-item", str(second))
    page.go_back()  # the item labeled before: my label, to change while it is incomplete
    expect(page.locator("#issue")).to_have_attribute("data-item", str(first))
    expect(page.locator('input[name="node"][value="C.1"]')).to_be_checked()
    expect(page.locator("#summary")).to_have_value("first words")


def test_an_edit_from_my_labels_saves_and_returns_there(page, personas, project):
    (item,) = items(project, 1)
    label(item, personas["volunteer_a"], "C.1", summary="before")
    sign_in(page, "volunteer_a")
    page.goto(f"/projects/{project.slug}/my-labels/")
    page.get_by_role("link", name="Edit").click()
    expect(page.locator('input[name="node"][value="C.1"]')).to_be_checked()
    page.locator("#summary").fill("after")
    page.locator("#summary").press("Enter")
    expect(page).to_have_url(re.compile(r"/my-labels/$"))
    expect(page.locator(".messages")).to_contain_text("is C.1")
    annotation = Annotation.objects.get(item=item)
    assert (annotation.summary, annotation.version) == ("after", 2)
    key = f"concord:draft:{project.slug}:{item.pk}:{personas['volunteer_a'].pk}"
    assert page.evaluate(f"localStorage.getItem('{key}')") is None


def test_a_refused_save_waits_in_a_notice_while_the_keys_stay_with_the_next_item(
    page, personas, project
):
    """The label is refused while the volunteer is already on the next item: the digit they
    type goes to the item they are on, the notice names the refused one and why, and "Go back
    to it" returns to it with its words."""
    items(project, 3)
    sign_in(page, "volunteer_a")
    page.goto(f"/projects/{project.slug}/label/")
    body_focused(page)
    held = []  # the PUT, answered by the test once the volunteer is on the next item

    def hold_put(route):
        if route.request.method == "PUT":
            held.append(route)
        else:
            route.continue_()

    page.route(re.compile(r"/api/projects/[^/]+/items/\d+/annotation/$"), hold_put)
    refused = quick_label(page, "3", "2", "words for the refused one")  # C.2
    now = shown_item(page)
    page.keyboard.press("1")  # A Question, for the item on screen
    expect(page.locator("#picker-path")).to_contain_text("Question")
    for _ in range(50):
        if held:
            break
        page.wait_for_timeout(100)
    assert held, "the label was never sent"
    reason = "Someone else changed this item first."
    held[0].fulfill(
        status=409, content_type="application/json",
        body=json.dumps({"detail": reason, "where": None}),
    )  # fmt: skip
    page.unroute(re.compile(r"/api/projects/[^/]+/items/\d+/annotation/$"))
    notice = page.locator("#refused-notice")
    issue = Item.objects.get(pk=refused).issue
    expect(notice).to_contain_text(str(issue))
    expect(notice).to_contain_text(reason)
    expect(page.locator("#flow-status")).to_contain_text(reason)  # announced
    # The volunteer had begun on this item: the focus stays theirs, and so do the keys.
    expect(notice.get_by_role("button", name="Go back to it")).not_to_be_focused()
    page.keyboard.press("2")  # A.2, on the item on screen
    expect(page.locator("#issue")).to_have_attribute("data-item", str(now))
    expect(page.locator('input[name="node"][value="A.2"]')).to_be_checked()
    expect(page.locator("#summary")).to_be_focused()
    page.keyboard.type("words for this one")
    expect(page.locator("#summary")).to_have_value("words for this one")

    notice.get_by_role("button", name="Go back to it").click()
    expect(page.locator("#issue")).to_have_attribute("data-item", str(refused))
    expect(page).to_have_url(re.compile(rf"/items/{refused}/label/$"))
    expect(page.locator("#summary")).to_have_value("words for the refused one")
    expect(page.locator('input[name="node"][value="C.2"]')).to_be_checked()
    expect(page.locator("#label-error")).to_contain_text(reason)
    expect(notice).to_be_hidden()
    key = f"concord:draft:{project.slug}:{refused}:{personas['volunteer_a'].pk}"
    draft = json.loads(page.evaluate(f"localStorage.getItem('{key}')"))
    assert draft["summary"] == "words for the refused one"
    # Going on from there leads back to the item left for it, its words still there.
    page.locator("#go-on").click()
    expect(page.locator("#issue")).to_have_attribute("data-item", str(now))
    expect(page.locator("#summary")).to_have_value("words for this one")
    expect(page.locator('input[name="node"][value="A.2"]')).to_be_checked()
    assert not Annotation.objects.exists()


def test_an_expired_sign_in_keeps_the_draft_and_leads_back_to_the_item(page, personas, project):
    items(project, 2)
    sign_in(page, "volunteer_a")
    page.goto(f"/projects/{project.slug}/label/")
    body_focused(page)
    item = shown_item(page)
    page.keyboard.press("3")
    page.keyboard.press("1")  # C.1
    expect(page.locator("#summary")).to_be_focused()
    page.keyboard.type("typed while signed out")
    page.context.clear_cookies()  # the session ends
    page.keyboard.press("Enter")

    expect(page.locator("#signin-expired")).to_contain_text("sign-in has expired")
    expect(page.locator("#refused-notice")).not_to_contain_text("credentials")
    expect(page.locator("#go-on")).to_have_count(0)  # nothing offers to drop the words
    link = page.locator("#signin-link")
    href = link.get_attribute("href")
    assert urlsplit(href).path == reverse("login")
    item_url = reverse("label-item", args=[project.slug, item])
    assert parse_qs(urlsplit(href).query)["next"] == [item_url]
    key = f"concord:draft:{project.slug}:{item}:{personas['volunteer_a'].pk}"
    draft = json.loads(page.evaluate(f"localStorage.getItem('{key}')"))
    assert (draft["summary"], draft["path"][-1]) == ("typed while signed out", "C.1")
    assert not Annotation.objects.exists()

    # Signing in again leads back to that item, the words restored.
    link.click()
    page.get_by_label("Username").fill("volunteer_a")
    page.get_by_label("Password").fill(PASSWORD)
    page.get_by_role("button", name="Sign in").click()
    expect(page).to_have_url(re.compile(rf"{re.escape(item_url)}$"))
    expect(page.locator("#summary")).to_have_value("typed while signed out")
    expect(page.locator('input[name="node"][value="C.1"]')).to_be_checked()


# ---------------------------------------------------------------- keyboard and screen reader (#32)


def test_a_whole_label_by_keyboard_keeps_the_focus_and_announces_the_next_issue(
    page, personas, project
):
    items(project, 3)
    errors = collect_errors(page)
    sign_in(page, "volunteer_a")
    page.goto(f"/projects/{project.slug}/label/")
    body_focused(page)
    first = shown_item(page)
    announced = page.locator("#issue-announce")
    expect(announced).to_have_attribute("aria-live", "polite")  # in the page from the start
    expect(announced).to_have_text("")
    page.keyboard.press("3")  # Bug: its themes show, the focus stays on the picker
    expect(page.locator("#picker")).to_be_focused()
    page.keyboard.press("ArrowDown")
    page.keyboard.press("ArrowDown")
    expect(page.locator('input[name="node"][value="C.2"]')).to_be_focused()
    page.keyboard.press("Enter")  # chooses C.2: the label is whole, on to the summary
    expect(page.locator("#summary")).to_be_focused()
    page.keyboard.type("loss spikes after a restart")
    page.keyboard.press("Escape")  # out of the box, still in the panel
    expect(page.locator("#picker")).to_be_focused()
    page.keyboard.press("Enter")  # submits

    expect(page.locator("#issue")).not_to_have_attribute("data-item", str(first))
    second = shown_item(page)
    issue = Item.objects.get(pk=second).issue
    expect(page.locator("#issue-title")).to_be_focused()
    expect(announced).to_have_text(issue.title)
    expect(page).to_have_title(f"Label {issue} · {project.name} · Concord")
    expect(page.locator("#flow-status")).to_contain_text("Saved: C.2")

    page.keyboard.press("s")  # the skip box; Esc leaves it onto its summary, in the panel
    expect(page.locator("#skip-reason")).to_be_focused()
    page.keyboard.press("Escape")
    expect(page.locator("#skip > summary")).to_be_focused()
    expect(page.locator("#skip")).not_to_have_attribute("open", "")

    # Outside the panel the keys are the page's own: on the tracker link, a digit chooses
    # nothing and Backspace undoes nothing (the label on the first item stays given).
    page.locator("#issue-link").focus()
    page.keyboard.press("3")
    page.keyboard.press("Backspace")
    expect(page.locator("#picker-path")).to_contain_text("Choose a type")
    expect(page.locator("#issue")).to_have_attribute("data-item", str(second))
    assert Annotation.objects.get(item_id=first).node.code == "C.2"
    assert errors == []


def test_with_single_key_shortcuts_off_digits_do_nothing_and_arrows_still_label(
    page, personas, project
):
    items(project, 2)
    sign_in(page, "volunteer_a")
    page.goto(f"/projects/{project.slug}/label/")
    body_focused(page)
    # The switch is in the key list (a modal: Tab goes round its controls, Close the last).
    page.keyboard.press("?")
    expect(page.locator("#keys-close")).to_be_focused()
    page.keyboard.press("Tab")
    expect(page.locator("#single-keys-switch")).to_be_focused()
    page.keyboard.press("Enter")
    expect(page.locator(".messages")).to_contain_text("Single-key shortcuts are off")
    settings = PersonSettings.objects.get(user=personas["volunteer_a"])
    assert settings.single_key_shortcuts is False

    body_focused(page)
    item = shown_item(page)
    for key in ("3", "1", "s", "u", "/", "?"):
        page.keyboard.press(key)
    expect(page.locator("#picker-path")).to_contain_text("Choose a type")
    expect(page.locator('#picker input[type="radio"]:checked')).to_have_count(0)
    expect(page.locator("#skip")).not_to_have_attribute("open", "")
    expect(page.locator("#keys-overlay")).to_be_hidden()
    expect(page.locator("#label-search")).not_to_be_focused()

    # The arrows, Enter and typing in the summary box still label.
    for _ in range(3):
        page.keyboard.press("ArrowDown")  # A, B, C
    page.keyboard.press("Enter")  # Bug
    expect(page.locator("#picker")).to_be_focused()
    page.keyboard.press("ArrowDown")
    page.keyboard.press("Enter")  # C.1
    expect(page.locator("#summary")).to_be_focused()
    page.keyboard.type("typed 3 and s as words")
    expect(page.locator("#summary")).to_have_value("typed 3 and s as words")
    page.keyboard.press("Enter")
    expect(page.locator("#issue")).not_to_have_attribute("data-item", str(item))
    expect(page.locator("#flow-status")).to_contain_text("Saved: C.1")
