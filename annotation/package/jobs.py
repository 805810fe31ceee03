"""A replication package uploaded in the browser (or the API), imported in the background: the zip
is saved, a PackageImport row is queued and its task sent after commit (annotation.jobs, as for
label files); the worker imports it all or nothing (annotation.package.imports) as the person
who queued it, and writes the report by file and line. A rerun after a killed worker starts
again: the import was one transaction, so it is either all there (the rerun is refused as the
project is no longer empty, and the report of the first run stands) or not at all."""

from __future__ import annotations

import logging
import uuid
from pathlib import Path

from django.conf import settings
from django.utils.translation import gettext as _

from annotation.figures.tallies import figures_rebuild_queue
from annotation.gate import OPERATOR, Write, gate
from annotation.jobs import (
    Queued,
    heartbeat_kept,
    in_job_language,
    job_claim,
    job_fail,
    job_finish,
    job_queue,
    job_waiting_step,
)
from annotation.models import JobStatus, PackageImport, Project
from annotation.package.imports import PackageFailed, package_import
from annotation.package.reading import package_read
from concord.errors import ConcordError

logger = logging.getLogger(__name__)

MAX_UPLOAD_BYTES = 100 * 1024 * 1024  # zipped; the study's package is about 1 MB zipped


def package_import_dir() -> Path:
    return Path(settings.VAR_DIR) / "package-imports"


def package_import_queue(
    *, project: Project, user, name: str, data: bytes, enqueue: bool = True
) -> Queued[PackageImport]:
    """Save the upload and queue its import; the gate is asked now and again when it runs."""
    gate(user or OPERATOR, project, Write.PACKAGE_IMPORT)
    if not data:
        raise ConcordError(_("Choose a replication package (a .zip file)."))
    if len(data) > MAX_UPLOAD_BYTES:
        raise ConcordError(
            _("%(name)s is larger than %(mb)d MB.")
            % {"name": name, "mb": MAX_UPLOAD_BYTES // (1024 * 1024)}
        )
    stored = f"{uuid.uuid4().hex}.zip"
    package_import_dir().mkdir(parents=True, exist_ok=True)
    (package_import_dir() / stored).write_bytes(data)
    from annotation.package.tasks import package_import_run as run_task

    fields = {"project": project, "name": Path(name).name[:200] or "package.zip", "file": stored}
    return job_queue(PackageImport, run_task if enqueue else None, user=user, **fields)


@in_job_language(PackageImport)
@heartbeat_kept(PackageImport)
def package_import_run(*, job_id: int) -> PackageImport | None:
    """Import the job's package; a done or failed job, or one another worker has, is left."""
    claimed = job_claim(PackageImport, job_id, report={})
    job = PackageImport.objects.select_related("project", "requested_by").filter(pk=job_id).first()
    if not claimed or job is None:
        return job
    path = package_import_dir() / job.file
    try:
        contents = package_read(path)
        report = package_import(
            project=job.project, actor=job.requested_by or OPERATOR, contents=contents
        )
    except PackageFailed as exc:
        errors = [_problem(e) for e in exc.errors]
        job_fail(PackageImport, job_id, exc.message.split("\n", 1)[0], report={"errors": errors})
    except ConcordError as exc:
        job_fail(PackageImport, job_id, exc.message, report={"errors": [_problem(exc)]})
    except OSError as exc:
        message = _("The uploaded package could not be read (%(why)s); upload it again.") % {
            "why": exc.strerror or exc
        }
        job_fail(PackageImport, job_id, message)
    except Exception:
        logger.exception("package import %s failed", job_id)
        job_fail(PackageImport, job_id, _("The import stopped on an unexpected error."))
    else:
        job_finish(PackageImport, job_id, report=report.as_json())
        figures_rebuild_queue(job.project)
    path.unlink(missing_ok=True)
    job.refresh_from_db()
    return job


def _problem(exc: ConcordError) -> dict:
    where = exc.where
    return {
        "file": where.path if where else None,
        "line": where.line if where else None,
        "column": where.column if where else None,
        "message": exc.message,
    }


def package_import_progress(job: PackageImport) -> dict:
    """What the job's page shows (the API returns the same)."""
    if job.status == JobStatus.QUEUED:
        return {"fraction": 0.0, "step": job_waiting_step(job)}
    if job.status == JobStatus.RUNNING:
        return {"fraction": 0.5, "step": _("Importing: checking and writing every file.")}
    if job.status == JobStatus.FAILED:
        return {"fraction": 0.0, "step": _("Failed: %(why)s") % {"why": job.error}}
    files = len(job.report.get("files", []))
    return {"fraction": 1.0, "step": _("Done: %(n)d file(s) imported.") % {"n": files}}
