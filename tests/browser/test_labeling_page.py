"""The volunteer's pages in a real chromium, driven from the keyboard: screening, labeling two
items, a draft that survives a reload, and blindness before cross-check."""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import Page, expect

from annotation.models import Annotation, Item, ScreeningVote, Stage
from tests.annotation.labeling_helpers import items, label
from tests.browser.test_pages import collect_errors, scripts_ready, sign_in

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
    page.keyboard.press("r")
    expect(page.locator("#screen-reason")).to_be_focused()
    page.keyboard.type("a real bug report")
    page.keyboard.press("Enter")
    expect(page.locator("#why-none")).to_contain_text("Nothing left to screen")
    vote = ScreeningVote.objects.get(item=candidate)
    assert (vote.relevant, vote.reason) == (True, "a real bug report")

    page.goto(f"/projects/{project.slug}/label/")
    label_with_keys(page, "3", "1", "loss becomes NaN with bf16")  # C Bug > C.1
    expect(page.locator(".messages")).to_contain_text("Saved: C.1")
    label_with_keys(page, "1", "2", "how to resume training")  # A Question > A.2
    expect(page.locator(".messages")).to_contain_text("Saved: A.2")

    mine = dict(
        Annotation.objects.filter(volunteer=personas["volunteer_a"]).values_list(
            "item_id", "node__code"
        )
    )
    # The screened candidate is open now: two of the three open items got a label each, in
    # the queue's random order, and the third is still waiting.
    three = [candidate.pk, first.pk, second.pk]
    assert sorted(mine.values()) == ["A.2", "C.1"]
    assert set(mine) < set(three)
    assert Item.objects.filter(pk__in=three, label_count=0).count() == 1
    assert errors == []


def label_with_keys(page: Page, type_key: str, theme_key: str, summary: str) -> None:
    expect(page.locator("#label-form")).to_be_visible()
    body_focused(page)
    page.keyboard.press(type_key)
    expect(page.locator("#picker-path")).to_contain_text("\u203a")
    page.keyboard.press(theme_key)
    expect(page.locator("#summary")).to_be_focused()
    hint = page.locator("#summary-hint")
    expect(hint).to_contain_text("Symptom" if type_key == "3" else "Intent")
    page.keyboard.type(summary)
    page.keyboard.press("Enter")
    page.wait_for_load_state()


def test_draft_survives_a_reload_and_is_cleared_on_submit(page, personas, project):
    (item,) = items(project, 1)
    sign_in(page, "volunteer_a")
    page.goto(f"/projects/{project.slug}/label/")
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
    expect(page.locator(".messages")).to_contain_text("Saved: B.1")
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
