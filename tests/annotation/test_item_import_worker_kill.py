"""A real Celery worker is SIGKILLed while it writes a large item import. Its transaction dies
with it: no issue, comment or item of the file is there. The next worker's stale-job sweep sends
the job again, and the rerun writes the whole file once."""

import os
import signal

import pytest
from django.db import connection

from annotation.jobs import jobs_stale
from annotation.models import ItemImport, JobStatus
from annotation.projects.item_imports import item_import_start
from ingest.models import Comment, Issue
from tests.bench.item_imports import issues_jsonl
from tests.stack import wait_for
from tests.workers import worker_pool

ROWS = 20_000  # issues with two comments each: a few seconds of writing


@pytest.fixture
def workers(redis_required, transactional_db, settings, tmp_path):
    if connection.vendor != "postgresql":
        pytest.skip("needs PostgreSQL shared between this test and the worker processes")
    with worker_pool(None, tmp_path) as pool:
        settings.JOB_STALE_SECONDS = int(pool.env["JOB_STALE_SECONDS"])  # as the workers see it
        yield pool


@pytest.mark.worker
def test_killed_worker_mid_import_leaves_nothing_and_the_rerun_writes_it_once(project, workers):
    first = workers.start()
    job = item_import_start(
        project=project, user=None, name="big.jsonl", blocks=[issues_jsonl(ROWS).encode()]
    ).job

    def writing():
        current = ItemImport.objects.get(pk=job.pk)
        return current.status == JobStatus.RUNNING and current.records_total == ROWS and current

    wait_for(writing, 120, "the worker to be writing the checked file", every=0.02)
    os.kill(first.pid, signal.SIGKILL)
    first.wait(timeout=10)
    assert ItemImport.objects.get(pk=job.pk).status == JobStatus.RUNNING, "killed before the end"
    assert (Issue.objects.count(), Comment.objects.count(), project.items.count()) == (0, 0, 0)

    workers.make_stale(ItemImport.objects.filter(pk=job.pk), "heartbeat_at")
    assert jobs_stale(ItemImport) == [job.pk]
    workers.start()  # its start-up sweep sends the job again
    done = wait_for(
        lambda: (j := ItemImport.objects.get(pk=job.pk)).status == JobStatus.DONE and j,
        180,
        "the second worker to write the import",
    )
    assert (done.issues_created, done.items_added) == (ROWS, ROWS)
    assert (Issue.objects.count(), Comment.objects.count()) == (ROWS, 2 * ROWS)
    assert project.items.count() == ROWS
