"""Every page a volunteer, a lead, a project admin and a site admin can reach, in English and in
Chinese, at a phone's width (390 px) and a laptop's (1366 px): none scrolls sideways, no chart
scrolls inside its box, and no chart cuts off its own labels.

The pages come from the URL conf (tests/test_role_matrix.py lists who may use each named URL,
and fails when a URL has no rule), so a new page is checked without being added here. Each
person signs in once per language; each page loads once and is measured at both widths."""

from __future__ import annotations

import re

import pytest
from django.urls import reverse
from playwright.sync_api import Page, expect

from tests.factories import PASSWORD
from tests.test_role_matrix import ALLOWED, RULES, role_world, url_names

pytestmark = pytest.mark.browser

WIDTHS = (390, 1366)
HEIGHT = 844
LANGUAGES = {"en": "en-US", "zh-hans": "zh-CN"}  # Django's code -> the browser's locale
PEOPLE = ("volunteer", "lead", "admin", "staff")
# Named GET URLs that answer with something other than a page: files, the API and its schema.
NOT_PAGES = {
    "project-export-download",
    "label-categories",
    "project-report-chart",
    "project-agreement-chart",
}
# Pages that need a query to show something: the items carrying two given labels.
QUERIES = {"project-reports-items": "?a=C.1&b=C.2&level=theme"}
# How far a page may be wider than the window before it counts as scrolling (rounding).
SLACK_PX = 1


def pages_for(person: str, objects: dict) -> list[str]:
    """The URLs of the HTML pages `person` may open, from the URL conf (not the API under
    /api/, whose browsable pages are DRF's)."""
    urls = (
        reverse(name, kwargs=objects[RULES[name].kwargs]) + QUERIES.get(name, "")
        for name in sorted(url_names())
        if RULES[name].method == "get"
        and name not in NOT_PAGES
        and person in ALLOWED[RULES[name].least]
        and RULES[name].least != "public"
    )
    return [url for url in urls if not url.startswith("/api/")]


def sign_in(page: Page, username: str) -> None:
    """The sign-in form by its fields' ids, so it works in either language."""
    page.goto("/accounts/login/")
    page.locator("#id_username").fill(username)
    page.locator("#id_password").fill(PASSWORD)
    page.locator("main form button[type=submit]").click()
    page.wait_for_load_state()
    expect(page).not_to_have_url(re.compile(r"/accounts/login/"))


def sideways_overflow(page: Page) -> int:
    """How many pixels the document is wider than the window (0: no sideways scroll)."""
    return page.evaluate(
        "() => document.documentElement.scrollWidth - document.documentElement.clientWidth"
    )


def widest_elements(page: Page) -> list[str]:
    """The elements reaching furthest past the window's right edge: what to fix."""
    return page.evaluate(
        """() => [...document.querySelectorAll('body *')]
            .map(e => [e, e.getBoundingClientRect().right])
            .filter(([e, right]) => right > document.documentElement.clientWidth + 1)
            .sort((a, b) => b[1] - a[1]).slice(0, 3)
            .map(([e, right]) => {
                const cls = typeof e.className === 'string' && e.className
                    ? '.' + e.className.trim().split(' ').join('.') : '';
                return `${e.tagName.toLowerCase()}${e.id ? '#' + e.id : ''}${cls}` +
                       ` to ${Math.round(right)}px`;
            })"""
    )


def cut_chart_texts(page: Page) -> list[str]:
    """Text in an inline SVG chart that reaches outside the chart's box, where the SVG clips it
    (the Reports' "0.944 (almost pe")."""
    return page.evaluate(
        """() => [...document.querySelectorAll('main svg text')].filter(t => {
                const box = t.ownerSVGElement.getBoundingClientRect();
                const r = t.getBoundingClientRect();
                return r.width > 0 && (r.left < box.left - 1 || r.right > box.right + 1 ||
                                       r.top < box.top - 1 || r.bottom > box.bottom + 1);
            }).slice(0, 3).map(t => `"${t.textContent.trim()}" in svg.${
                t.ownerSVGElement.getAttribute('class').split(' ').join('.')}`)"""
    )


def charts_scrolling_inside(page: Page) -> list[str]:
    """Charts whose box scrolls sideways, hiding bars or legends behind an inner scroll bar."""
    return page.evaluate(
        """() => [...document.querySelectorAll('main figure.chart, main .chart-svg')]
            .filter(e => e.scrollWidth > e.clientWidth + 1)
            .map(e => e.id || e.closest('figure').id || e.className)"""
    )


@pytest.mark.parametrize("language", sorted(LANGUAGES))
def test_no_page_scrolls_sideways(
    browser, live_server, personas, labeled_project, settings, tmp_path, language
):
    objects, people = role_world(personas, labeled_project, settings, tmp_path)
    problems = []
    for person in PEOPLE:
        context = browser.new_context(
            base_url=live_server.url,
            locale=LANGUAGES[language],
            viewport={"width": WIDTHS[-1], "height": HEIGHT},
        )
        page = context.new_page()
        sign_in(page, people[person].username)
        urls = pages_for(person, objects)
        assert urls, f"no pages for {person}"
        for url in urls:
            response = page.goto(url)
            assert response is not None, f"{person} {url}: no response"
            assert response.status < 400, f"{person} {url}: {response.status}"
            assert page.get_attribute("html", "lang") == language, f"{person} {url}: language"
            for width in WIDTHS:
                page.set_viewport_size({"width": width, "height": HEIGHT})
                overflow = sideways_overflow(page)
                if overflow > SLACK_PX:
                    problems.append(
                        f"{language} {width}px {person} {url}: {overflow}px too wide "
                        f"({', '.join(widest_elements(page))})"
                    )
                inner = charts_scrolling_inside(page)
                if inner:
                    where = f"{language} {width}px {person} {url}"
                    problems.append(f"{where}: charts scroll inside {', '.join(inner)}")
                cut = cut_chart_texts(page)
                if cut:
                    problems.append(
                        f"{language} {width}px {person} {url}: cut chart text {', '.join(cut)}"
                    )
        context.close()
    assert not problems, "pages that scroll sideways or cut chart text:\n" + "\n".join(problems)
