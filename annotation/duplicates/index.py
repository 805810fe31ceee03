"""The near-duplicate index of a project: built by a background job (DuplicateIndex, claimed and
beating like every job: annotation.jobs) after items arrive, and rebuilt whole each time.

A rebuild reads every item's text once, learns each tracker's boilerplate anew from all of it and
rewrites the project's DuplicatePair rows; at the study's scale it takes seconds
(tests/bench/duplicates.py), which keeps one code path instead of an incremental one whose
learned boilerplate would drift. Arrivals while a build is queued join that build (one queued
build per project at most). The lead's "not a duplicate" (NotDuplicate) is kept apart, so no
rebuild forgets it.
"""

from __future__ import annotations

import logging

from django.db import transaction
from django.utils.translation import gettext as _

from annotation.duplicates.similarity import DEFAULT_THRESHOLD, Found, similar_pairs
from annotation.duplicates.text import Report
from annotation.gate import OPERATOR, Write, gate, write_refusal
from annotation.jobs import in_job_language, job_beat, job_claim, job_fail, job_finish, job_queue
from annotation.models import DuplicateIndex, DuplicatePair, Item, JobStatus, Project
from ingest.services import insert_rows

logger = logging.getLogger(__name__)


def duplicate_index_queue(*, project: Project, actor=OPERATOR) -> DuplicateIndex:
    """Queue a build of `project`'s index, or return the build already waiting (it will see every
    item there is when it starts)."""
    from annotation.duplicates.tasks import duplicate_index_run as run_task

    gate(actor, project, Write.DUPLICATES)
    waiting = DuplicateIndex.objects.filter(project=project, status=JobStatus.QUEUED).first()
    if waiting is not None:
        return waiting
    user = None if actor is OPERATOR else actor
    return job_queue(
        DuplicateIndex, run_task, user=user, project=project, threshold=DEFAULT_THRESHOLD
    ).job


def duplicate_index_after_items(project: Project) -> None:
    """Items were added to `project` (annotation.projects.services): index them once this
    transaction commits. Part of the items' own write, which the gate already allowed."""
    transaction.on_commit(lambda: duplicate_index_queue(project=project))


def duplicate_index_current(project: Project) -> DuplicateIndex | None:
    """The build whose pairs are the index now (the newest done), if any."""
    done = DuplicateIndex.objects.filter(project=project, status=JobStatus.DONE)
    return done.order_by("-finished_at", "-pk").first()


@in_job_language(DuplicateIndex)
def duplicate_index_run(*, job_id: int) -> DuplicateIndex | None:
    """Build the index: every pair of the project's items at the job's threshold. A job done,
    failed or being built by another worker is left alone; a rerun after a killed worker starts
    over (the pairs are rewritten in one transaction at the end). Builds queued after items
    arrived run as the operator: the items' own write passed the gate."""
    if not job_claim(DuplicateIndex, job_id, items_indexed=0, pairs_found=0):
        return DuplicateIndex.objects.filter(pk=job_id).first()
    job = DuplicateIndex.objects.select_related("project", "requested_by").get(pk=job_id)
    # asked again as whoever queued it: a project archived, or a role lost, since is not written
    refusal = write_refusal(job.requested_by or OPERATOR, job.project, Write.DUPLICATES)
    if refusal is not None:
        job_fail(DuplicateIndex, job_id, refusal.message)
        job.refresh_from_db()
        return job
    try:
        previous = duplicate_index_current(job.project)
        reports = project_reports(job.project)
        job_beat(DuplicateIndex, job_id, items_indexed=len(reports))
        found = similar_pairs(reports, job.threshold)
        last_item_id = max((r.key for r in reports), default=0)
        _store(job.project, found, indexed_before=previous.last_item_id if previous else 0)
    except Exception:
        logger.exception("duplicate index %s failed", job_id)
        message = _("The build stopped on an unexpected error; see the log.")
        job_fail(DuplicateIndex, job_id, message)
    else:
        job_finish(
            DuplicateIndex,
            job_id,
            items_indexed=len(reports),
            last_item_id=last_item_id,
            pairs_found=len(found.pairs),
            boilerplate=boilerplate_json(found),
        )
    job.refresh_from_db()
    return job


def project_reports(project: Project) -> list[Report]:
    """Every item of the project as the index reads it (one query, no model objects)."""
    rows = Item.objects.filter(project=project).values_list(
        "pk", "issue__host", "issue__owner", "issue__repo", "issue__title", "issue__body"
    )
    return [
        Report(key=pk, tracker=f"{host}/{owner}/{repo}", title=title, body=body)
        for pk, host, owner, repo, title, body in rows.iterator(chunk_size=5000)
    ]


def boilerplate_json(found: Found) -> dict[str, dict[str, list[str]]]:
    return {
        tracker: {"lines": sorted(b.lines), "terms": sorted(b.terms)}
        for tracker, b in found.boilerplate.items()
    }


@transaction.atomic
def _store(project: Project, found: Found, *, indexed_before: int) -> None:
    """Replace the project's pairs. A pair whose newer item arrived after the previous build (and
    whose older one was there) repeated an item at intake; a pair flagged so stays flagged."""
    flagged = set(
        DuplicatePair.objects.filter(project=project, at_intake=True).values_list(
            "item_a_id", "item_b_id"
        )
    )
    DuplicatePair.objects.filter(project=project).delete()
    rows = [
        (
            project.pk,
            p.a,
            p.b,
            round(p.similarity, 4),
            # COPY's text form of a boolean (insert_rows takes no bool)
            "t" if (p.a, p.b) in flagged or 0 < p.a <= indexed_before < p.b else "f",
        )
        for p in found.pairs
    ]
    insert_rows(
        DuplicatePair, ("project_id", "item_a_id", "item_b_id", "similarity", "at_intake"), rows
    )
