"""A real Celery worker on Redis is SIGKILLed mid-harvest; another worker finishes the run, and
the database ends up exactly as after a clean run."""

import os
import signal
import time
from datetime import date
from pathlib import Path

import pytest
from django.db import connection

from ingest.harvest import harvest_start
from ingest.models import HarvestRun, RunStatus, Source
from tests.fakes.forge import make_github_issues
from tests.ingest.test_harvest import clean_run_snapshot, snapshot
from tests.workers import worker_pool

ROOT = Path(__file__).resolve().parents[2]


def wait_for(condition, timeout: float, what: str):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = condition()
        if value:
            return value
        time.sleep(0.1)
    raise AssertionError(f"timed out after {timeout}s waiting for {what}")


@pytest.fixture
def workers(forge, redis_required, transactional_db, tmp_path):
    if connection.vendor != "postgresql":
        pytest.skip("needs PostgreSQL shared between this test and the worker processes")
    with worker_pool(forge, tmp_path) as pool:
        yield pool


@pytest.mark.worker
def test_killed_worker_mid_harvest_resumes_without_duplicates_or_gaps(forge, workers):
    issues, notes = make_github_issues(
        "vllm-project", "vllm", 2400, n_prs=100, comments_per_issue=1
    )
    forge.add_github_repo("vllm-project", "vllm", issues, notes)
    forge.delay = 0.05  # slow enough to kill the worker in the middle
    source = Source.objects.create(
        host="github",
        owner="vllm-project",
        repo="vllm",
        created_from=date(2023, 1, 1),
        created_until=date(2025, 4, 30),
    )
    first = workers.start()
    run = harvest_start(source=source)

    wait_for(lambda: HarvestRun.objects.get(pk=run.pk).pages >= 8, 90, "8 pages before the kill")
    os.kill(first.pid, signal.SIGKILL)
    first.wait(timeout=10)
    killed_at = HarvestRun.objects.get(pk=run.pk)
    assert killed_at.is_active, "the run must still be unfinished when its worker dies"

    time.sleep(2.5)  # past JOB_STALE_SECONDS: the next worker sees the run as abandoned
    workers.start()
    done = wait_for(
        lambda: (r := HarvestRun.objects.get(pk=run.pk)).status == RunStatus.DONE and r,
        180,
        "the second worker to finish the run",
    )
    assert done.pages > killed_at.pages
    resumed = snapshot()
    forge.delay = 0
    assert clean_run_snapshot(source) == resumed
