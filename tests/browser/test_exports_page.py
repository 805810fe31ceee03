"""The Exports page in a real chromium, against a real Celery worker: an admin starts an export,
watches the progress page reach Done by polling (no reload) and downloads the file; a volunteer
gets 403 on every export URL and sees no link to them.

The worker starts only once the page shows the queued job, so the page must learn every later
state by polling.
"""

from __future__ import annotations

import re
from pathlib import Path
from types import SimpleNamespace

import pytest
from django.db import connection
from playwright.sync_api import expect

from annotation.models import ExportJob, ExportStatus
from annotation.reporting.export_jobs import export_job_run, export_job_start
from annotation.reporting.exports import export_lines, export_options
from tests.browser.test_pages import collect_errors, sign_in
from tests.workers import worker_pool

pytestmark = pytest.mark.browser

EXPORT_TIMEOUT_MS = 90_000  # a cold worker start plus the export, on a slow CI machine


@pytest.fixture
def var_dir(settings, tmp_path):
    """Where the live server (this process) and the worker both keep export files."""
    settings.VAR_DIR = tmp_path / "var"
    settings.VAR_DIR.mkdir()
    return settings.VAR_DIR


@pytest.fixture
def workers(redis_required, live_server, tmp_path, var_dir):
    if connection.vendor != "postgresql":
        pytest.skip("needs PostgreSQL shared between the live server and the worker process")
    no_forge = SimpleNamespace(github_api="http://127.0.0.1:9/")  # exports fetch nothing
    with worker_pool(no_forge, tmp_path) as pool:  # after var_dir: the workers write there too
        yield pool


def test_admin_exports_watches_the_job_finish_and_downloads(
    page, personas, labeled_project, workers
):
    errors = collect_errors(page)
    sign_in(page, "admin")
    page.goto(f"/projects/{labeled_project.slug}/")
    page.get_by_role("link", name="Exports (CSV)").click()
    expect(page.get_by_role("heading", level=1)).to_have_text("Exports")

    page.get_by_label("Format").select_option("long")
    page.get_by_label("Repository").select_option("ascend/MindSpeed")
    page.get_by_label("Final type").select_option("C")
    page.get_by_role("button", name="Start export").click()
    expect(page).to_have_url(re.compile(rf"/projects/{labeled_project.slug}/exports/\d+/$"))
    status = page.locator('#export-progress [data-field="status_label"]')
    expect(status).to_have_text("Queued")
    expect(page.locator("#download")).to_be_hidden()
    page.evaluate("window.loadedOnce = true")  # gone if the page reloads

    workers.start()
    expect(status).to_have_text("Done", timeout=EXPORT_TIMEOUT_MS)
    job = ExportJob.objects.get()
    assert job.status == ExportStatus.DONE
    expect(page.locator('#export-progress [data-field="rows_written"]')).to_have_text(
        str(job.rows_written)
    )
    expect(page.locator("#export-bar")).to_have_js_property("value", 1)
    with page.expect_download() as info:
        page.get_by_role("link", name="Download CSV").click()
    download = info.value
    assert download.suggested_filename == job.file
    options = export_options(
        labeled_project, format="long", repository="ascend/MindSpeed", type="C"
    )
    expected = "".join(export_lines(labeled_project, options)).encode()
    assert Path(download.path()).read_bytes() == expected
    assert expected.count(b"\r\n") == job.rows_written + 1 > 1
    assert page.evaluate("window.loadedOnce") is True
    assert errors == []


def test_a_volunteer_gets_403_on_every_export_url(page, personas, labeled_project, var_dir):
    options = export_options(labeled_project, format="study")
    job = export_job_start(project=labeled_project, user=None, options=options, enqueue=False)
    export_job_run(job_id=job.pk)
    slug = labeled_project.slug
    sign_in(page, "volunteer_a")
    page.goto(f"/projects/{slug}/")
    expect(page.get_by_role("link", name="Exports (CSV)")).to_have_count(0)
    for url in [
        f"/projects/{slug}/exports/",
        f"/projects/{slug}/exports/{job.pk}/",
        f"/projects/{slug}/exports/{job.pk}/download/",
        f"/api/projects/{slug}/exports/study/",
        f"/api/projects/{slug}/exports/repositories/",
        f"/api/projects/{slug}/export-jobs/",
        f"/api/projects/{slug}/export-jobs/{job.pk}/",
    ]:
        response = page.goto(url)
        assert response is not None
        assert response.status == 403, url
