"""A real Celery worker on Redis is SIGKILLed mid-harvest, and mid-way through fetching the details
of a URL list; another worker finishes the work, and the database ends up exactly as after an
uninterrupted run."""

import os
import signal
from datetime import date

import pytest
from django.db import connection

from ingest.details import details_stale, issues_fetch_details
from ingest.harvest import harvest_start
from ingest.importers import url_list_import
from ingest.models import Comment, HarvestRun, Issue, RunStatus, Source
from tests.fakes.forge import make_github_issues
from tests.ingest.test_harvest import clean_run_snapshot, snapshot
from tests.stack import wait_for
from tests.workers import worker_pool


@pytest.fixture
def workers(forge, redis_required, transactional_db, settings, tmp_path):
    if connection.vendor != "postgresql":
        pytest.skip("needs PostgreSQL shared between this test and the worker processes")
    with worker_pool(forge, tmp_path) as pool:
        settings.JOB_STALE_SECONDS = int(pool.env["JOB_STALE_SECONDS"])  # as the workers see it
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

    # Heartbeat (and creation: a run younger than that is not swept) moved back past
    # JOB_STALE_SECONDS, no waiting: the next worker sees the run as abandoned.
    workers.make_stale(HarvestRun.objects.filter(pk=run.pk), "heartbeat_at", "created_at")
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


@pytest.mark.worker
def test_killed_worker_mid_detail_fetch_is_swept_up_without_duplicates(forge, workers):
    issues, notes = make_github_issues("NVIDIA", "Megatron-LM", 150, n_prs=0, comments_per_issue=2)
    forge.add_github_repo("NVIDIA", "Megatron-LM", issues, notes)
    forge.delay = 0.05  # slow enough to kill the worker in the middle
    first = workers.start()
    text = "\n".join(issue["html_url"] for issue in issues)
    report = url_list_import(text=text, name="megatron.txt")  # sends two batches of 100 and 50
    fetched = Issue.objects.filter(fetched_at__isnull=False)

    wait_for(lambda: fetched.count() >= 20, 90, "20 issues fetched before the kill")
    os.kill(first.pid, signal.SIGKILL)
    first.wait(timeout=10)
    at_kill = fetched.count()
    assert at_kill < len(issues), "the kill must land before every issue is fetched"

    # Their last touch moved back past JOB_STALE_SECONDS (no waiting): the unfinished issues
    # count as abandoned.
    workers.make_stale(Issue.objects.filter(fetched_at__isnull=True), "details_requested_at")
    assert len(details_stale()) == len(issues) - at_kill
    workers.start()  # its start-up sweep sends them again
    wait_for(lambda: fetched.count() == len(issues), 120, "the second worker to fetch the rest")
    assert details_stale() == []
    assert Comment.objects.count() == 2 * len(issues)  # none twice
    resumed = snapshot()

    forge.delay = 0
    Issue.objects.update(fetched_at=None, title="", body="")
    Comment.objects.all().delete()
    issues_fetch_details(issue_ids=report.issue_ids)  # the same list, never interrupted
    assert snapshot() == resumed


@pytest.mark.worker
def test_a_worker_backs_off_longer_each_secondary_limit_then_gives_up(
    forge, redis_required, transactional_db, tmp_path
):
    """Issue 13, case 7, through a real worker: the task's retries wait 1 s, then 2 s, and the
    third limit in a row fails the run with the reason instead of waiting forever."""
    if connection.vendor != "postgresql":
        pytest.skip("needs PostgreSQL shared between this test and the worker processes")
    issues, notes = make_github_issues("vllm-project", "vllm", 50)
    forge.add_github_repo("vllm-project", "vllm", issues, notes)
    forge.secondary_limit_on, forge.retry_after = set(range(1, 100)), None
    limits = {"HARVEST_SECONDARY_WAIT_SECONDS": "1", "HARVEST_MAX_RATE_WAITS": "2"}
    source = Source.objects.create(
        host="github",
        owner="vllm-project",
        repo="vllm",
        created_from=date(2023, 1, 1),
        created_until=date(2025, 4, 30),
    )
    with worker_pool(forge, tmp_path, env=limits) as pool:
        pool.start()
        run = harvest_start(source=source)
        failed = wait_for(
            lambda: (r := HarvestRun.objects.get(pk=run.pk)).status == RunStatus.FAILED and r,
            60,
            "the run to give up",
        )
    assert "kept refusing with a rate limit: 3 answers in a row" in failed.error
    times = [r["time"] for r in forge.requests]
    assert len(times) == 3
    assert times[1] - times[0] >= 1.0
    assert times[2] - times[1] >= 2.0  # the second wait is longer than the first
