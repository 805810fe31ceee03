"""Study label files from the browser: upload on the project's page, a background job (claimed,
beating and swept like every job, annotation.jobs), the per-file per-line report; the API does
the same. A real Celery worker runs the job end to end."""

from __future__ import annotations

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.db import connection
from django.db.models import F
from django.utils import translation
from rest_framework.test import APIClient

from annotation.models import ExportStatus, FigureState, FigureTally, LabelImportJob, MergedRepeat
from annotation.projects.label_imports import (
    MAX_FILES,
    Upload,
    label_import_progress,
    label_import_queue,
    label_import_run,
    label_imports_stale,
)
from tests.conftest import STUDY, needs_postgres
from tests.stack import wait_for
from tests.workers import worker_pool

MEGATRON = "https://github.com/NVIDIA/Megatron-LM/issues/"
REPEATING = (
    "Issue_URL,Label1,Label2,Final_Label\n"
    f"{MEGATRON}1,C.9,C.9,C.9\n"
    f"{MEGATRON}2,A.3,A.3,A.3\n"
    f"{MEGATRON}1,C.9,A.3,C.9\n"  # line 4: repeats line 2, labels differ
).encode()
BAD = f"Issue_URL,Label1,Final_Label\n{MEGATRON}3,C.99,C.9\n".encode()


@pytest.fixture
def var_dir(settings, tmp_path):
    settings.VAR_DIR = tmp_path
    return tmp_path


def test_upload_page_queues_a_job_and_its_page_shows_the_report(client, personas, project, var_dir):
    client.force_login(personas["admin"])
    files = [
        SimpleUploadedFile("megatron.csv", REPEATING),
        SimpleUploadedFile("bad.csv", BAD),
    ]
    response = client.post(f"/projects/{project.slug}/label-files/", {"label_files": files})
    assert response.status_code == 302
    job = LabelImportJob.objects.get()
    assert response["Location"] == f"/projects/{project.slug}/label-files/{job.pk}/"
    assert [f["name"] for f in job.files] == ["megatron.csv", "bad.csv"]
    assert job.status == ExportStatus.QUEUED
    label_import_run(job_id=job.pk)  # what the worker does with the task

    page = client.get(response["Location"]).content.decode()
    assert "megatron.csv: imported" in page
    assert "1</strong> repeated row skipped" in page
    assert '<td class="num">4</td><td>2</td><td>differ from the kept row</td>' in page
    assert "bad.csv: refused, nothing written" in page
    assert "unknown taxonomy code &#x27;C.99&#x27;" in page
    assert project.items.count() == 2
    assert MergedRepeat.objects.get().line == 4
    assert not (var_dir / "label-imports" / job.files[0]["stored"]).exists()  # cleaned up


def test_the_job_leaves_the_agreement_figures_rebuilt(personas, project, var_dir, eager_tasks):
    """The job queues the rebuild as a task of its own (run here at once, as without a broker;
    a real worker runs it in test_a_real_worker_imports_an_upload)."""
    needs_postgres(connection)
    queued = label_import_queue(
        project=project,
        user=personas["admin"],
        uploads=[Upload("megatron.csv", REPEATING)],
        refuse_repeats=False,
        enqueue=False,
    )
    label_import_run(job_id=queued.job.pk)
    state = FigureState.objects.get(project=project)
    assert state.built == state.generation  # the import marked them stale; the job rebuilt them
    assert FigureTally.objects.filter(project=project).count() == 1


def test_refuse_repeats_option_refuses_the_file(client, personas, project, var_dir):
    client.force_login(personas["admin"])
    upload = SimpleUploadedFile("megatron.csv", REPEATING)
    client.post(
        f"/projects/{project.slug}/label-files/", {"label_files": [upload], "refuse_repeats": "on"}
    )
    job = label_import_run(job_id=LabelImportJob.objects.get().pk)
    (entry,) = job.report
    assert not entry["ok"]
    assert entry["errors"] == [
        {"line": 4, "column": "Issue_URL", "message": "duplicate of line 2 with different labels"}
    ]
    assert not project.items.exists()


def test_a_rerun_changes_nothing_and_a_done_job_is_left_alone(personas, project, var_dir):
    queued = label_import_queue(
        project=project,
        user=personas["admin"],
        uploads=[Upload("MindSpeed.csv", (STUDY / "labels" / "MindSpeed.csv").read_bytes())],
        refuse_repeats=False,
        enqueue=False,
    )
    LabelImportJob.objects.filter(pk=queued.job.pk).update(status=ExportStatus.RUNNING)
    assert label_imports_stale() == [queued.job.pk]  # running, never a heartbeat: abandoned
    job = label_import_run(job_id=queued.job.pk)
    assert job.status == ExportStatus.DONE
    assert job.report[0]["items_created"] == 80
    assert label_import_progress(job)["step"] == "Done: 1 of 1 file(s) imported."
    assert label_import_run(job_id=job.pk).finished_at == job.finished_at  # left alone
    assert project.items.count() == 80


def test_too_many_files_are_refused_before_anything_is_saved(client, personas, project, var_dir):
    client.force_login(personas["admin"])
    files = [SimpleUploadedFile(f"{n}.csv", BAD) for n in range(MAX_FILES + 1)]
    page = client.post(f"/projects/{project.slug}/label-files/", {"label_files": files})
    assert page.status_code == 200
    assert f"upload at most {MAX_FILES}" in page.content.decode()
    assert not LabelImportJob.objects.exists()


def test_api_uploads_and_reports(personas, project, var_dir):
    api = APIClient()
    api.force_authenticate(personas["admin"])
    answer = api.post(
        f"/api/projects/{project.slug}/label-files/",
        {"files": [SimpleUploadedFile("m.csv", REPEATING)]},
        format="multipart",
    )
    assert answer.status_code == 202
    job_id = answer.json()["id"]
    label_import_run(job_id=job_id)
    body = api.get(f"/api/projects/{project.slug}/label-files/{job_id}/").json()
    assert body["status"] == "done"
    assert body["report"][0]["repeats"] == [{"line": 4, "first_line": 2, "labels_differ": True}]
    api.force_authenticate(personas["lead"])
    assert api.get(f"/api/projects/{project.slug}/label-files/{job_id}/").status_code == 403


@pytest.mark.worker
def test_a_real_worker_imports_an_upload(
    redis_required, transactional_db, personas, project, settings, tmp_path
):
    if connection.vendor != "postgresql":
        pytest.skip("needs PostgreSQL shared between this test and the worker processes")
    settings.VAR_DIR = tmp_path / "var"
    settings.VAR_DIR.mkdir()
    with worker_pool(None, tmp_path) as workers:
        workers.start()
        queued = label_import_queue(
            project=project,
            user=personas["admin"],
            uploads=[
                Upload("MindSpeed.csv", (STUDY / "labels" / "MindSpeed.csv").read_bytes()),
                Upload("m.csv", REPEATING),
            ],
            refuse_repeats=False,
        )
        done = wait_for(
            lambda: (j := LabelImportJob.objects.get(pk=queued.job.pk)).status == "done" and j,
            120,
            "the worker to import both files",
        )
        # then the tallies' rebuild the job queued, a task of its own
        wait_for(
            lambda: FigureState.objects.filter(project=project, built=F("generation")).exists(),
            60,
            "the worker to rebuild the agreement tallies the import left stale",
        )
    assert [entry["ok"] for entry in done.report] == [True, True]
    assert done.files_done == 2
    assert project.items.count() == 82


def test_an_archived_project_takes_no_label_file(client, personas, project, var_dir):
    from annotation.projects.settings import project_archive

    project_archive(project=project, actor=personas["admin"], archived=True)
    client.force_login(personas["admin"])
    upload = SimpleUploadedFile("m.csv", REPEATING)
    page = client.post(f"/projects/{project.slug}/label-files/", {"label_files": [upload]})
    assert "archived" in page.content.decode()
    assert not LabelImportJob.objects.exists()


def test_a_file_uploaded_from_the_chinese_interface_is_reported_in_chinese(
    client, personas, project, var_dir
):
    client.force_login(personas["admin"])
    client.cookies["django_language"] = "zh-hans"
    client.post(
        f"/projects/{project.slug}/label-files/",
        {"label_files": [SimpleUploadedFile("bad.csv", BAD)]},
    )
    job = LabelImportJob.objects.get()
    assert job.language == "zh-hans"
    with translation.override("en"):  # the worker's own language
        job = label_import_run(job_id=job.pk)
    assert job.report[0]["errors"] == [
        {"line": 2, "column": "Label1", "message": "未知的分类代码 'C.99'"}
    ]
    page = client.get(f"/projects/{project.slug}/label-files/{job.pk}/").content.decode()
    assert "未知的分类代码 &#x27;C.99&#x27;" in page
