"""Celery tasks of the annotation app: ids in, one service call, safe to run twice."""

from celery import shared_task
from celery.signals import worker_ready
from django.conf import settings

from concord.tasks import send, send_each


@shared_task(acks_late=True)
def export_job_run(job_id: int) -> None:
    """Write an export's file. A redelivered task (its worker was killed) starts the file again;
    a finished job is left as it is."""
    from annotation.reporting.export_jobs import export_job_run as run

    run(job_id=job_id)


@shared_task
def export_jobs_resume_stale() -> list[int]:
    """Send again exports nobody is working on (beat runs this; so does each worker on start)."""
    from annotation.reporting.export_jobs import export_jobs_stale

    return send_each(export_job_run, export_jobs_stale())


@shared_task
def export_files_expire() -> int:
    """Delete export files past EXPORT_KEEP_DAYS (beat runs this daily)."""
    from annotation.reporting.export_jobs import export_files_expire as expire

    return expire()


@worker_ready.connect
def _resume_on_start(sender=None, **kwargs) -> None:
    if not settings.CELERY_TASK_ALWAYS_EAGER:
        send(export_jobs_resume_stale)
