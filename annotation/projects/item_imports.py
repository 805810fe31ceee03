"""Items with their text, in bulk: a JSON or JSONL file of issues (ingest.issue_files) added to a
project as a background job (annotation.jobs), as Label Studio's and doccano's imports are.

The file waits on disk (VAR_DIR/item-imports, shared by the web and worker processes, as
exports are) until the job is done; neither process holds it whole (issue 25: a 57 MB file took
a worker to 668 MiB). The worker reads it twice as a stream: first to check all of it, beating
the heartbeat with the number of records checked; a file with any problem fails with every
problem listed (file, line, field) and nothing written. Then a good file is written in one
transaction, ingest.issue_files.CHUNK records at a time: their issues and comments, then their
items through project_items_add, the one way issues become items. A killed worker's job is sent
again by the sweep and starts over; the writes are upserts, so a rerun never duplicates
anything.

Issues are shared between projects, and what one project's volunteers read must not change
under them because another project imported a file: an issue another project holds keeps its
text and comments (its tracker's harvest updates them) and is still added as an item; the
finished job's `problems` names it, as a warning.
"""

from __future__ import annotations

import logging
import uuid
from collections.abc import Collection, Iterable
from functools import partial
from pathlib import Path

from django.conf import settings
from django.db import transaction
from django.utils.translation import gettext as _

from annotation.gate import OPERATOR, Write, WriteRefused, gate
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
)
from annotation.models import Item, ItemImport, JobStatus, Project
from annotation.projects.services import project_items_add
from concord.db import refresh_planner_statistics_as_it_grows
from concord.errors import RowError
from ingest.issue_files import (
    IssueFileRecord,
    issue_file_check,
    issue_file_chunks,
    issue_file_save,
    issue_file_store,
)
from ingest.models import Comment, Issue

logger = logging.getLogger(__name__)

MAX_REPORTED = 20


def item_import_start(
    *, project: Project, user, name: str, blocks: Iterable[bytes], enqueue: bool = True
) -> Queued[ItemImport]:
    """Save the file called `name`, arriving in `blocks` (an upload's chunks), and queue its
    import into `project`; the task is sent after this transaction commits (without `enqueue`,
    the caller runs item_import_run). Bytes that are not UTF-8, or a NUL, are a RowError at
    once, and no job is made."""
    from annotation.projects.tasks import item_import_run as run_task

    gate(user or OPERATOR, project, Write.ITEMS_IMPORT)  # refused now, and by the worker later

    path = item_import_dir() / f"{uuid.uuid4().hex}.json"
    try:
        with path.open("wb") as out:
            issue_file_save(blocks, name, out)
        task = run_task if enqueue else None
        return job_queue(ItemImport, task, user=user, project=project, name=name, file=path.name)
    except BaseException:
        path.unlink(missing_ok=True)
        raise


@in_job_language(ItemImport)
@heartbeat_kept(ItemImport)
def item_import_run(*, job_id: int) -> ItemImport | None:
    """Check the job's file, then write it whole, or fail with every problem. A finished job,
    or one another worker is on, is left alone."""
    claimed = job_claim(ItemImport, job_id, records_total=None, records_checked=0, problems=[])
    job = ItemImport.objects.select_related("project", "requested_by").filter(pk=job_id).first()
    if not claimed or job is None:
        return job
    actor = job.requested_by or OPERATOR
    try:
        # Asked again as the requester: the project may have been archived, or their role
        # lost, since the job was queued. Before anything is written, issues included.
        gate(actor, job.project, Write.ITEMS_IMPORT)
        with _opened(job) as stream:
            total, errors = issue_file_check(
                stream, job.name, lambda n: job_beat(ItemImport, job_id, records_checked=n)
            )
        if errors:
            _fail_with(job, sorted(errors, key=lambda e: e.where.line or 0))
        else:
            _write(job, actor, total)
    except WriteRefused as exc:  # archived, or the requester's role lost, since it was queued
        _fail(job, exc.message)
    except Exception:
        logger.exception("item import %s failed", job_id)
        _fail(job, _("The import stopped on an unexpected error; nothing was added."))
    job.refresh_from_db()
    return job


def item_import_dir() -> Path:
    """Where queued imports' files wait for a worker."""
    folder = Path(settings.VAR_DIR) / "item-imports"
    folder.mkdir(parents=True, exist_ok=True)
    return folder


def item_import_progress(job: ItemImport) -> dict:
    """What the API answers while a client waits: a fraction and a step in words."""
    if job.status == JobStatus.DONE:
        counts = {
            "items": f"{job.items_added:,}",
            "records": f"{job.records_total or 0:,}",
            "created": f"{job.issues_created:,}",
            "kept": f"{len(job.problems):,}",
        }
        if job.problems:
            step = _(
                "Done: %(items)s new items from %(records)s issues (%(created)s issues new to"
                " Concord). %(kept)s kept their text (see problems)."
            )
        else:
            step = _(
                "Done: %(items)s new items from %(records)s issues (%(created)s issues new to"
                " Concord)."
            )
        return {"fraction": 1.0, "step": step % counts}
    if job.status == JobStatus.FAILED:
        return {"fraction": 0.0, "step": _("Failed: %(error)s") % {"error": job.error}}
    if job.status == JobStatus.QUEUED:
        return {"fraction": 0.0, "step": job_waiting_step(job)}
    if job.records_total is not None:
        step = _("Writing %(records)s issues as items.") % {"records": f"{job.records_total:,}"}
        return {"fraction": 0.99, "step": step}
    step = _("Checking: %(records)s issues read.") % {"records": f"{job.records_checked:,}"}
    return {"fraction": 0.0, "step": step}


def _write(job: ItemImport, actor, total: int) -> None:
    """Store the checked file: all of it in one transaction, a chunk of records at a time, so
    what is held is a chunk, not the file."""
    job_beat(ItemImport, job.pk, records_total=total, records_checked=total)
    created, added, kept = 0, 0, []
    keep_text = partial(_held_elsewhere, job.project)
    with transaction.atomic(), _opened(job) as stream:
        for records in issue_file_chunks(stream, job.name):
            stored = issue_file_store(records, keep_text=keep_text)
            created += stored.created
            kept += [_kept(job.name, r) for r in stored.kept]
            added += project_items_add(
                project=job.project,
                actor=actor,
                write=Write.ITEMS_IMPORT,
                issue_ids=stored.issue_ids,
            )
            refresh_planner_statistics_as_it_grows(Issue, Comment, Item)
        job_finish(
            ItemImport, job.pk, issues_created=created, items_added=added, file="", problems=kept
        )
    _remove_file(job)


def _opened(job: ItemImport):
    # utf-8-sig drops a byte-order mark, as utf8_text does; newline="" leaves line ends as sent.
    return (item_import_dir() / job.file).open(encoding="utf-8-sig", newline="")


def _remove_file(job: ItemImport) -> None:
    (item_import_dir() / job.file).unlink(missing_ok=True)


def _fail_with(job: ItemImport, errors: list[RowError]) -> None:
    shown = "; ".join(str(e) for e in errors[:MAX_REPORTED])
    if len(errors) > MAX_REPORTED:
        shown += "; " + _("and %(more)s more") % {"more": len(errors) - MAX_REPORTED}
    message = _("%(count)s problem(s); nothing was imported: %(problems)s")
    _fail(
        job,
        message % {"count": len(errors), "problems": shown},
        problems=[{**e.where.as_dict(), "message": e.message} for e in errors],
    )


def _fail(job: ItemImport, message: str, **result) -> None:
    """A failed job is over (a person sends the file again): its file is not kept. A worker
    killed mid-job is another matter: the job stays running, and the sweep sends it again with
    its file."""
    job_fail(ItemImport, job.pk, message, file="", **result)
    _remove_file(job)


def _held_elsewhere(project: Project, issue_ids: Collection[int]) -> set[int]:
    """The issues another project holds as items: a file imported here may not change their
    text under that project's volunteers."""
    held = Item.objects.filter(issue_id__in=issue_ids).exclude(project=project)
    return set(held.values_list("issue_id", flat=True).distinct())


def _kept(name: str, record: IssueFileRecord) -> dict:
    """A finished job's warning (in `problems`, as the failures are): the record's text differs
    from its issue's, which another project holds, and was not taken."""
    message = _("kept the text of an issue another project holds: %(url)s") % {
        "url": record.ref.url
    }
    return {"path": name, "line": record.line, "column": "url", "message": message}
