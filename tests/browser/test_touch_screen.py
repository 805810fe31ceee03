"""A phone with a touch screen (390 px, no hover, a finger for a pointer): the labeling and
screening pages show no keyboard hints, every control is at least 44 px high, and the issue is
read with the page's own scrolling, not trapped in a small box that scrolls inside."""

from __future__ import annotations

import pytest
from django.conf import settings
from django.urls import reverse

from annotation.projects.demo import demo_items_load
from tests.browser.conftest import TIMEOUT_MS
from tests.browser.test_every_page import sign_in
from tests.browser.test_pages import scripts_ready

pytestmark = pytest.mark.browser

PHONE = {"width": 390, "height": 844}
MIN_TAP_PX = 44
# What a finger taps: buttons, form fields, the choices' rows, the top bar's and tabs' links.
CONTROLS = (
    "main button, main .button, main select, main summary, main input[type=text], "
    "main input[type=search], main .picker .opt > label, main .verdict label, .topbar nav a"
)


@pytest.fixture
def phone(browser, live_server):
    context = browser.new_context(
        base_url=live_server.url, locale="zh-CN", viewport=PHONE, is_mobile=True, has_touch=True
    )
    context.set_default_timeout(TIMEOUT_MS)
    yield context.new_page()
    context.close()


def visible_keyboard_hints(page) -> list[str]:
    return page.evaluate(
        """() => [...document.querySelectorAll('kbd, #keys-open')]
            .filter(e => e.getClientRects().length).map(e => e.textContent.trim())"""
    )


def small_controls(page) -> list[str]:
    return page.evaluate(
        f"""() => [...document.querySelectorAll({CONTROLS!r})]
            .filter(e => e.getClientRects().length)
            .filter(e => e.getBoundingClientRect().height < {MIN_TAP_PX} - 0.5)
            .slice(0, 5).map(e => `${{e.tagName.toLowerCase()}} "${{e.textContent.trim()
                .slice(0, 30)}}" ${{Math.round(e.getBoundingClientRect().height)}}px`)"""
    )


def issue_scrolls_inside(page) -> bool:
    return page.evaluate(
        """() => { const issue = document.getElementById('issue');
                   return issue.scrollHeight > issue.clientHeight + 1 &&
                          ['auto', 'scroll'].includes(getComputedStyle(issue).overflowY); }"""
    )


@pytest.mark.parametrize("where", ["label-next", "screen-next"])
def test_a_touch_phone_gets_no_key_hints_big_targets_and_the_whole_issue(
    phone, personas, project, where
):
    project.screening_enabled = where == "screen-next"
    project.save()
    demo_items_load(project=project, path=settings.DEMO_DATA_DIR / "issues-zh.json")
    page = phone
    sign_in(page, "volunteer_a")
    page.goto(reverse(where, args=[project.slug]))
    scripts_ready(page)
    assert page.evaluate("matchMedia('(hover: none) and (pointer: coarse)').matches")

    assert not visible_keyboard_hints(page)
    assert not small_controls(page)
    assert not issue_scrolls_inside(page)
    jump = page.locator("a.to-panel")
    assert jump.is_visible()
    jump.click()
    panel_top = page.evaluate("document.getElementById('label-panel').getBoundingClientRect().top")
    assert 0 <= panel_top < PHONE["height"]
