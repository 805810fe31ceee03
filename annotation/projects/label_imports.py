"""Study label files uploaded in the browser (or the API), imported in the background: the files
are saved, a LabelImportJob row is queued and its task sent after commit; the worker imports one
file after another with the same importer as `manage.py import_labels` (each file all-or-nothing),
beating a heartbeat and writing the per-file report as it goes (claim, heartbeat and the stale
sweep are annotation.jobs', as for exports). A rerun (a killed worker) starts again from the
first file, which changes nothing for the files already in: importing a file twice is a no-op.
"""

from __future__ import annotations

import logging
import shutil
import uuid
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

from django.conf import settings
from django.core.files.uploadedfile import UploadedFile
from django.utils.translation import gettext as _

from annotation.figures.tallies import figures_rebuild_queue
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
from annotation.models import JobStatus, LabelImportJob, Project
from annotation.projects.importers import ImportFailed, study_labels_import_bytes
from concord.errors import ConcordError

logger = logging.getLogger(__name__)

MAX_FILES = 20
MAX_FILE_BYTES = 20 * 1024 * 1024  # the study's largest tracker is about 3 MB
NAME_MAX = 200


def label_import_dir() -> Path:
    return Path(settings.VAR_DIR) / "label-imports"


@dataclass(frozen=True)
class Upload:
    """A file's name and content as bytes; a label file may also come as Django's UploadedFile
    (a form's or the API's), which has the same name, size and chunks()."""

    name: str
    data: bytes

    @property
    def size(self) -> int:
        return len(self.data)

    def chunks(self) -> Iterator[bytes]:
        yield self.data


# An uploaded file is saved a chunk at a time, never read whole: 20 files of 20 MB in one request
# read whole held 400 MB in the web process.
LabelFile = Upload | UploadedFile


def uploads_check(uploads: Sequence[LabelFile]) -> None:
    """Refuse what no worker should be sent: no file, too many, too big (named)."""
    if not uploads:
        raise ConcordError(_("Choose at least one label file."))
    if len(uploads) > MAX_FILES:
        message = _("%(files)s files; upload at most %(most)s at once.")
        raise ConcordError(message % {"files": len(uploads), "most": MAX_FILES})
    for upload in uploads:
        if (upload.size or 0) > MAX_FILE_BYTES:
            message = _("%(name)s: %(size)s kB; the limit is %(limit)s MB.")
            size = {
                "name": upload.name,
                "size": (upload.size or 0) // 1024,
                "limit": MAX_FILE_BYTES // (1024 * 1024),
            }
            raise ConcordError(message % size)


def label_import_queue(
    *,
    project: Project,
    user,
    uploads: Sequence[LabelFile],
    refuse_repeats: bool,
    enqueue: bool = True,
) -> Queued[LabelImportJob]:
    """Save the files and queue the job; its task is sent after the transaction commits. An
    archived project is read only: nothing is imported into it."""
    gate(user or OPERATOR, project, Write.LABELS_IMPORT)
    uploads_check(uploads)
    folder = label_import_dir() / uuid.uuid4().hex
    folder.mkdir(parents=True)
    files = []
    for n, upload in enumerate(uploads, start=1):
        stored = folder / f"{n}.csv"
        with stored.open("wb") as file:
            for chunk in upload.chunks():
                file.write(chunk)
        name = Path(upload.name or "").name[:NAME_MAX] or _("file %(n)s") % {"n": n}
        files.append({"name": name, "stored": str(stored.relative_to(label_import_dir()))})
    from annotation.projects.tasks import label_import_run as run_task

    task = run_task if enqueue else None
    fields = {"project": project, "refuse_repeats": refuse_repeats, "files": files}
    return job_queue(LabelImportJob, task, user=user, **fields)


@in_job_language(LabelImportJob)
@heartbeat_kept(LabelImportJob)
def label_import_run(*, job_id: int) -> LabelImportJob | None:
    """Import the job's files in order, writing each file's report as it ends. A done or failed
    job, or one another worker has, is left alone."""
    claimed = job_claim(LabelImportJob, job_id, files_done=0, report=[])
    job = (
        LabelImportJob.objects.select_related("project__taxonomy", "requested_by")
        .filter(pk=job_id)
        .first()
    )
    if not claimed or job is None:
        return job
    report: list[dict] = []
    try:
        for n, entry in enumerate(job.files, start=1):
            report.append(_import_file(job, entry))
            job_beat(LabelImportJob, job_id, files_done=n, report=report)
    except Exception:
        logger.exception("label import %s failed", job_id)
        error = _("The import stopped on an unexpected error; the worker log has details.")
        job_fail(LabelImportJob, job_id, error, report=report)
    else:
        job_finish(LabelImportJob, job_id, report=report)
        shutil.rmtree(label_import_dir() / Path(job.files[0]["stored"]).parent, ignore_errors=True)
        figures_rebuild_queue(job.project)
    job.refresh_from_db()
    return job


def _import_file(job: LabelImportJob, entry: dict) -> dict:
    """One file's line of the report: its counts and skipped repeats, or every error by line."""
    name = entry["name"]
    try:
        data = (label_import_dir() / entry["stored"]).read_bytes()
        report = study_labels_import_bytes(
            project=job.project,
            actor=job.requested_by or OPERATOR,
            data=data,
            name=name,
            refuse_repeats=job.refuse_repeats,
        )
    except ImportFailed as exc:
        return {"name": name, "ok": False, "errors": [_error(e) for e in exc.errors]}
    except ConcordError as exc:
        return {"name": name, "ok": False, "errors": [_error(exc)]}
    except OSError as exc:
        message = _("the uploaded file could not be read (%(reason)s); upload it again") % {
            "reason": exc.strerror or exc
        }
        return {
            "name": name,
            "ok": False,
            "errors": [{"line": None, "column": None, "message": message}],
        }
    return {
        "name": name,
        "ok": True,
        "rows": report.rows,
        "items_created": report.items_created,
        "annotations_created": report.annotations_created,
        "resolutions_created": report.resolutions_created,
        "repeats": [
            {"line": r.line, "first_line": r.first_line, "labels_differ": r.labels_differ}
            for r in report.repeats
        ],
    }


def _error(exc: ConcordError) -> dict:
    where = exc.where
    return {
        "line": where.line if where else None,
        "column": where.column if where else None,
        "message": exc.message,
    }


def label_imports_stale() -> list[int]:
    return jobs_stale(LabelImportJob)


def label_import_progress(job: LabelImportJob) -> dict:
    """What the progress page shows (the API returns the same)."""
    if job.status == JobStatus.QUEUED:
        return {"fraction": 0.0, "step": job_waiting_step(job)}
    total = len(job.files)
    failed = sum(1 for entry in job.report if not entry["ok"])
    if job.status == JobStatus.FAILED:
        return {
            "fraction": job.files_done / total if total else 0.0,
            "step": _("Failed: %(error)s") % {"error": job.error},
        }
    counts = {"done": total - failed, "total": total, "failed": failed}
    if job.status == JobStatus.DONE and failed:
        step = _("Done: %(done)d of %(total)d file(s) imported, %(failed)d refused (see below).")
        return {"fraction": 1.0, "step": step % counts}
    if job.status == JobStatus.DONE:
        return {
            "fraction": 1.0,
            "step": _("Done: %(done)d of %(total)d file(s) imported.") % counts,
        }
    return {
        "fraction": min(job.files_done / total, 0.99) if total else 0.0,
        "step": _("Importing: %(done)d of %(total)d file(s) done.")
        % {"done": job.files_done, "total": total},
    }
