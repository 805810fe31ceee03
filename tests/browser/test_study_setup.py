"""A whole study from the browser, with no Django admin and no shell (issue 14): a site admin
creates a project and uploads its first label file (a background job on a real Celery worker),
invites three volunteers and a lead by link; each signs up and labels; the lead resolves the
dispute; the admin uploads a label file with a repeated URL, sees the skip reported, and exports
the repositories table, which counts the merged row."""

from __future__ import annotations

import re
from pathlib import Path
from types import SimpleNamespace

import pytest
from django.db import connection
from playwright.sync_api import Browser, Page, expect

from annotation.models import Annotation, ExportJob, Project, Resolution
from tests.browser.test_labeling_page import label_with_keys
from tests.browser.test_pages import collect_errors, scripts_ready, sign_in
from tests.factories import UserFactory
from tests.workers import worker_pool

pytestmark = pytest.mark.browser

JOB_TIMEOUT_MS = 90_000  # a cold worker start plus the job, on a slow CI machine
ISSUE = "https://github.com/NVIDIA/Megatron-LM/issues/"
FIRST_FILE = f"Issue_URL,Label1,Final_Label\n{ISSUE}4242,,\n"
REPEATING_FILE = (
    "Issue_URL,Label1,Label2,Label3,Final_Label\n"
    f"{ISSUE}7001,C.1,C.1,C.1,C.1\n"
    f"{ISSUE}7002,A.3,A.3,A.3,A.3\n"
    f"{ISSUE}7001,C.1,C.2,C.1,C.1\n"  # line 4 repeats line 2, with a different label
)
PEOPLE_PASSWORD = "a long pass phrase 42"


@pytest.fixture
def var_dir(settings, tmp_path):
    settings.VAR_DIR = tmp_path / "var"
    settings.VAR_DIR.mkdir()
    return settings.VAR_DIR


@pytest.fixture
def workers(redis_required, live_server, tmp_path, var_dir):
    if connection.vendor != "postgresql":
        pytest.skip("needs PostgreSQL shared between the live server and the worker process")
    no_forge = SimpleNamespace(github_api="http://127.0.0.1:9/")
    with worker_pool(no_forge, tmp_path) as pool:
        pool.start()
        yield pool


def upload_label_file(page: Page, tmp_path: Path, name: str, text: str) -> None:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    page.get_by_role("link", name="Label files").click()
    page.get_by_label("Study label files").set_input_files(str(path))
    page.get_by_role("button", name="Upload and import").click()
    expect(page.locator("#import-status")).to_have_text("Done", timeout=JOB_TIMEOUT_MS)


def invite(page: Page, slug: str, role: str) -> str:
    page.goto(f"/projects/{slug}/members/")
    page.locator("#invite-form").get_by_label("Role").select_option(role)
    page.get_by_role("button", name="Create invitation link").click()
    return page.locator("#invitation-url").input_value()


def sign_up(browser: Browser, base_url: str, link: str, username: str) -> Page:
    """A new person opens the link in a browser of their own and signs up."""
    context = browser.new_context(base_url=base_url)
    context.set_default_timeout(10_000)
    person = context.new_page()
    person.goto(link)
    person.get_by_label("Username").fill(username)
    person.get_by_label("Email address").fill(f"{username}@example.org")
    person.get_by_label("Password", exact=True).fill(PEOPLE_PASSWORD)
    person.get_by_label("Password confirmation").fill(PEOPLE_PASSWORD)
    person.get_by_role("button", name="Sign up and join").click()
    expect(person.locator(".messages")).to_contain_text("Welcome to")
    return person


def test_a_study_from_start_to_finish_in_the_browser(
    page, browser, live_server, study_taxonomy, workers, tmp_path
):
    UserFactory(username="site-admin", is_staff=True, is_superuser=True)
    errors = collect_errors(page)
    sign_in(page, "site-admin")

    # the admin creates the project
    page.get_by_role("link", name="New project").click()
    page.get_by_label("Name").fill("框架问题 2026")
    page.get_by_label("Slug").fill("frameworks")
    page.get_by_label("Labels per item (k)").fill("3")
    page.get_by_label("Screening enabled").uncheck()
    page.get_by_label("Guidelines").fill("Label the **root cause**.")
    page.get_by_role("button", name="Preview guidelines").click()
    expect(page.locator("#guidelines-preview strong")).to_have_text("root cause")
    page.get_by_role("button", name="Create project").click()
    expect(page.get_by_role("heading", level=1)).to_have_text("框架问题 2026")
    project = Project.objects.get(slug="frameworks")

    # ...and uploads its first label file: one issue, no labels yet
    upload_label_file(page, tmp_path, "first.csv", FIRST_FILE)
    expect(page.locator("#file-1")).to_contain_text("1 new items")

    # three volunteers and a lead join by link, each in a browser of their own
    links = [invite(page, project.slug, "volunteer") for _ in range(3)]
    lead_link = invite(page, project.slug, "lead")
    assert len(set(links)) == 3
    volunteers = [
        sign_up(browser, live_server.url, link, name)
        for link, name in zip(links, ["wei", "lin", "zhang"], strict=True)
    ]
    for person, theme_key in zip(volunteers, ["1", "1", "2"], strict=True):
        person.goto(f"/projects/{project.slug}/label/")
        label_with_keys(person, "3", theme_key, f"symptom seen by {theme_key}")
        # The label is saved in the background; with nothing left, the page then says why.
        expect(person.locator("#why-none")).to_be_visible()
        person.context.close()
    assert Annotation.objects.filter(item__project=project).count() == 3

    # the lead resolves the dispute from the queue
    lead = sign_up(browser, live_server.url, lead_link, "chen")
    lead.goto(f"/projects/{project.slug}/")
    lead.locator("#disputed-link").click()
    scripts_ready(lead)
    lead.keyboard.press("j")
    lead.keyboard.press("Enter")
    scripts_ready(lead)
    lead.keyboard.press("m")
    expect(lead.locator("#chosen")).to_contain_text("C.1")
    lead.keyboard.press("Enter")
    expect(lead.locator(".messages")).to_contain_text("C.1")
    lead.context.close()
    assert Resolution.objects.get(item__project=project).node.code == "C.1"

    # the admin imports a file with a repeated URL and sees the skip reported
    page.goto(f"/projects/{project.slug}/")
    upload_label_file(page, tmp_path, "repeats.csv", REPEATING_FILE)
    report = page.locator("#file-1")
    expect(report).to_contain_text("repeats.csv: imported")
    expect(report).to_contain_text("1 repeated row skipped")
    expect(report.locator("table.repeats tbody tr")).to_have_text(
        re.compile(r"4\s*2\s*differ from the kept row")
    )

    # ...and exports the repositories table, which counts the merged row
    page.goto(f"/projects/{project.slug}/")
    page.get_by_role("link", name="Exports (CSV)").click()
    page.get_by_label("Format").select_option("repositories")
    page.get_by_role("button", name="Start export").click()
    status = page.locator('#export-progress [data-field="status_label"]')
    expect(status).to_have_text("Done", timeout=JOB_TIMEOUT_MS)
    with page.expect_download() as info:
        page.get_by_role("link", name="Download CSV").click()
    lines = Path(info.value.path()).read_text(encoding="utf-8").splitlines()
    assert lines[0].endswith(",Merged_Repeated_Rows")
    assert lines[-1].startswith("Total,")
    assert lines[-1].endswith(",1")
    assert ExportJob.objects.get().status == "done"
    assert errors == []
