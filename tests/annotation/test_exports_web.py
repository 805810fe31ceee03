"""Exports over HTTP: the page starts a job that a Celery task (run in-process, as without a
broker) writes; the progress endpoint; downloads only of finished files; the streaming API; who
may use any of it."""

from __future__ import annotations

import csv
import io
from collections.abc import Iterator

import pytest
from django.http import FileResponse, StreamingHttpResponse

from annotation.models import ExportJob, ExportStatus
from annotation.reporting.export_jobs import export_file_name, export_job_run, export_job_start
from annotation.reporting.exports import export_lines, export_options
from tests.factories import UserFactory


@pytest.fixture(autouse=True)
def exports_dir(settings, tmp_path):
    settings.VAR_DIR = tmp_path
    return tmp_path / "exports"


@pytest.fixture
def admin_client(client, personas):
    client.force_login(personas["admin"])
    return client


def expected_text(project, **options) -> str:
    return "".join(export_lines(project, export_options(project, **options)))


# ---------------------------------------------------------------- job lifecycle


def test_admin_starts_an_export_and_downloads_the_finished_file(
    admin_client, labeled_project, eager_tasks, django_capture_on_commit_callbacks, exports_dir
):
    slug = labeled_project.slug
    page = admin_client.get(f"/projects/{slug}/")
    assert f'href="/projects/{slug}/exports/"' in page.content.decode()

    form = admin_client.get(f"/projects/{slug}/exports/")
    assert form.status_code == 200
    assert "ascend/MindSpeed" in form.content.decode()  # the repository filter offers it
    with django_capture_on_commit_callbacks(execute=True):
        response = admin_client.post(
            f"/projects/{slug}/exports/", {"format": "final", "type": "C", "bom": "on"}
        )
    job = ExportJob.objects.get()
    assert response.status_code == 302
    assert response["Location"] == f"/projects/{slug}/exports/{job.pk}/"
    assert job.status == ExportStatus.DONE
    assert job.options["type"] == "C"
    assert job.options["bom"] is True
    assert job.rows_written == job.rows_total > 0
    assert job.requested_by.username == "admin"
    assert [p.name for p in exports_dir.iterdir()] == [job.file]  # no temporary file left

    progress = admin_client.get(f"/projects/{slug}/exports/{job.pk}/").content.decode()
    assert f'href="/projects/{slug}/exports/{job.pk}/download/"' in progress
    assert "js/export-progress.js" in progress

    download = admin_client.get(f"/projects/{slug}/exports/{job.pk}/download/")
    assert isinstance(download, FileResponse)
    assert download["Content-Type"] == "text/csv; charset=utf-8"
    assert download["Content-Disposition"] == f'attachment; filename="{job.file}"'
    body = b"".join(download.streaming_content)
    assert body == expected_text(labeled_project, format="final", type="C", bom=True).encode()
    rows = list(csv.reader(io.StringIO(body.decode("utf-8-sig"), newline="")))
    assert len(rows) == job.rows_written + 1
    assert {row[3] for row in rows[1:]} == {"C"}

    listed = admin_client.get(f"/projects/{slug}/exports/").content.decode()
    assert job.file in listed


def test_progress_endpoint_reports_queued_then_done_with_a_download_url(
    admin_client, labeled_project, exports_dir
):
    options = export_options(labeled_project, format="long")
    job = export_job_start(project=labeled_project, user=None, options=options, enqueue=False)
    url = f"/api/projects/{labeled_project.slug}/export-jobs/{job.pk}/"
    queued = admin_client.get(url).json()
    assert queued["status"] == "queued"
    assert queued["is_active"] is True
    assert queued["rows_total"] == 560
    assert queued["rows_written"] == 0
    assert queued["download_url"] is None
    assert queued["progress"] == {"fraction": 0.0, "step": "Queued: waiting for a worker."}

    export_job_run(job_id=job.pk)  # what the Celery task calls
    done = admin_client.get(url).json()
    assert done["status"] == "done"
    assert done["is_active"] is False
    assert done["rows_written"] == 560
    assert done["progress"]["fraction"] == 1.0
    assert done["download_url"] == f"/projects/{labeled_project.slug}/exports/{job.pk}/download/"
    assert admin_client.get(done["download_url"]).status_code == 200

    # Running the task again (a redelivery) leaves a finished job alone.
    before = ExportJob.objects.get(pk=job.pk).finished_at
    export_job_run(job_id=job.pk)
    assert ExportJob.objects.get(pk=job.pk).finished_at == before


def test_a_failed_job_says_why_and_offers_no_download(admin_client, labeled_project, exports_dir):
    # Queued with a type that no longer checks out (as if the taxonomy changed since).
    job = ExportJob.objects.create(
        project=labeled_project, format="final", options={"type": "Q", "level": "theme"}
    )
    export_job_run(job_id=job.pk)
    job.refresh_from_db()
    assert job.status == ExportStatus.FAILED
    assert "'Q' is not a type of" in job.error
    assert job.file == ""

    slug = labeled_project.slug
    page = admin_client.get(f"/projects/{slug}/exports/{job.pk}/").content.decode()
    assert "is not a type of" in page
    assert f"/exports/{job.pk}/download/" not in page
    assert admin_client.get(f"/projects/{slug}/exports/{job.pk}/download/").status_code == 404
    api = admin_client.get(f"/api/projects/{slug}/export-jobs/{job.pk}/").json()
    assert api["status"] == "failed"
    assert api["download_url"] is None
    assert api["progress"]["step"].startswith("Failed: ")
    assert not exports_dir.exists() or not any(exports_dir.iterdir())


def test_a_job_that_cannot_write_fails_without_leaving_a_file(
    admin_client, labeled_project, settings, tmp_path
):
    blocked = tmp_path / "not-a-directory"
    blocked.write_text("a file where the var directory should be")
    settings.VAR_DIR = blocked
    options = export_options(labeled_project, format="study")
    job = export_job_start(project=labeled_project, user=None, options=options, enqueue=False)
    job = export_job_run(job_id=job.pk)
    assert job.status == ExportStatus.FAILED
    assert job.error.startswith("Could not write the file")
    url = f"/projects/{labeled_project.slug}/exports/{job.pk}/download/"
    assert admin_client.get(url).status_code == 404


def test_a_job_killed_mid_run_is_restarted_by_the_redelivered_task(labeled_project, exports_dir):
    """A worker killed while writing leaves the job `running`, a temporary file at most, and no
    file under the job's name; the task comes back (acks_late) and writes it whole."""
    options = export_options(labeled_project, format="long")
    job = export_job_start(project=labeled_project, user=None, options=options, enqueue=False)
    exports_dir.mkdir(parents=True)
    half = exports_dir / f".{export_file_name(job, options)}.x1y2z3.part"
    half.write_text("Issue_URL,Repository\r\nhttps://gitee.com/asc")
    ExportJob.objects.filter(pk=job.pk).update(status=ExportStatus.RUNNING, rows_written=100)
    job.refresh_from_db()
    assert job.is_active
    assert job.file == ""
    job = export_job_run(job_id=job.pk)
    assert job.status == ExportStatus.DONE
    assert job.rows_written == 560
    assert [p.name for p in exports_dir.iterdir()] == [job.file]  # the half file is gone
    assert (exports_dir / job.file).read_bytes().decode() == expected_text(
        labeled_project, format="long"
    )


def test_files_past_the_keeping_time_are_deleted_and_the_job_says_so(
    admin_client, labeled_project, exports_dir, settings
):
    from datetime import timedelta

    from django.utils import timezone

    from annotation.reporting.export_jobs import export_files_expire, export_job_progress

    options = export_options(labeled_project, format="study")
    old, recent = (
        export_job_run(
            job_id=export_job_start(
                project=labeled_project, user=None, options=options, enqueue=False
            ).pk
        )
        for _ in range(2)
    )
    settings.EXPORT_KEEP_DAYS = 30
    ExportJob.objects.filter(pk=old.pk).update(finished_at=timezone.now() - timedelta(days=31))
    assert export_files_expire() == 1
    assert export_files_expire() == 0  # nothing left to do
    old.refresh_from_db()
    assert sorted(p.name for p in exports_dir.iterdir()) == [recent.file]
    assert "deleted after 30 days" in export_job_progress(old)["step"]
    url = f"/projects/{labeled_project.slug}/exports/{old.pk}/download/"
    assert admin_client.get(url).status_code == 404
    page = admin_client.get(f"/projects/{labeled_project.slug}/exports/{old.pk}/")
    assert "start the export again" in page.content.decode()
    assert 'id="download" hidden' in page.content.decode()


def test_page_form_errors_are_shown_beside_the_form(admin_client, labeled_project):
    response = admin_client.post(
        f"/projects/{labeled_project.slug}/exports/",
        {"format": "long", "created_from": "2025-02-01", "created_until": "2025-01-01"},
    )
    assert response.status_code == 200
    assert "The date window is empty" in response.content.decode()
    assert not ExportJob.objects.exists()


# ---------------------------------------------------------------- the API


def test_api_streams_the_export_without_building_it_first(admin_client, labeled_project):
    url = f"/api/projects/{labeled_project.slug}/exports/study/"
    response = admin_client.get(url, {"level": "type", "repository": "ascend/MindSpeed"})
    assert response.status_code == 200
    assert isinstance(response, StreamingHttpResponse)
    assert isinstance(response.streaming_content, Iterator)  # a generator, not a joined string
    assert response["Content-Type"] == "text/csv; charset=utf-8"
    assert response["Content-Disposition"].startswith('attachment; filename="study-study-type-')
    body = b"".join(response.streaming_content).decode()
    assert body == expected_text(
        labeled_project, format="study", level="type", repository="ascend/MindSpeed"
    )
    rows = list(csv.reader(io.StringIO(body, newline="")))
    assert len(rows) == 81
    assert {cell for row in rows[1:] for cell in row[1:]} <= {"A", "B", "C", ""}


def test_api_answers_a_client_that_asks_for_csv(admin_client, labeled_project):
    url = f"/api/projects/{labeled_project.slug}/exports/repositories/"
    response = admin_client.get(url, HTTP_ACCEPT="text/csv")
    assert response.status_code == 200
    table = list(csv.reader(io.StringIO(b"".join(response.streaming_content).decode())))
    assert table[1][:2] == ["ascend/MindSpeed", "gitee"]
    assert table[-1][0] == "Total"
    refused = admin_client.get(url, {"type": "Q"}, HTTP_ACCEPT="text/csv")
    assert refused.status_code == 400
    assert "is not a type of" in refused.content.decode()


@pytest.mark.parametrize(
    ("path", "query", "code", "reason"),
    [
        ("exports/xml/", {}, 404, "No export format 'xml'"),
        ("exports/study/", {"level": "deep"}, 400, '"level"'),
        ("exports/final/", {"type": "Z"}, 400, "'Z' is not a type of"),
        ("exports/long/", {"created_from": "yesterday"}, 400, '"created_from"'),
    ],
)
def test_api_refuses_bad_requests_with_the_reason(
    admin_client, labeled_project, path, query, code, reason
):
    response = admin_client.get(f"/api/projects/{labeled_project.slug}/{path}", query)
    assert response.status_code == code
    assert reason in response.content.decode()


def test_api_queues_a_job_and_lists_it(
    admin_client, labeled_project, eager_tasks, django_capture_on_commit_callbacks
):
    url = f"/api/projects/{labeled_project.slug}/export-jobs/"
    with django_capture_on_commit_callbacks(execute=True):
        response = admin_client.post(
            url, {"format": "study", "level": "type"}, content_type="application/json"
        )
    assert response.status_code == 201
    created = response.json()
    assert created["format"] == "study"
    assert created["rows_total"] == 80
    job = admin_client.get(f"{url}{created['id']}/").json()
    assert job["status"] == "done"
    download = admin_client.get(job["download_url"])
    assert b"".join(download.streaming_content).decode() == expected_text(
        labeled_project, format="study", level="type"
    )
    assert [j["id"] for j in admin_client.get(url).json()] == [created["id"]]
    bad = admin_client.post(url, {"format": "pdf"}, content_type="application/json")
    assert bad.status_code == 400


# ---------------------------------------------------------------- who may


def export_urls(project, job) -> list[tuple[str, str]]:
    slug = project.slug
    return [
        ("get", f"/projects/{slug}/exports/"),
        ("post", f"/projects/{slug}/exports/"),
        ("get", f"/projects/{slug}/exports/{job.pk}/"),
        ("get", f"/projects/{slug}/exports/{job.pk}/download/"),
        ("get", f"/api/projects/{slug}/exports/study/"),
        ("get", f"/api/projects/{slug}/exports/long/"),
        ("get", f"/api/projects/{slug}/export-jobs/"),
        ("post", f"/api/projects/{slug}/export-jobs/"),
        ("get", f"/api/projects/{slug}/export-jobs/{job.pk}/"),
    ]


@pytest.mark.parametrize(
    ("who", "code"), [("volunteer_a", 403), ("lead", 403), ("outsider", 404), ("staff", 200)]
)
def test_only_project_admins_and_staff_may_export(client, personas, labeled_project, who, code):
    options = export_options(labeled_project, format="study")
    job = export_job_start(project=labeled_project, user=None, options=options, enqueue=False)
    export_job_run(job_id=job.pk)
    person = (
        UserFactory(username="site", is_staff=True, is_superuser=True)
        if who == "staff"
        else personas[who]
    )
    client.force_login(person)
    for method, url in export_urls(labeled_project, job):
        data = {"format": "study"}
        if method == "post" and url.startswith("/api/"):
            response = client.post(url, data, content_type="application/json")
        else:
            response = getattr(client, method)(url, data if method == "post" else None)
        expected = code if code != 200 else (201 if method == "post" else (302, 200))
        allowed = expected if isinstance(expected, tuple) else (expected,)
        if method == "post" and not url.startswith("/api/") and code == 200:
            allowed = (302,)
        assert response.status_code in allowed, f"{who} {method} {url}: {response.status_code}"
    if code != 200:
        assert ExportJob.objects.count() == 1  # the refused POSTs queued nothing
