"""A job that writes in one long transaction keeps its heartbeat (annotation.jobs.heartbeat_kept):
the sweep does not take it for abandoned and send it to a second worker while it runs."""

from __future__ import annotations

import time
from datetime import timedelta

from django.db import transaction
from django.utils import timezone

from annotation.jobs import heartbeat_kept, jobs_stale
from annotation.models import ItemImport, JobStatus
from ingest.models import Issue

STALE = 1  # JOB_STALE_SECONDS for these tests: a beat every quarter second


def long_write(*, job_id: int) -> list[int]:
    """A run that spends twice JOB_STALE_SECONDS in one transaction, as a big import does, and
    returns what the sweep sees just before it commits."""
    with transaction.atomic():
        Issue.objects.create(owner="NVIDIA", repo="Megatron-LM", number=job_id, title="written")
        time.sleep(2 * STALE)
        return jobs_stale(ItemImport)


def running_job(project) -> ItemImport:
    claimed_long_ago = timezone.now() - timedelta(seconds=10 * STALE)
    return ItemImport.objects.create(
        project=project, name="big.jsonl", status=JobStatus.RUNNING, heartbeat_at=claimed_long_ago
    )


def test_a_long_transaction_keeps_its_job_attended(transactional_db, project, settings):
    settings.JOB_STALE_SECONDS = STALE
    job = running_job(project)
    assert heartbeat_kept(ItemImport)(long_write)(job_id=job.pk) == []
    assert Issue.objects.filter(number=job.pk).exists()  # the run's write, committed
    job.refresh_from_db()
    assert timezone.now() - job.heartbeat_at < timedelta(seconds=STALE)


def test_without_it_the_sweep_takes_a_long_transaction_for_abandoned(
    transactional_db, project, settings
):
    settings.JOB_STALE_SECONDS = STALE
    job = running_job(project)
    assert long_write(job_id=job.pk) == [job.pk]


def test_a_finished_job_is_left_alone(transactional_db, project, settings):
    settings.JOB_STALE_SECONDS = STALE
    done = ItemImport.objects.create(project=project, name="a.jsonl", status=JobStatus.DONE)

    @heartbeat_kept(ItemImport)
    def run(*, job_id: int) -> None:
        time.sleep(STALE)

    run(job_id=done.pk)
    done.refresh_from_db()
    assert done.heartbeat_at is None
