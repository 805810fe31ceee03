"""Celery tasks of the annotation app: ids in, one service call, safe to run twice."""

from celery import shared_task


@shared_task(acks_late=True)
def export_job_run(job_id: int) -> None:
    """Write an export's file. A redelivered task (its worker was killed) starts the file again;
    a finished job is left as it is."""
    from annotation.export_jobs import export_job_run as run

    run(job_id=job_id)
