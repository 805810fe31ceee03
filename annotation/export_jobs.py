"""Exports written in the background: start a job, run it (the Celery task calls this), report
its progress, find its file.

A job's file is written under a temporary name and renamed when complete (exports.export_to_file),
and the job turns `done` only after that: a killed worker or a failure never leaves a file a
user could download half-written. The task is sent with acks_late, so a killed worker's job comes
back; the rerun claims the job again and rewrites the file from the start.
"""

from __future__ import annotations

import logging
from pathlib import Path

from django.conf import settings
from django.db import transaction
from django.utils import timezone

from annotation.exports import ExportOptions, export_count, export_options, export_to_file
from annotation.models import ExportJob, ExportStatus, Project
from concord.errors import ConcordError

logger = logging.getLogger(__name__)


def export_dir() -> Path:
    return Path(settings.VAR_DIR) / "exports"


def export_job_start(
    *, project: Project, user, options: ExportOptions, enqueue: bool = True
) -> ExportJob:
    """Queue an export of `project`; the task starts after this transaction commits."""
    with transaction.atomic():
        job = ExportJob.objects.create(
            project=project,
            requested_by=user if user is not None and user.is_authenticated else None,
            format=options.format,
            options=options.as_json(),
            rows_total=export_count(project, options),
        )
        if enqueue:
            from annotation.tasks import export_job_run as export_job_run_task

            transaction.on_commit(lambda: export_job_run_task.delay(job.pk))
    return job


def export_job_run(*, job_id: int) -> ExportJob | None:
    """Write the job's file and mark it done, or failed with the reason. A job already done or
    failed is left alone; a queued or running one (its worker died) is (re)started."""
    claimed = ExportJob.objects.filter(
        pk=job_id, status__in=(ExportStatus.QUEUED, ExportStatus.RUNNING)
    ).update(status=ExportStatus.RUNNING, started_at=timezone.now(), rows_written=0, error="")
    job = ExportJob.objects.select_related("project__taxonomy").filter(pk=job_id).first()
    if not claimed or job is None:
        return job
    try:
        options = export_options(job.project, **{**job.options, "format": job.format})
        name = export_file_name(job, options)
        _remove_leftovers(name)
        rows = export_to_file(
            job.project,
            options,
            export_dir() / name,
            progress=lambda n: ExportJob.objects.filter(pk=job_id).update(rows_written=n),
        )
    except ConcordError as exc:  # e.g. a filter's type retired from the taxonomy since
        return _fail(job, exc.message)
    except OSError as exc:
        logger.exception("export %s could not write its file", job_id)
        return _fail(job, f"Could not write the file: {exc.strerror or exc}.")
    except Exception:
        logger.exception("export %s failed", job_id)
        return _fail(job, "The export stopped on an unexpected error; the worker log has details.")
    ExportJob.objects.filter(pk=job_id).update(
        status=ExportStatus.DONE, rows_written=rows, file=name, finished_at=timezone.now()
    )
    job.refresh_from_db()
    return job


def _remove_leftovers(name: str) -> None:
    """Temporary files of an earlier attempt at this job whose worker was killed."""
    folder = export_dir()
    if folder.is_dir():
        for leftover in folder.glob(f".{name}.*.part"):
            leftover.unlink(missing_ok=True)


def _fail(job: ExportJob, message: str) -> ExportJob:
    ExportJob.objects.filter(pk=job.pk).update(
        status=ExportStatus.FAILED, error=message, file="", finished_at=timezone.now()
    )
    job.refresh_from_db()
    return job


def export_file_name(job: ExportJob, options: ExportOptions) -> str:
    """The file's name on disk and in the download: project, format (and level), date, job."""
    return f"{job.project.slug}-{options.file_name_part}-{job.created_at:%Y%m%d}-{job.pk}.csv"


def export_job_file(job: ExportJob) -> Path | None:
    """The finished file of a done job, if it is still there."""
    if job.status != ExportStatus.DONE or not job.file:
        return None
    path = export_dir() / job.file
    return path if path.is_file() else None


def export_job_progress(job: ExportJob) -> dict:
    """What the progress page shows, as plain values (the API returns the same)."""
    total = job.rows_total
    if job.status == ExportStatus.DONE:
        return {"fraction": 1.0, "step": f"Done: {job.rows_written:,} rows written."}
    if job.status == ExportStatus.FAILED:
        return {"fraction": 0.0, "step": f"Failed: {job.error}"}
    if job.status == ExportStatus.QUEUED:
        return {"fraction": 0.0, "step": "Queued: waiting for a worker."}
    fraction = min(job.rows_written / total, 0.99) if total else 0.0
    about = f" of about {total:,}" if total is not None else ""
    return {"fraction": fraction, "step": f"Writing: {job.rows_written:,}{about} rows."}
