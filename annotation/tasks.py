"""Celery tasks of the annotation app (Celery's autodiscovery loads this module): each feature's
tasks, and the sweep that sends again the background jobs nobody is working on."""

from celery import shared_task
from celery.signals import worker_ready
from django.conf import settings

from annotation.duplicates.tasks import duplicate_index_run
from annotation.figures.tasks import figures_rebuild
from annotation.interviews.tasks import interview_import_run
from annotation.package.tasks import package_import_run
from annotation.projects.tasks import item_import_run, label_import_run
from annotation.reporting.tasks import export_files_expire, export_job_run
from concord.tasks import send, send_each

__all__ = [
    "duplicate_index_run",
    "export_files_expire",
    "export_job_run",
    "figures_compact_crowded",
    "figures_rebuild",
    "interview_import_run",
    "item_import_run",
    "jobs_resume_stale",
    "label_import_run",
    "package_import_run",
]


@shared_task
def jobs_resume_stale() -> dict[str, list[int]]:
    """Send again the jobs nobody is working on: exports, item imports and label-file imports
    (beat runs this; so does each worker on start)."""
    from annotation.jobs import jobs_stale
    from annotation.models import (
        DuplicateIndex,
        ExportJob,
        ItemImport,
        LabelImportJob,
        PackageImport,
    )
    from taxonomy.interviews.models import InterviewImportJob

    return {
        "exports": send_each(export_job_run, jobs_stale(ExportJob)),
        "item_imports": send_each(item_import_run, jobs_stale(ItemImport)),
        "label_imports": send_each(label_import_run, jobs_stale(LabelImportJob)),
        "interview_imports": send_each(interview_import_run, jobs_stale(InterviewImportJob)),
        "package_imports": send_each(package_import_run, jobs_stale(PackageImport)),
        "duplicate_indexes": send_each(duplicate_index_run, jobs_stale(DuplicateIndex)),
    }


@worker_ready.connect
def _resume_on_start(sender=None, **kwargs) -> None:
    if not settings.CELERY_TASK_ALWAYS_EAGER:
        send(jobs_resume_stale)


@shared_task
def figures_compact_crowded() -> list[int]:
    """Sum the agreement tallies' rows of the projects that gathered many (beat runs this)."""
    from annotation.figures.tallies import figures_compact

    return figures_compact()
