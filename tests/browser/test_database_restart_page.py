"""The labeling page in a real chromium while PostgreSQL is down: the label sent in the background
is refused (503) while the next item (held ready before the crash) is on screen; the refused item
waits in a notice with the reason, and "Go back to it" brings it back with the volunteer's words,
with no automatic reload; once the database is back, a reload shows the same item with the draft
restored, and the submit goes through."""

from __future__ import annotations

import secrets
import time

import pytest
from playwright.sync_api import expect

from tests.browser.conftest import TIMEOUT_MS
from tests.browser.test_pages import scripts_ready, sign_in
from tests.stack import app_on_private_postgres

pytestmark = pytest.mark.browser

SLUG = "faults-page"
PASSWORD = secrets.token_urlsafe(12)


@pytest.fixture(scope="module")
def app():
    with app_on_private_postgres(
        slug=SLUG, volunteers=1, items=5, password=PASSWORD, workers=1, threads=2
    ) as app:
        yield app


def test_a_submit_while_the_database_is_down_keeps_the_draft(browser, app):
    context = browser.new_context(base_url=app.server.base_url)
    context.set_default_timeout(TIMEOUT_MS)
    page = context.new_page()
    sign_in(page, app.usernames[0], PASSWORD)
    page.goto(f"/projects/{SLUG}/label/")
    scripts_ready(page)
    page.evaluate("document.activeElement && document.activeElement.blur()")
    page.keyboard.press("1")  # the first type, then its first theme
    page.keyboard.press("1")
    chosen = page.locator('input[name="node"]:checked').get_attribute("value")
    page.keyboard.type("written while the database was down")
    item_heading = page.locator("h1").inner_text()
    page.wait_for_load_state("networkidle")  # the next item is held ready before the crash

    app.cluster.crash()
    with page.expect_response(lambda r: r.request.method == "PUT") as answer:
        page.keyboard.press("Enter")
    assert answer.value.status == 503
    assert answer.value.headers["retry-after"] == "5"
    # The label was sent in the background while the next item came on screen; its refusal waits
    # in the notice, and going back to it brings my words back.
    notice = page.locator("#refused-notice")
    expect(notice).to_contain_text("database is not answering")
    notice.get_by_role("button", name="Go back to it").click()
    error = page.locator("#label-error")
    expect(error).to_contain_text("Not saved")
    expect(error).to_contain_text("database is not answering")
    expect(page.locator("h1")).to_have_text(item_heading)
    expect(page.locator("#summary")).to_have_value("written while the database was down")
    expect(page.locator(f'input[name="node"][value="{chosen}"]')).to_be_checked()
    navigations = []
    page.on("framenavigated", lambda frame: navigations.append(frame.url))
    time.sleep(2)
    assert navigations == [], "the page must not reload itself"

    app.cluster.start()
    page.reload()  # a reload keeps the draft too: it is on the device until the server confirms
    expect(page.locator("h1")).to_have_text(item_heading)  # the same item, still mine
    expect(page.locator("#summary")).to_have_value("written while the database was down")
    expect(page.locator(f'input[name="node"][value="{chosen}"]')).to_be_checked()
    expect(page.locator("#draft-status")).to_contain_text("restored")
    page.locator("#summary").press("Enter")
    expect(page.locator("#flow-status")).to_contain_text(f"Saved: {chosen}")
    assert len(app.figures()["stored"]) == 1
    context.close()
