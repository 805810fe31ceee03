"""The lead and near-duplicate issues in a real chromium: a disputed item's likely duplicates
beside it with their final labels, the two texts side by side with what they share marked, and
the consistency queue, where a pair marked "not a duplicate" leaves."""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import expect

from annotation.duplicates.index import duplicate_index_queue, duplicate_index_run
from tests.annotation.lead_helpers import labeled_item, trio_fixture  # noqa: F401
from tests.browser.test_pages import sign_in

pytestmark = pytest.mark.browser

OOM = "CUDA out of memory at iteration 1 when sequence parallel is enabled with TP=4."


@pytest.fixture
def repeats(project, trio):
    """Three reports of one error: two final with different labels, one disputed."""
    made = [
        labeled_item(project, trio, ["A.1"] * 3, title="OOM with sequence parallel"),
        labeled_item(project, trio, ["B.1"] * 3, title="Sequence parallel OOM"),
        labeled_item(project, trio, ["C.1", "C.1", "C.2"], title="OOM: sequence parallel"),
    ]
    for item in made:
        item.issue.body = f"**Describe the bug**\n{OOM}\n<script>alert(1)</script>"
        item.issue.save()
    duplicate_index_run(job_id=duplicate_index_queue(project=project).pk)
    return made


def test_lead_walks_duplicates_and_the_inconsistency_queue(page, personas, project, repeats):
    *_finals, disputed = repeats
    dialogs = []
    page.on("dialog", lambda d: (dialogs.append(d.message), d.dismiss()))
    sign_in(page, "lead")

    # beside the disputed item: its two duplicates, with their final labels
    page.goto(f"/projects/{project.slug}/items/{disputed.pk}/resolve/")
    box = page.locator("#item-duplicates")
    expect(box.locator("li")).to_have_count(2)
    expect(box).to_contain_text("A.1")
    expect(box).to_contain_text("B.1")

    # side by side, the shared words marked, the text's markup shown as text
    box.locator("li a").first.click()
    expect(page).to_have_url(re.compile(r"/duplicates/\d+/\d+/$"))
    expect(page.locator(".dup-side")).to_have_count(2)
    expect(page.locator("#side-1 mark.dup-shared").first).to_be_visible()
    expect(page.locator("#side-1 .dup-text")).to_contain_text("<script>alert(1)</script>")

    # the queue: the two finals disagree; marked not duplicates, the pair leaves
    page.goto(f"/projects/{project.slug}/")
    page.locator("#project-duplicates").click()
    rows = page.locator("#inconsistent tr.dup-pair")
    expect(rows).to_have_count(1)
    expect(rows.first).to_contain_text("A.1")
    expect(rows.first).to_contain_text("B.1")
    expect(page.locator("#duplicate-counts")).to_contain_text("3 pairs")
    rows.first.locator("button.not-duplicate").click()
    expect(page.locator("#no-inconsistent")).to_be_visible()
    expect(page.locator("#duplicate-counts")).to_contain_text("2 pairs")
    assert dialogs == []  # the page's markup ran nothing of the issues' texts
