"""Celery tasks of the interviews feature: ids in, one service call, safe to run twice.
annotation.tasks sweeps their stale jobs."""

from celery import shared_task


@shared_task(name="annotation.tasks.interview_import_run", acks_late=True)
def interview_import_run(job_id: int) -> None:
    """Import an upload's interview files; a redelivered task imports again, which changes
    nothing already in."""
    from annotation.interviews.jobs import interview_import_run as run

    run(job_id=job_id)
