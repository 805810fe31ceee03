"""The server-rendered pages in a real chromium: sign-in, the agreement report, the taxonomy search,
role checks and the Content-Security-Policy.

Each test pays for a database flush, fixture data and a sign-in (~3 s), so a test walks through one
whole scenario; the checks along the way live in small helpers.
"""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import Page, expect

from tests.factories import PASSWORD

pytestmark = pytest.mark.browser

NODES = "#taxonomy-tree li.node"
SHOWN = "#taxonomy-tree li.node:not([hidden])"
MATCHES = "#taxonomy-tree li.node.match"
HAS_MATCH_CLASS = re.compile(r"\bmatch\b")


def scripts_ready(page: Page) -> None:
    """Wait until the current page's scripts have run (static/js/ready.js comes last)."""
    expect(page.locator("html")).to_have_attribute("data-ready", "1")


def sign_in(page: Page, username: str, password: str = PASSWORD) -> None:
    """Fill and submit the login form, as a person would."""
    page.goto("/accounts/login/")
    page.get_by_label("Username").fill(username)
    page.get_by_label("Password").fill(password)
    page.get_by_role("button", name="Sign in").click()
    page.wait_for_load_state()


def node(page: Page, code: str):
    return page.locator(f'#taxonomy-tree li.node[data-code="{code}"]')


# ---------------------------------------------------------------- agreement report


def test_lead_signs_in_and_reads_the_agreement_report(page, personas, labeled_project):
    sign_in(page, "lead")
    # LOGIN_REDIRECT_URL is the home page, which lists the lead's projects.
    expect(page).to_have_url(re.compile(r"/$"))
    page.get_by_role("link", name=labeled_project.name).click()
    expect(page.get_by_role("heading", level=1)).to_have_text(labeled_project.name)

    page.get_by_role("link", name=re.compile("Agreement")).click()
    expect(page).to_have_url(re.compile(rf"/projects/{labeled_project.slug}/agreement/$"))
    expect_report_by_type(page)

    switch_level_to_type(page)
    expect(page.locator("#agreement-table tbody tr").filter(has_text="All items")).to_have_count(1)


def expect_report_by_type(page: Page) -> None:
    rows = page.locator("#agreement-table tbody tr")
    expect(rows.filter(has_text="All items")).to_have_count(1)
    # Grouped by the final label's type: MindSpeed has items of all three types.
    for type_name in ("A Question", "B Requirement", "C Bug"):
        expect(rows.filter(has_text=type_name)).to_have_count(1)
    # The chart draws one labelled bar group per table row, in the table's order.
    groups = page.locator("#agreement-table tbody th").all_text_contents()
    labels = page.locator("svg.kappa-chart g.bar > text:first-child").all_text_contents()
    assert labels == groups


def switch_level_to_type(page: Page) -> None:
    level = page.get_by_label("Level")
    expect(level).to_have_value("theme")  # the default level
    level.select_option(label="Type")
    page.get_by_role("button", name="Show").click()
    expect(page).to_have_url(re.compile(r"[?&]level=type(&|$)"))
    # The form keeps the choice and the report says which level it is at.
    expect(page.get_by_label("Level")).to_have_value("type")
    expect(page.locator("figure.chart figcaption")).to_contain_text("type level")


# ---------------------------------------------------------------- taxonomy search


@pytest.fixture
def taxonomy_page(page, personas, study_taxonomy):
    sign_in(page, "volunteer_a")
    page.goto(f"/taxonomy/{study_taxonomy.pk}/")
    return page


def test_taxonomy_search_narrows_the_tree_and_clears(taxonomy_page):
    page = taxonomy_page
    total = page.locator(NODES).count()
    expect(page.locator(SHOWN)).to_have_count(total)

    search(page, "quantization")
    expect_quantization_matches(page, total)
    search(page, "C.2")
    expect_only_the_bug_type_left(page)

    search(page, "")
    expect(page.locator(SHOWN)).to_have_count(total)
    expect(page.locator(MATCHES)).to_have_count(0)
    expect(page.locator("#search-status")).to_have_text("")

    search(page, "zzqx no such category")
    expect(page.locator("#search-status")).to_contain_text("Nothing matches")
    expect(page.locator("#search-status")).to_contain_text("zzqx no such category")
    expect(page.locator(SHOWN)).to_have_count(0)


def search(page: Page, text: str) -> None:
    page.locator("#taxonomy-search").fill(text)  # fires `input`, as typing does


def expect_quantization_matches(page: Page, total: int) -> None:
    assert 0 < page.locator(SHOWN).count() < total
    # Sub-themes named after quantization match and are really visible: their branches opened.
    for code in ("B.2.vii", "C.2.iii", "C.4.ii"):
        expect(node(page, code)).to_have_class(HAS_MATCH_CLASS)
        expect(node(page, code).locator(":scope > details > summary")).to_be_visible()
    # Branches without a match are hidden, down to their sub-themes.
    for code in ("A.1", "A.1.i", "C.1", "C.5"):
        expect(node(page, code)).to_be_hidden()
    matches = page.locator(MATCHES).count()
    expect(page.locator("#search-status")).to_have_text(f"{matches} matching categories")


def expect_only_the_bug_type_left(page: Page) -> None:
    # Only the Bug type holds C.2, so the Question and Requirement type branches disappear.
    expect(node(page, "A")).to_be_hidden()
    expect(node(page, "B")).to_be_hidden()
    expect(node(page, "C")).to_be_visible()
    expect(node(page, "C.2")).to_have_class(HAS_MATCH_CLASS)


def test_slash_focuses_the_search_and_escape_clears_it(taxonomy_page):
    page = taxonomy_page
    box = page.locator("#taxonomy-search")
    page.locator("h1").click()  # focus is on the page body, not in the box
    expect(box).not_to_be_focused()

    page.keyboard.press("/")
    expect(box).to_be_focused()
    expect(box).to_have_value("")  # the shortcut key is swallowed, not typed

    page.keyboard.type("quantization")
    expect(page.locator(MATCHES)).not_to_have_count(0)
    page.keyboard.press("Escape")
    expect(box).to_have_value("")
    expect(page.locator(SHOWN)).to_have_count(page.locator(NODES).count())


# ---------------------------------------------------------------- access and sign-in errors


def test_volunteer_gets_403_on_the_agreement_page(page, personas, project):
    sign_in(page, "volunteer_a")
    # The project page offers a volunteer no way there ...
    page.goto(f"/projects/{project.slug}/")
    expect(page.get_by_role("link", name=re.compile("Agreement"))).to_have_count(0)
    # ... and typing the address is refused, with none of the report.
    response = page.goto(f"/projects/{project.slug}/agreement/")
    assert response is not None
    assert response.status == 403
    expect(page.locator("#agreement-table")).to_have_count(0)
    expect(page.locator("svg.kappa-chart")).to_have_count(0)


def test_wrong_password_shows_the_error_on_the_login_page(page, personas):
    sign_in(page, "lead", password="not the password")
    expect(page).to_have_url(re.compile(r"/accounts/login/$"))
    expect(page.get_by_role("alert")).to_contain_text("correct username and password")
    # The focus is on the error, not at the top of the page (static/js/form-errors.js).
    expect(page.get_by_role("alert")).to_be_focused()
    # The username is kept so only the password needs retyping; the password is not echoed.
    expect(page.get_by_label("Username")).to_have_value("lead")
    expect(page.get_by_label("Password")).to_have_value("")


def test_a_field_error_is_tied_to_its_field_and_takes_the_focus(page, personas):
    """A form sent back with a field error: the focus is on the first field in error, and the
    field's aria-describedby names the error text and the help (ids that exist), so a screen
    reader reads them with the field (WCAG 1.3.1, 3.3.1)."""
    sign_in(page, "volunteer_a")
    page.goto("/accounts/password/")
    page.get_by_label("Old password").fill("not the password")
    page.get_by_label("New password", exact=True).fill("a new and long passphrase 42")
    page.get_by_label("New password confirmation").fill("a new and long passphrase 42")
    page.locator("main form button[type=submit]").click()

    old = page.get_by_label("Old password")
    expect(old).to_be_focused()
    expect(old).to_have_attribute("aria-invalid", "true")
    expect(old).to_have_accessible_description(re.compile("old password was entered incorrectly"))
    # Every id a field names is on the page (no help or error text pointing nowhere).
    missing = page.evaluate(
        """() => [...document.querySelectorAll('main [aria-describedby]')].flatMap(e =>
            e.getAttribute('aria-describedby').split(/\\s+/)
             .filter(id => !document.getElementById(id)).map(id => `${e.id} -> ${id}`))"""
    )
    assert missing == []
    expect(page.get_by_label("New password", exact=True)).to_have_accessible_description(
        re.compile("at least")
    )


# ---------------------------------------------------------------- Content-Security-Policy


def test_taxonomy_page_runs_under_the_csp_without_console_errors(page, personas, study_taxonomy):
    sign_in(page, "volunteer_a")
    errors = collect_errors(page)

    response = page.goto(f"/taxonomy/{study_taxonomy.pk}/")
    assert "script-src 'self'" in response.headers["content-security-policy"]
    assert page.locator("script:not([src])").count() == 0
    # The external script ran, so the policy let it through: the search answers.
    search(page, "quantization")
    expect(page.locator("#search-status")).to_contain_text("matching categories")
    assert errors == []


def collect_errors(page: Page) -> list[str]:
    """Console errors (a CSP violation is one) and uncaught exceptions from now on."""
    errors: list[str] = []

    def on_console(msg) -> None:
        # The app ships no favicon; the browser's own probe for one is not the page's doing.
        if msg.type == "error" and not msg.location.get("url", "").endswith("/favicon.ico"):
            errors.append(msg.text)

    page.on("console", on_console)
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    return errors
