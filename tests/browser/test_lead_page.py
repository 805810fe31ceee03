"""The lead in a real chromium: from the project page to the disputed queue, resolving an item
with the keyboard (m, Enter), and the final label showing on the item and the project page."""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import expect

from annotation.models import Resolution
from concord.person_settings import single_keys_set
from tests.annotation.lead_helpers import labeled_item, trio_fixture  # noqa: F401
from tests.browser.test_pages import scripts_ready, sign_in

pytestmark = pytest.mark.browser


@pytest.fixture
def disputes(project, trio):
    """Two disputed items with the same agreement: the older one heads the queue."""
    first = labeled_item(project, trio, ["C.1", "C.1", "C.2"], title="NCCL timeout at step 1")
    second = labeled_item(project, trio, ["B.1", "B.1", "A.1"], title="Ask: ROCm")
    return first, second


def test_lead_resolves_from_the_queue_with_the_keyboard(page, personas, project, disputes):
    first, second = disputes
    sign_in(page, "lead")
    page.goto(f"/projects/{project.slug}/")
    expect(page.locator("#lead-panel .disputed-count")).to_have_text("2")
    page.locator("#disputed-link").click()
    expect(page.locator("#disputed-queue tbody tr")).to_have_count(2)
    scripts_ready(page)

    # j selects the first row, Enter opens it (a focused link)
    page.keyboard.press("j")
    page.keyboard.press("Enter")
    expect(page).to_have_url(re.compile(rf"/items/{first.pk}/resolve/"))
    scripts_ready(page)
    expect(page.locator("#labels tbody tr")).to_have_count(3)

    # hiding volunteer names is remembered across pages
    page.locator("#hide-names").check()
    expect(page.locator(".volunteer-name").first).to_be_hidden()
    # the keys act with the focus on nothing or in the decide form, not on the checkbox
    page.evaluate("document.activeElement.blur()")

    # ? shows the keys; m picks the majority label; Enter resolves
    page.keyboard.press("?")
    expect(page.locator("#key-help")).to_be_visible()
    page.keyboard.press("?")
    page.keyboard.press("m")
    expect(page.locator("#chosen")).to_contain_text("C.1")
    expect(page.locator("#chosen")).to_contain_text("majority")
    page.keyboard.press("Enter")

    # on to the next disputed item, names still hidden
    expect(page).to_have_url(re.compile(rf"/items/{second.pk}/resolve/"))
    expect(page.locator(".messages")).to_contain_text("C.1")
    expect(page.locator(".volunteer-alias").first).to_be_visible()

    page.goto(f"/projects/{project.slug}/items/{first.pk}/resolve/")
    expect(page.locator("#final-label")).to_contain_text("C.1")
    expect(page.locator("#final-label")).to_contain_text("majority by lead")
    page.goto(f"/projects/{project.slug}/")
    expect(page.locator("#lead-panel .disputed-count")).to_have_text("1")
    expect(page.locator("#recent-decisions")).to_contain_text("NCCL timeout at step 1")
    expect(page.locator("#recent-decisions")).to_contain_text("C.1")


def test_enter_on_the_issue_text_or_the_names_toggle_decides_nothing(
    page, personas, project, disputes
):
    first, second = disputes
    sign_in(page, "lead")
    page.goto(f"/projects/{project.slug}/items/{first.pk}/resolve/")
    scripts_ready(page)
    page.evaluate("document.activeElement && document.activeElement.blur()")
    page.keyboard.press("m")  # a label is picked: Enter in the form would decide with it
    expect(page.locator("#chosen")).to_contain_text("C.1")

    disclosure = page.locator("details.issue")
    disclosure.locator("summary").focus()
    page.keyboard.press("Enter")  # folds the issue text
    expect(disclosure).not_to_have_attribute("open", "")
    page.locator("#hide-names").focus()
    page.keyboard.press("Space")
    expect(page.locator("#hide-names")).to_be_checked()
    page.keyboard.press("Enter")
    page.keyboard.press("Space")  # still on this page, on the same checkbox
    expect(page.locator("#hide-names")).not_to_be_checked()
    expect(page).to_have_url(re.compile(rf"/items/{first.pk}/resolve/$"))
    assert not Resolution.objects.exists()

    # Only the decide button (or Enter in its form) decides.
    page.locator("#resolve-button").focus()
    page.keyboard.press("Enter")
    expect(page).to_have_url(re.compile(rf"/items/{second.pk}/resolve/"))
    assert Resolution.objects.get(item=first).node.code == "C.1"

    # With single-key shortcuts off, m, digits and j do nothing.
    single_keys_set(user=personas["lead"], on=False)
    page.reload()
    scripts_ready(page)
    expect(page.locator("#single-keys")).to_have_attribute("data-single-keys", "off")
    for key in ("m", "1", "j", "?"):
        page.keyboard.press(key)
    expect(page.locator("#chosen")).to_have_text("")
    expect(page.locator("#key-help")).to_be_hidden()
    expect(page).to_have_url(re.compile(rf"/items/{second.pk}/resolve/$"))
