"""Every page a volunteer, a lead, a project admin and a site admin can reach, in English and in
Chinese, at a phone's width (390 px) and a laptop's (1366 px): none scrolls sideways, no number
or word in a table breaks inside, no chart cuts off its own labels or draws text under 11 px, no
chart scrolls inside its box on a laptop, and the Chinese pages show no English but data. And
axe-core (the axe-playwright-python package) finds no serious or critical WCAG 2.0/2.1/2.2 A or AA
problem on any of them (in English), nor on the pages open to everyone (sign-in, password reset,
invitation), at the laptop's width (issue #32).

The pages come from the URL conf (tests/test_role_matrix.py lists who may use each named URL,
and fails when a URL has no rule), so a new page is checked without being added here. Each
person signs in once per language; each page loads once and is measured at both widths."""

from __future__ import annotations

import re

import pytest
from axe_playwright_python.sync_playwright import Axe
from playwright.sync_api import Page, expect

from tests.factories import PASSWORD
from tests.pages import pages_for
from tests.test_every_page_in_chinese import data_values, untranslated_on
from tests.test_role_matrix import role_world

pytestmark = pytest.mark.browser

WIDTHS = (390, 1366)
HEIGHT = 844
LANGUAGES = {"en": "en-US", "zh-hans": "zh-CN"}  # Django's code -> the browser's locale
# anonymous: the public pages; staff (the site admin) walks only the pages a project admin cannot
# open (ingest, the site's own): the project's pages are walked by its volunteer, lead and admin.
PEOPLE = ("anonymous", "volunteer", "lead", "admin", "staff")
# The walk in four parts, each language by two halves of the people (about as many pages each),
# each part an xdist group of its own beside the module's (tests/conftest.py), so that the walks,
# a few minutes each with axe, may run side by side in two workers.
PARTS = {"public-to-lead": PEOPLE[:3], "admin-and-staff": PEOPLE[3:]}
LAPTOP = 1024  # from this width on, every chart fits its box
MIN_CHART_TEXT_PX = 11
# How far a page may be wider than the window before it counts as scrolling (rounding).
SLACK_PX = 1
# axe-core's rules for WCAG 2.0, 2.1 and 2.2, levels A and AA (axe has no "wcag22a" tag: 2.2's
# new level-A criteria are not automatable), and the impacts that fail the walk.
AXE_OPTIONS = {
    "runOnly": {"type": "tag", "values": ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa", "wcag22aa"]},
    "resultTypes": ["violations"],
}
AXE_FAILS = {"serious", "critical"}
# axe runs on the English walk: its rules read colours, roles, names and structure, which the
# Chinese pages share (their words are checked by the Chinese walk and tests/test_translations.py;
# axe on both was a third of this module's time, make test's longest, #25).
AXE_LANGUAGE = "en"
AXE_NODES_SHOWN = 3


def sign_in(page: Page, username: str) -> None:
    """The sign-in form by its fields' ids, so it works in either language."""
    page.goto("/accounts/login/")
    page.locator("#id_username").fill(username)
    page.locator("#id_password").fill(PASSWORD)
    page.locator("main form button[type=submit]").click()
    page.wait_for_load_state()
    expect(page).not_to_have_url(re.compile(r"/accounts/login/"))


def axe_findings(page: Page) -> list[str]:
    """axe-core's serious and critical findings on the page as the browser holds it (the walk puts
    axe in every page of its contexts): each the rule, what it asks, and the first offending
    elements by selector and markup."""
    results = page.evaluate("options => axe.run(document, options)", AXE_OPTIONS)
    found = []
    for rule in results["violations"]:
        if rule["impact"] not in AXE_FAILS:
            continue
        nodes = [
            f"{' '.join(map(str, node['target']))} {node['html'][:160]!r}"
            for node in rule["nodes"][:AXE_NODES_SHOWN]
        ]
        more = len(rule["nodes"]) - len(nodes)
        found.append(
            f"axe {rule['id']} ({rule['impact']}): {rule['help']}: {'; '.join(nodes)}"
            + (f" (and {more} more)" if more > 0 else "")
        )
    return found


def duplicate_ids(page: Page) -> list[str]:
    """Ids given to more than one element (a label or aria-describedby then names only the first;
    axe no longer checks ids no ARIA names)."""
    return page.evaluate(
        """() => {
            const seen = new Map();
            document.querySelectorAll('[id]')
                .forEach(e => seen.set(e.id, (seen.get(e.id) || 0) + 1));
            return [...seen].filter(([id, n]) => n > 1).map(([id, n]) => `#${id} x${n}`);
        }"""
    )


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
    (the Reports' "0.944 (almost pe").

    Whatever fonts the machine has: along the line, the text's own advance as drawn (a wider font
    must still fit); across it, the room the glyphs take by the text's declared size, one em above
    the baseline and a quarter em below, not the font's line box (a CJK font's is 1.45 em tall,
    reaching 2 px over a tick label whose digits sit well inside)."""
    return page.evaluate(
        """() => [...document.querySelectorAll('main svg text')].filter(t => {
                const n = t.getNumberOfChars();
                if (!n || !t.getBoundingClientRect().width) return false;
                const box = t.ownerSVGElement.getBoundingClientRect();
                const size = parseFloat(getComputedStyle(t).fontSize);
                const start = t.getStartPositionOfChar(0), end = t.getEndPositionOfChar(n - 1);
                const ctm = t.getScreenCTM();
                const corners = [[start.x, start.y], [end.x, end.y]].flatMap(([x, y]) =>
                    [y - size, y + 0.25 * size].map(v => new DOMPoint(x, v).matrixTransform(ctm)));
                const xs = corners.map(p => p.x), ys = corners.map(p => p.y);
                return Math.min(...xs) < box.left - 1 || Math.max(...xs) > box.right + 1 ||
                       Math.min(...ys) < box.top - 1 || Math.max(...ys) > box.bottom + 1;
            }).slice(0, 3).map(t => `"${t.textContent.trim()}" in svg.${
                t.ownerSVGElement.getAttribute('class').split(' ').join('.')}`)"""
    )


def charts_scrolling_inside(page: Page) -> list[str]:
    """Charts whose box scrolls sideways. On a laptop every chart fits its box; on a phone a
    chart keeps its own size (its text readable) and its box scrolls, the table beside it
    holding the same numbers."""
    return page.evaluate(
        """() => [...document.querySelectorAll('main figure.chart, main .chart-svg')]
            .filter(e => e.scrollWidth > e.clientWidth + 1)
            .map(e => e.id || e.closest('figure').id || e.className)"""
    )


def small_chart_texts(page: Page) -> list[str]:
    """Chart text drawn smaller than 11 px: an SVG's font size times the scale it is shown at."""
    return page.evaluate(
        f"""() => [...document.querySelectorAll('main svg text')].filter(t => {{
                const svg = t.ownerSVGElement, box = svg.viewBox.baseVal;
                const scale = box && box.width ? svg.getBoundingClientRect().width / box.width : 1;
                const size = parseFloat(getComputedStyle(t).fontSize) * scale;
                return t.getBoundingClientRect().width > 0 && size < {MIN_CHART_TEXT_PX} - 0.05;
            }}).slice(0, 3).map(t => `"${{t.textContent.trim()}}"`)"""
    )


def broken_tokens(page: Page) -> list[str]:
    """Table cells holding one number or one word ("0.978", "[0.91, 1.00]", "Kappa") that the
    browser broke across lines ("0.9/78", "Ka/pp/a")."""
    return page.evaluate(
        r"""() => [...document.querySelectorAll('main td, main th, main .num')]
            .filter(e => e.childElementCount === 0 && e.getClientRects().length)
            .filter(e => {
                const text = e.textContent.trim();
                return /^[\[(]?[-+\u2212]?\d[\d.,%]*(, [-+\u2212]?\d[\d.,%]*)?[\])]?$/.test(text) ||
                       /^[A-Za-z][A-Za-z'-]*$/.test(text);
            })
            .filter(e => {
                const range = document.createRange();
                range.selectNodeContents(e);
                const tops = [...range.getClientRects()].filter(r => r.width > 0)
                    .map(r => Math.round(r.top));
                return new Set(tops).size > 1;
            }).slice(0, 3).map(e => `"${e.textContent.trim()}"`)"""
    )


def untranslated(page: Page, language: str, data) -> list[str]:
    """English left in the Chinese interface, read from the page as the browser holds it (with
    what its scripts wrote): tests/test_every_page_in_chinese.py's rule."""
    if language != "zh-hans":
        return []
    return untranslated_on(page.content(), data)[:3]


def page_problems(page: Page, width: int, language: str, data) -> list[str]:
    """What is wrong with the page as shown at `width`, each a short description."""
    problems = []
    overflow = sideways_overflow(page)
    if overflow > SLACK_PX:
        problems.append(f"{overflow}px too wide ({', '.join(widest_elements(page))})")
    checks = {
        "charts scroll inside": charts_scrolling_inside(page) if width >= LAPTOP else [],
        "cut chart text": cut_chart_texts(page),
        "chart text under 11 px": small_chart_texts(page),
        "broken inside": broken_tokens(page),
        "untranslated": untranslated(page, language, data) if width == WIDTHS[0] else [],
    }
    problems += [f"{what} {', '.join(found)}" for what, found in checks.items() if found]
    return problems


@pytest.mark.parametrize(
    ("language", "part"),
    [
        pytest.param(code, part, marks=pytest.mark.xdist_group(f"every-page-{code}-{part}"))
        for code in LANGUAGES
        for part in PARTS
    ],
)
def test_every_page_reads_well_at_both_widths(
    browser, live_server, personas, labeled_project, settings, tmp_path, language, part
):
    """No page scrolls sideways, cuts or shrinks chart text, breaks a number or a word inside,
    (in Chinese) shows English that is not data, or has a serious or critical axe finding."""
    settings.VAR_DIR = tmp_path
    objects, people = role_world(personas, labeled_project)
    data = data_values()
    problems = []
    checked = 0
    axe_script = Axe().axe_script
    for person in PARTS[part]:
        context = browser.new_context(
            base_url=live_server.url,
            locale=LANGUAGES[language],
            viewport={"width": WIDTHS[-1], "height": HEIGHT},
        )
        # Once per context, not once per page: every page it opens has axe before its own scripts
        # (only where axe runs: parsing it is a tenth of a page load).
        if language == AXE_LANGUAGE:
            context.add_init_script(script=axe_script)
        page = context.new_page()
        if people[person] is not None:
            sign_in(page, people[person].username)
        urls = pages_for(person, objects, public=people[person] is None)
        if person == "staff":  # the site admin: the site's own pages; the project's are the admin's
            urls = [url for url in urls if url not in pages_for("admin", objects)]
        assert urls, f"no pages for {person}"
        for url in urls:
            response = page.goto(url)
            assert response is not None, f"{person} {url}: no response"
            assert response.status < 400, f"{person} {url}: {response.status}"
            assert page.get_attribute("html", "lang") == language, f"{person} {url}: language"
            findings = [f"duplicate id {d}" for d in duplicate_ids(page)]
            if language == AXE_LANGUAGE:
                findings += axe_findings(page)
            problems += [f"{language} {person} {url}: {finding}" for finding in findings]
            for width in WIDTHS:
                page.set_viewport_size({"width": width, "height": HEIGHT})
                checked += 1
                problems += [
                    f"{language} {width}px {person} {url}: {problem}"
                    for problem in page_problems(page, width, language, data)
                ]
        context.close()
    print(f"{language}: {checked} page views checked ({', '.join(PARTS[part])}, widths {WIDTHS})")
    assert not problems, "pages that do not read well:\n" + "\n".join(problems)
