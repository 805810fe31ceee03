"""The replication package from the browser (issue 28): an admin uploads a package into an empty
project (a background job; Celery runs it in the server's process here) and reads its report,
exports the package from the exports page and downloads the zip, whose files are the ones
uploaded, byte for byte; the downloaded zip then goes into a second empty project the same
way, whose project archive, made from the exports page too, restore_project restores."""

from __future__ import annotations

import zipfile
from pathlib import Path

import pytest
from django.core.management import call_command
from playwright.sync_api import Page, expect

from annotation.models import Item, Project, Role
from tests.annotation.test_package import ODD, zipped
from tests.browser.test_pages import collect_errors, sign_in
from tests.browser.test_study_setup import JOB_TIMEOUT_MS
from tests.factories import MembershipFactory, ProjectFactory, UserFactory

pytestmark = pytest.mark.browser


def upload_package(page: Page, slug: str, path: Path) -> None:
    page.goto(f"/projects/{slug}/")
    page.get_by_role("link", name="Replication package").click()
    page.get_by_label("Replication package (.zip)").set_input_files(str(path))
    # the job runs in the request here (no worker): the answer may take longer than a click waits
    page.get_by_role("button", name="Upload and import").click(no_wait_after=True)
    expect(page.locator("#import-status")).to_have_text("Done", timeout=JOB_TIMEOUT_MS)


def test_a_package_exported_and_imported_again_in_the_browser(
    page, study_taxonomy, eager_tasks, settings, tmp_path
):
    settings.VAR_DIR = tmp_path
    admin = UserFactory(username="package-admin")
    first, second = (
        ProjectFactory(taxonomy=study_taxonomy, slug=slug, screening_enabled=False)
        for slug in ("published", "replicated")
    )
    for project in (first, second):
        MembershipFactory(project=project, user=admin, role=Role.ADMIN)
    errors = collect_errors(page)
    sign_in(page, "package-admin")

    (tmp_path / "odd.zip").write_bytes(zipped(ODD))
    upload_package(page, first.slug, tmp_path / "odd.zip")
    files = page.locator("#package-files")
    expect(files).to_contain_text("Issue Report/Megatron-LM.csv")
    expect(files).to_contain_text("5: 2")  # the repeated row, kept, and the line it repeats

    page.goto(f"/projects/{first.slug}/exports/")
    page.get_by_role("button", name="Export the replication package").click(no_wait_after=True)
    status = page.locator('#export-progress [data-field="status_label"]')
    expect(status).to_have_text("Done", timeout=JOB_TIMEOUT_MS)
    with page.expect_download() as info:
        page.get_by_role("link", name="Download the zip").click()
    downloaded = tmp_path / "published.zip"
    info.value.save_as(downloaded)
    with zipfile.ZipFile(downloaded) as archive:
        for name, text in ODD.items():
            assert archive.read(name) == text.encode("utf-8"), name
        assert "Fleiss' kappa" in archive.read("README.md").decode()

    upload_package(page, second.slug, downloaded)
    expect(page.locator("#package-files")).to_contain_text("Issue Report/MindSpeed.csv")
    held = {p.slug: Item.objects.filter(project=p).count() for p in Project.objects.all()}
    assert held["replicated"] == held["published"] == 5

    # the project archive, the same way: a job from the exports page, a zip restore_project reads
    page.goto(f"/projects/{second.slug}/exports/")
    page.get_by_role("button", name="Archive the project").click(no_wait_after=True)
    expect(status).to_have_text("Done", timeout=JOB_TIMEOUT_MS)
    with page.expect_download() as info:
        page.get_by_role("link", name="Download the zip").click()
    info.value.save_as(tmp_path / "replicated-archive.zip")
    call_command("restore_project", str(tmp_path / "replicated-archive.zip"), "--slug", "restored")
    assert Item.objects.filter(project__slug="restored").count() == 5
    assert errors == []
