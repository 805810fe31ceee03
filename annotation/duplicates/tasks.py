"""Celery task of the near-duplicate index: an id in, one service call, safe to run twice."""

from celery import shared_task


@shared_task(acks_late=True)
def duplicate_index_run(job_id: int) -> None:
    """Build a project's near-duplicate index (annotation.duplicates.index)."""
    from annotation.duplicates.index import duplicate_index_run as run

    run(job_id=job_id)
