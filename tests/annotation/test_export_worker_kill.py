"""A real Celery worker is SIGKILLed while it writes a large export. No file is offered while the
job is unfinished; the next worker's stale-job sweep sends the job again, and the file it writes
is whole and the same as an export that was never interrupted."""

import os
import signal

import pytest
from django.db import connection

from annotation.models import ExportJob, ExportStatus
from annotation.projects.importers import study_labels_import
from annotation.reporting.export_jobs import export_job_file, export_job_start, export_jobs_stale
from annotation.reporting.exports import export_lines, export_options
from tests.bench.run import generate_csv
from tests.conftest import STUDY
from tests.stack import wait_for
from tests.workers import worker_pool

ROWS = 15_000  # x 7 labels: a long export of 105,000 rows, a few seconds' writing


@pytest.fixture
def big_project(project, tmp_path):
    path = tmp_path / "study.csv"
    generate_csv(path, rows=ROWS, seed=11, labels_dir=STUDY / "labels")
    study_labels_import(project=project, path=path)
    return project


@pytest.fixture
def workers(redis_required, transactional_db, settings, tmp_path):
    if connection.vendor != "postgresql":
        pytest.skip("needs PostgreSQL shared between this test and the worker processes")
    settings.VAR_DIR = tmp_path / "var"
    settings.VAR_DIR.mkdir()
    with worker_pool(None, tmp_path) as pool:
        settings.JOB_STALE_SECONDS = int(pool.env["JOB_STALE_SECONDS"])  # as the workers see it
        yield pool


@pytest.mark.worker
def test_killed_worker_mid_export_is_swept_up_and_the_file_is_whole(big_project, workers):
    options = export_options(big_project, format="long")
    first = workers.start()
    job = export_job_start(project=big_project, user=None, options=options)

    def writing():
        current = ExportJob.objects.get(pk=job.pk)
        return current.status == ExportStatus.RUNNING and current.rows_written > 0 and current

    killed_at = wait_for(writing, 90, "the worker to be part-way through the file", every=0.02)
    os.kill(first.pid, signal.SIGKILL)
    first.wait(timeout=10)
    job.refresh_from_db()
    assert job.status == ExportStatus.RUNNING, "the kill must land before the file is done"
    assert job.rows_written < job.rows_total
    assert export_job_file(job) is None  # nothing to download
    exports = workers.env["CONCORD_VAR_DIR"] + "/exports"
    assert [name for name in os.listdir(exports) if not name.startswith(".")] == []

    assert export_jobs_stale() == [], "a fresh heartbeat: not yet abandoned"
    # Its heartbeat moved back past JOB_STALE_SECONDS (no waiting): the job counts as abandoned.
    workers.make_stale(ExportJob.objects.filter(pk=job.pk), "heartbeat_at")
    assert export_jobs_stale() == [job.pk]
    workers.start()  # its start-up sweep sends the job again
    done = wait_for(
        lambda: (j := ExportJob.objects.get(pk=job.pk)).status == ExportStatus.DONE and j,
        120,
        "the second worker to write the file",
    )
    assert done.started_at > killed_at.started_at
    assert done.rows_written == done.rows_total == 7 * ROWS
    path = export_job_file(done)
    assert path.read_bytes().decode() == "".join(export_lines(big_project, options))
    assert sorted(os.listdir(exports)) == [done.file]  # the killed attempt's part file is gone
