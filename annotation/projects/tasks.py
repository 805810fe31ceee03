"""Celery tasks of project setup (label-file imports): ids in, one service call, safe to run
twice. Their own module, so that annotation.tasks (which reporting's export jobs send) does not
reach the projects package."""

from celery import shared_task
from celery.signals import worker_ready
from django.conf import settings

from concord.tasks import send, send_each


@shared_task(acks_late=True)
def label_import_run(job_id: int) -> None:
    """Import an upload's study label files; a redelivered task starts again from the first
    file, which changes nothing for files already in."""
    from annotation.projects.label_imports import label_import_run as run

    run(job_id=job_id)


@shared_task
def label_imports_resume_stale() -> list[int]:
    """Send again label imports nobody is working on (beat; each worker on start)."""
    from annotation.projects.label_imports import label_imports_stale

    return send_each(label_import_run, label_imports_stale())


@worker_ready.connect
def _resume_on_start(sender=None, **kwargs) -> None:
    if not settings.CELERY_TASK_ALWAYS_EAGER:
        send(label_imports_resume_stale)
