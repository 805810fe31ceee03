"""Exports written in the background: start a job, run it (the Celery task calls this), report
its progress, find its file.

A job's file is written under a temporary name and renamed when complete (exports.export_to_file),
and the job turns `done` only after that: a killed worker or a failure never leaves a file a
user could download half-written. The worker beats a heartbeat as it writes; a job whose heartbeat
stopped (its worker was killed) or that was never taken (Redis was down when it was queued) is sent
again by the stale-job sweep, and the rerun claims it and rewrites the file from the start.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from datetime import timedelta
from pathlib import Path

from django.conf import settings
from django.utils import timezone
from django.utils.formats import number_format
from django.utils.translation import gettext as _

from annotation.archive.writing import archive_write
from annotation.gate import OPERATOR, Write, gate
from annotation.jobs import (
    Queued,
    heartbeat_kept,
    in_job_language,
    job_beat,
    job_claim,
    job_fail,
    job_finish,
    job_queue,
    job_waiting_step,
    jobs_stale,
)
from annotation.models import ExportFormat, ExportJob, ExportStatus, Project
from annotation.reporting.exports import (
    ZIP_FORMATS,
    ExportOptions,
    export_count,
    export_options,
    export_to_file,
)
from annotation.reporting.package import package_write
from concord.errors import ConcordError

logger = logging.getLogger(__name__)


def export_dir() -> Path:
    return Path(settings.VAR_DIR) / "exports"


def export_job_start(
    *, project: Project, user, options: ExportOptions, enqueue: bool = True
) -> ExportJob:
    """Queue an export of `project`; the task is sent after this transaction commits
    (export_job_queue also tells whether the broker took it)."""
    return export_job_queue(project=project, user=user, options=options, enqueue=enqueue).job


def export_job_queue(
    *, project: Project, user, options: ExportOptions, enqueue: bool = True
) -> Queued[ExportJob]:
    """export_job_start, returning the job with whether its task was sent."""
    from annotation.reporting.tasks import export_job_run as run_task

    gate(user or OPERATOR, project, Write.EXPORT)
    return job_queue(
        ExportJob,
        run_task if enqueue else None,
        user=user,
        project=project,
        format=options.format,
        options=options.as_json(),
        rows_total=export_count(project, options),
    )


@in_job_language(ExportJob)
@heartbeat_kept(ExportJob)
def export_job_run(*, job_id: int) -> ExportJob | None:
    """Write the job's file and mark it done, or failed with the reason. A job already done or
    failed is left alone, and so is one another worker is writing (a duplicate delivery); a
    queued one, or a running one whose heartbeat stopped (its worker died), is (re)started."""
    claimed = job_claim(ExportJob, job_id, rows_written=0)
    job = ExportJob.objects.select_related("project__taxonomy").filter(pk=job_id).first()
    if not claimed or job is None:
        return job
    try:
        options = export_options(job.project, **{**job.options, "format": job.format})
        name = export_file_name(job, options)
        _remove_leftovers(name)
        write = _WRITERS.get(ExportFormat(options.format), export_to_file)
        rows = write(
            job.project,
            options,
            export_dir() / name,
            progress=lambda n: job_beat(ExportJob, job_id, rows_written=n),
        )
    except ConcordError as exc:  # e.g. a filter's type retired from the taxonomy since
        return _fail(job, exc.message)
    except OSError as exc:
        logger.exception("export %s could not write its file", job_id)
        message = _("Could not write the file: %(reason)s.") % {"reason": exc.strerror or exc}
        return _fail(job, message)
    except Exception:
        logger.exception("export %s failed", job_id)
        message = _("The export stopped on an unexpected error; the worker log has details.")
        return _fail(job, message)
    job_finish(ExportJob, job_id, rows_written=rows, file=name)
    job.refresh_from_db()
    return job


def _archive_write(project: Project, options: ExportOptions, path: Path, **progress) -> int:
    return archive_write(project, path, **progress)  # the whole project: no options


_WRITERS: dict[str, Callable[..., int]] = {
    ExportFormat.PACKAGE: package_write,
    ExportFormat.ARCHIVE: _archive_write,
}


def export_jobs_stale() -> list[int]:
    """Export jobs nobody is working on, for the sweep (annotation.jobs.jobs_stale)."""
    return jobs_stale(ExportJob)


def export_files_expire() -> int:
    """Delete the files of exports finished more than EXPORT_KEEP_DAYS ago (the job stays, with
    its options and counts, and says the file is gone); returns how many files went."""
    limit = timezone.now() - timedelta(days=settings.EXPORT_KEEP_DAYS)
    old = ExportJob.objects.filter(status=ExportStatus.DONE, finished_at__lt=limit).exclude(file="")
    files = dict(old.values_list("pk", "file"))
    for name in files.values():
        (export_dir() / name).unlink(missing_ok=True)
    return ExportJob.objects.filter(pk__in=files).update(file="")


def _remove_leftovers(name: str) -> None:
    """Temporary files of an earlier attempt at this job whose worker was killed."""
    folder = export_dir()
    if folder.is_dir():
        for leftover in folder.glob(f".{name}.*.part"):
            leftover.unlink(missing_ok=True)


def _fail(job: ExportJob, message: str) -> ExportJob:
    job_fail(ExportJob, job.pk, message, file="")
    job.refresh_from_db()
    return job


def export_file_name(job: ExportJob, options: ExportOptions) -> str:
    """The file's name on disk and in the download: project, format (and level), date, job."""
    suffix = ".zip" if options.format in ZIP_FORMATS else ".csv"
    return f"{job.project.slug}-{options.file_name_part}-{job.created_at:%Y%m%d}-{job.pk}{suffix}"


def export_content_type(job: ExportJob) -> str:
    """The download's type: a zip for the replication package and the archive, else CSV."""
    if job.format in ZIP_FORMATS:
        return "application/zip"
    return "text/csv; charset=utf-8"


def export_job_file(job: ExportJob) -> Path | None:
    """The finished file of a done job, if it is still there."""
    if job.status != ExportStatus.DONE or not job.file:
        return None
    path = export_dir() / job.file
    return path if path.is_file() else None


def export_job_progress(job: ExportJob) -> dict:
    """What the progress page shows, as plain values (the API returns the same)."""
    total = job.rows_total
    if job.status == ExportStatus.DONE and not job.file:
        step = _(
            "Done, but the file was deleted after %(days)d days: start the export again for a "
            "fresh one."
        )
        return {"fraction": 1.0, "step": step % {"days": settings.EXPORT_KEEP_DAYS}}
    rows = {"rows": _count(job.rows_written), "total": _count(total or 0)}
    if job.status == ExportStatus.DONE:
        return {"fraction": 1.0, "step": _("Done: %(rows)s rows written.") % rows}
    if job.status == ExportStatus.FAILED:
        return {"fraction": 0.0, "step": _("Failed: %(error)s") % {"error": job.error}}
    if job.status == ExportStatus.QUEUED:
        return {"fraction": 0.0, "step": job_waiting_step(job)}
    fraction = min(job.rows_written / total, 0.99) if total else 0.0
    if total is None:
        return {"fraction": fraction, "step": _("Writing: %(rows)s rows.") % rows}
    return {"fraction": fraction, "step": _("Writing: %(rows)s of about %(total)s rows.") % rows}


def _count(n: int) -> str:
    """A count with thousands separators (1,234), as the rest of the page prints them."""
    return number_format(n, force_grouping=True)
