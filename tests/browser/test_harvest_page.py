"""The harvest pages in a real chromium, against a real Celery worker and the fake forge: a staff
user adds a source, starts a harvest and watches the progress page reach Done by polling, with no
reload; a volunteer is refused.

The worker is started only once the page shows the queued run, so the page must have learnt every
later state by polling.
"""

from __future__ import annotations

import re

import pytest
from django.db import connection
from playwright.sync_api import Page, expect

from ingest.models import HarvestRun, Issue, RunStatus
from tests.browser.test_pages import collect_errors, sign_in
from tests.fakes.forge import make_github_issues
from tests.workers import worker_pool

pytestmark = pytest.mark.browser

HARVEST_TIMEOUT_MS = 90_000  # a cold worker start plus the harvest, on a slow CI machine


@pytest.fixture
def workers(forge, redis_required, live_server, tmp_path):
    if connection.vendor != "postgresql":
        pytest.skip("needs PostgreSQL shared between the live server and the worker process")
    with worker_pool(forge, tmp_path) as pool:
        yield pool


def test_staff_adds_a_source_and_watches_the_harvest_finish(page, staff, forge, workers):
    issues, comments = make_github_issues(
        "NVIDIA", "Megatron-LM", 450, n_prs=30, comments_per_issue=1, start="2022-06-01"
    )
    forge.add_github_repo("NVIDIA", "Megatron-LM", issues, comments)
    forge.delay = 0.3  # several polls' worth of pages
    errors = collect_errors(page)
    sign_in(page, "staff")

    page.get_by_role("link", name="Ingest").click()
    expect(page.locator(".empty")).to_contain_text("No sources yet")
    page.get_by_role("link", name="Add source").click()
    add_source(page)
    expect(page.get_by_role("heading", level=1)).to_have_text("GitHub NVIDIA/Megatron-LM")

    page.get_by_role("button", name="Start harvest").click()
    expect(page).to_have_url(re.compile(r"/ingest/runs/\d+/$"))
    progress = page.locator("#harvest-progress")
    expect(progress.locator('[data-field="status_label"]')).to_have_text("Queued")
    expect(field(page, "issues_fetched")).to_have_text("0")
    page.evaluate("window.loadedOnce = true")  # gone if the page reloads

    workers.start()
    expect(progress.locator('[data-field="status_label"]')).to_have_text(
        "Done", timeout=HARVEST_TIMEOUT_MS
    )
    run = HarvestRun.objects.get()
    assert run.status == RunStatus.DONE
    assert run.issues_fetched == Issue.objects.count() > 0
    for name in ("issues_fetched", "comments_fetched", "pages", "requests"):
        expect(field(page, name)).to_have_text(str(getattr(run, name)))
    expect(field(page, "pull_requests_skipped")).to_have_text(str(run.pull_requests_skipped))
    expect(field(page, "progress.step")).to_have_text("Issues and comments harvested.")
    expect(page.locator("#run-bar")).to_have_js_property("value", 1)
    expect(page.get_by_role("button", name="Cancel")).to_be_hidden()
    assert page.evaluate("window.loadedOnce") is True
    assert errors == []


def add_source(page: Page) -> None:
    page.get_by_label("Host").select_option(label="GitHub")
    repository = page.get_by_label("Repository")
    repository.fill("NVIDIA")
    page.get_by_label("Created from").fill("2023-01-01")
    page.get_by_label("Created until").fill("2025-04-30")
    page.get_by_role("button", name="Add source").click()
    # A malformed owner/repo comes back as a field error; fix it and submit again.
    expect(page.locator("#id_repository_error")).to_contain_text("write it as owner/repo")
    page.get_by_label("Repository").fill("NVIDIA/Megatron-LM")
    page.get_by_role("button", name="Add source").click()


def field(page: Page, name: str):
    return page.locator(f'#harvest-progress [data-field="{name}"]')


def test_a_volunteer_gets_403_on_the_sources_page(page, personas):
    sign_in(page, "volunteer_a")
    expect(page.get_by_role("link", name="Ingest")).to_have_count(0)
    response = page.goto("/ingest/")
    assert response is not None
    assert response.status == 403
    expect(page.get_by_role("heading", level=1)).to_have_text("Not allowed")
    expect(page.locator("#sources")).to_have_count(0)
