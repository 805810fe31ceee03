"""Tasks that talk to a tracker have a queue of their own (concord/celery.py): a lead's export
queued behind a backlog of detail fetches waits for the one being fetched, not for all of them."""

import pytest
from django.db import connection

from annotation.models import ExportJob, ExportStatus
from annotation.reporting.export_jobs import export_job_start
from annotation.reporting.exports import export_options
from ingest.details import details_request
from ingest.importers import url_list_import
from ingest.models import Issue
from tests.fakes.forge import make_github_issues
from tests.stack import wait_for
from tests.workers import worker_pool

BATCHES, PER_BATCH = 6, 5
SECONDS_PER_REQUEST = 0.4  # a batch: 5 issues, one request each, 2 s


@pytest.fixture
def workers(redis_required, transactional_db, forge, settings, tmp_path):
    if connection.vendor != "postgresql":
        pytest.skip("needs PostgreSQL shared between this test and the worker processes")
    settings.VAR_DIR = tmp_path / "var"
    settings.VAR_DIR.mkdir()
    with worker_pool(forge, tmp_path) as pool:
        yield pool


@pytest.mark.worker
def test_an_export_queued_behind_detail_fetches_runs_before_they_are_all_done(
    project, forge, workers
):
    issues, notes = make_github_issues(
        "NVIDIA", "Megatron-LM", BATCHES * PER_BATCH, comments_per_issue=0
    )
    forge.add_github_repo("NVIDIA", "Megatron-LM", issues, notes)
    text = "\n".join(f"https://github.com/NVIDIA/Megatron-LM/issues/{i['number']}" for i in issues)
    ids = url_list_import(text=text, name="list.txt", fetch_details=False).issue_ids
    forge.delay = SECONDS_PER_REQUEST
    for start in range(0, len(ids), PER_BATCH):  # a batch each, as a long URL list sends them
        assert details_request(ids[start : start + PER_BATCH]) == 1
    options = export_options(project, format="study")
    job = export_job_start(project=project, user=None, options=options)
    workers.start()

    wait_for(
        lambda: ExportJob.objects.get(pk=job.pk).status == ExportStatus.DONE,
        60,
        "the export to be written",
    )
    waiting = Issue.objects.filter(pk__in=ids, fetched_at__isnull=True).count()
    assert waiting >= 2 * PER_BATCH, "the export waited for most of the fetches"
    wait_for(
        lambda: not Issue.objects.filter(pk__in=ids, fetched_at__isnull=True).exists(),
        90,
        "the fetches queued before the export to be done",
    )
