"""Interview files uploaded in the browser (or the API), imported in the background: the files
are saved, an InterviewImportJob row is queued and its task sent after commit; the worker runs
the same import as `manage.py import_interviews` (all-or-nothing, idempotent) and writes the
report on the row. Claim, heartbeat and the stale sweep are annotation.jobs', as for every job;
a rerun after a killed worker imports again, which changes nothing already in.
"""

from __future__ import annotations

import logging
import shutil
import uuid
from pathlib import Path

from django.conf import settings
from django.utils.translation import gettext as _

from annotation.gate import OPERATOR, Write, gate
from annotation.interviews.services import InterviewFile, interviews_import
from annotation.jobs import (
    Queued,
    heartbeat_kept,
    in_job_language,
    job_claim,
    job_fail,
    job_finish,
    job_queue,
    job_waiting_step,
    jobs_stale,
)
from annotation.models import Project
from annotation.projects.importers import ImportFailed
from concord.errors import ConcordError
from concord.job_rows import JobStatus
from taxonomy.interviews.models import InterviewImportJob

logger = logging.getLogger(__name__)

MAX_FILE_BYTES = 5 * 1024 * 1024  # the study's files are 4-11 kB
PARTS = ("codebook", "background", "guideline")
NAME_MAX = 200


def interview_import_dir() -> Path:
    return Path(settings.VAR_DIR) / "interview-imports"


def interview_import_queue(
    *, project: Project, user, files: dict[str, InterviewFile], enqueue: bool = True
) -> Queued[InterviewImportJob]:
    """Save the files (`files`: part -> file; the codebook is required) and queue the job."""
    gate(user or OPERATOR, project, Write.INTERVIEWS)
    if "codebook" not in files:
        raise ConcordError(_("Choose the codebook (CSV)."))
    for upload in files.values():
        if len(upload.data) > MAX_FILE_BYTES:
            raise ConcordError(
                _("%(name)s: %(kb)d kB; the limit is %(mb)d MB.")
                % {
                    "name": upload.name,
                    "kb": len(upload.data) // 1024,
                    "mb": MAX_FILE_BYTES // (1024 * 1024),
                }
            )
    folder = interview_import_dir() / uuid.uuid4().hex
    folder.mkdir(parents=True)
    entries = []
    for part in PARTS:
        if part in files:
            stored = folder / part
            stored.write_bytes(files[part].data)
            name = Path(files[part].name).name[:NAME_MAX] or part
            entries.append(
                {"part": part, "name": name, "stored": str(stored.relative_to(folder.parent))}
            )
    from annotation.interviews.tasks import interview_import_run as run_task

    task = run_task if enqueue else None
    return job_queue(InterviewImportJob, task, user=user, project=project, files=entries)


@in_job_language(InterviewImportJob)
@heartbeat_kept(InterviewImportJob)
def interview_import_run(*, job_id: int) -> InterviewImportJob | None:
    """Import the job's files and write the report. A done or failed job, or one another
    worker has, is left alone."""
    claimed = job_claim(InterviewImportJob, job_id, report={})
    job = (
        InterviewImportJob.objects.select_related("project__taxonomy", "requested_by")
        .filter(pk=job_id)
        .first()
    )
    if not claimed or job is None:
        return job
    try:
        files = {
            e["part"]: InterviewFile(e["name"], (interview_import_dir() / e["stored"]).read_bytes())
            for e in job.files
        }
        report = interviews_import(
            project=job.project,
            actor=job.requested_by or OPERATOR,
            codebook=files["codebook"],
            background=files.get("background"),
            guideline=files.get("guideline"),
        )
    except ImportFailed as exc:
        errors = [_error(e) for e in exc.errors]
        job_fail(InterviewImportJob, job_id, _refused(len(errors)), report={"errors": errors})
    except ConcordError as exc:
        job_fail(InterviewImportJob, job_id, exc.message, report={"errors": [_error(exc)]})
    except OSError as exc:
        message = _("An uploaded file could not be read (%(why)s); upload it again.") % {
            "why": exc.strerror or exc
        }
        job_fail(InterviewImportJob, job_id, message)
    except Exception:
        logger.exception("interview import %s failed", job_id)
        message = _("The import stopped on an unexpected error; the worker log has details.")
        job_fail(InterviewImportJob, job_id, message)
    else:
        job_finish(InterviewImportJob, job_id, report=report.as_dict())
        shutil.rmtree(interview_import_dir() / Path(job.files[0]["stored"]).parent, True)
    job.refresh_from_db()
    return job


def _refused(n: int) -> str:
    return _("%(n)d problem(s) found; nothing was imported.") % {"n": n}


def _error(exc: ConcordError) -> dict:
    where = exc.where
    return {
        "path": where.path if where else "",
        "line": where.line if where else None,
        "column": where.column if where else None,
        "message": exc.message,
    }


def interview_imports_stale() -> list[int]:
    return jobs_stale(InterviewImportJob)


def interview_import_progress(job: InterviewImportJob) -> dict:
    """What the job's page shows (the API returns the same)."""
    if job.status == JobStatus.QUEUED:
        return {"fraction": 0.0, "step": job_waiting_step(job)}
    if job.status == JobStatus.RUNNING:
        return {"fraction": 0.5, "step": _("Importing.")}
    if job.status == JobStatus.FAILED:
        return {"fraction": 1.0, "step": _("Refused: %(why)s") % {"why": job.error}}
    report = job.report or {}
    counts = {k: report.get(k, 0) for k in ("participants", "users", "developers", "quotes")}
    return {
        "fraction": 1.0,
        "step": _(
            "Done: %(participants)d participants (%(users)d users, %(developers)d developers), "
            "%(quotes)d quotes, %(links)d links (%(unresolved)d unresolved)."
        )
        % {
            **counts,
            "links": report.get("links", 0),
            "unresolved": len(report.get("unresolved", [])),
        },
    }
