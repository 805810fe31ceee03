"""The Reports section in a real chromium: a lead opens the reports from the project page, reads
the agreement dashboard (chart and table), switches tabs, clicks a confusion cell to land on
the items carrying both labels, and downloads a chart as SVG and as PNG."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from playwright.sync_api import expect

from tests.browser.test_pages import collect_errors, scripts_ready, sign_in

pytestmark = pytest.mark.browser

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


def test_lead_reads_the_reports_and_follows_a_confusion_cell(page, personas, labeled_project):
    errors = collect_errors(page)  # a CSP violation from the PNG download would show here
    slug = labeled_project.slug
    sign_in(page, "lead")
    page.goto(f"/projects/{slug}/")
    page.get_by_role("link", name="Reports", exact=True).click()
    expect(page).to_have_url(re.compile(rf"/projects/{slug}/reports/$"))
    expect(page.get_by_role("link", name="Agreement")).to_have_attribute("aria-current", "page")

    # the dashboard: a chart with its table, bands named, sub-theme explained
    figure = page.locator("#chart-kappa_by_type")
    expect(figure.locator("svg.dot-chart")).to_be_visible()
    expect(figure.locator("svg .band text").filter(has_text="moderate")).to_have_count(1)
    table = page.locator("#kappa-by-type-table")
    expect(table.locator("tbody tr").filter(has_text="All items")).to_have_count(1)
    expect(table).to_contain_text("No labels reach sub-theme level")
    first_kappa = table.locator("tbody tr").first.locator("td.kappa").first.inner_text()
    expect(figure.locator("svg text.value").first).to_contain_text(first_kappa)

    # PNG: drawn from the inline SVG on a canvas by static/js/chart-download.js
    scripts_ready(page)
    with page.expect_download() as info:
        figure.get_by_role("button", name="Download PNG").click()
    png = info.value
    assert png.suggested_filename == f"{slug}-kappa_by_type.png"
    assert Path(png.path()).read_bytes()[:8] == PNG_MAGIC

    # SVG: the server's file
    with page.expect_download() as info:
        figure.get_by_role("link", name="Download SVG").click()
    svg = info.value
    assert svg.suggested_filename == f"{slug}-kappa_by_type.svg"
    assert first_kappa in Path(svg.path()).read_text(encoding="utf-8")

    # other tabs
    page.get_by_role("link", name="Distribution").click()
    expect(page.locator("#chart-final_by_type svg")).to_be_visible()
    expect(page.locator("#final-by-type-table tr.total")).to_contain_text("80")
    page.get_by_role("link", name="Volunteers").click()
    expect(page.locator("#chart-volunteer_kappa svg")).to_be_visible()
    expect(page.locator("#volunteer-summary tbody tr")).to_have_count(7)

    # confusion: the most confused pair's cell leads to the items with both labels
    page.get_by_role("link", name="Confusion").click()
    expect(page.locator("#chart-confusion svg.heat-grid")).to_be_visible()
    top = page.locator("#confusion-pairs tbody tr").first
    codes = top.locator(".code").all_inner_texts()
    count = top.locator("td.num").inner_text()
    page.locator(f'#chart-confusion a.cell[href*="a={codes[0]}&b={codes[1]}"]').click()
    expect(page).to_have_url(re.compile(rf"/reports/items/\?a={re.escape(codes[0])}&b="))
    expect(page.locator("#pair-heading")).to_contain_text(codes[0])
    expect(page.locator("#pair-heading")).to_contain_text(codes[1])
    rows = page.locator("#pair-items tbody tr")
    expect(rows).to_have_count(min(int(count), 50))
    expect(rows.first.locator("td.votes")).to_contain_text(codes[0])
    assert errors == []
