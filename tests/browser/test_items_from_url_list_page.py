"""An admin adds a URL list's keyword candidates to a project in a real chromium: from the
project page, with a file and a keyword set, and reads what went in, what waits for its text and
which line was bad. A volunteer sees no way there."""

from __future__ import annotations

import pytest
from django.utils import timezone
from playwright.sync_api import expect

from ingest.models import Issue, KeywordSet
from tests.browser.test_pages import collect_errors, sign_in

pytestmark = pytest.mark.browser

BASE = "https://github.com/NVIDIA/Megatron-LM/issues/"


def test_admin_adds_a_lists_candidates_from_the_project_page(page, personas, project, tmp_path):
    KeywordSet.objects.create(name="llama", keywords=["llama"])
    for number, title in [("40", "Llama-3 checkpoint fails to load"), ("41", "Typo in docs")]:
        Issue.objects.create(
            host="github",
            owner="NVIDIA",
            repo="Megatron-LM",
            number=number,
            url=BASE + number,
            title=title,
            fetched_at=timezone.now(),
        )
    listing = tmp_path / "megatron.txt"
    listing.write_text(f"{BASE}40\n{BASE}41\n{BASE}42\nhttps://example.com/x\n")
    errors = collect_errors(page)

    sign_in(page, "admin")
    page.goto(f"/projects/{project.slug}/")
    page.get_by_role("link", name="Add items from a URL list").click()
    page.get_by_label("URL list").set_input_files(str(listing))
    page.get_by_label("Which issues").select_option(label="llama")
    page.get_by_role("button", name="Add items").click()

    report = page.locator("#url-list-items")
    expect(report).to_contain_text("1 new item in")
    expect(report).to_contain_text("1 issue have no title or body yet")
    expect(page.locator("#bad-lines")).to_contain_text("4")
    assert list(project.items.values_list("issue__number", flat=True)) == ["40"]
    assert errors == []


def test_a_volunteer_has_no_link_and_gets_403(page, personas, project):
    sign_in(page, "volunteer_a")
    page.goto(f"/projects/{project.slug}/")
    expect(page.get_by_role("link", name="Add items from a URL list")).to_have_count(0)
    response = page.goto(f"/projects/{project.slug}/items/from-url-list/")
    assert response is not None
    assert response.status == 403
