"""Celery tasks of the exports: ids in, one service call, safe to run twice. Registered under
their first names (annotation.tasks.*), so messages queued before a deploy still find them."""

from celery import shared_task


@shared_task(name="annotation.tasks.export_job_run", acks_late=True)
def export_job_run(job_id: int) -> None:
    """Write an export's file. A redelivered task (its worker was killed) starts the file again;
    a finished job is left as it is."""
    from annotation.reporting.export_jobs import export_job_run as run

    run(job_id=job_id)


@shared_task(name="annotation.tasks.export_files_expire")
def export_files_expire() -> int:
    """Delete export files past EXPORT_KEEP_DAYS (beat runs this daily)."""
    from annotation.reporting.export_jobs import export_files_expire as expire

    return expire()
