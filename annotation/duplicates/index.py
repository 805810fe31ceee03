"""The near-duplicate index of a project: built by a background job (DuplicateIndex, claimed and
beating like every job: annotation.jobs) after items arrive, and rebuilt whole each time.

A rebuild reads every item's text, learns each tracker's boilerplate anew from all of it and
rewrites the project's DuplicatePair rows; at the study's scale it takes seconds
(tests/bench/duplicates.py), which keeps one code path instead of an incremental one whose
learned boilerplate would drift. The text is read from the database a chunk at a time, twice (to
learn, then to compare), and not held: what a build holds is each item's terms as hashes and the
pairs as arrays, within a worker's 300 MB at ten times the study (issue 31, tests.bench.scale).
Arrivals while a build is queued join that build (one queued build per project at most). The
lead's "not a duplicate" (NotDuplicate) is kept apart, so no rebuild forgets it.
"""

from __future__ import annotations

import logging
from collections import Counter
from collections.abc import Iterator
from functools import partial

from django.db import transaction
from django.db.models import Count, Max
from django.utils.translation import gettext as _

from annotation.duplicates.similarity import DEFAULT_THRESHOLD, FoundPairs, similar_pairs_read
from annotation.duplicates.text import Report
from annotation.gate import OPERATOR, Write, gate, write_refusal
from annotation.jobs import (
    heartbeat_kept,
    in_job_language,
    job_beat,
    job_claim,
    job_fail,
    job_finish,
    job_queue,
)
from annotation.models import DuplicateIndex, DuplicatePair, Item, JobStatus, Project
from concord.db import on_commit_once
from ingest.services import insert_rows

logger = logging.getLogger(__name__)

# What a build holds of the database at a time: items read per query, pairs written per insert.
REPORTS_AT_A_TIME = 2000
PAIRS_AT_A_TIME = 20_000


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
    transaction commits, once however many chunks it added (without a broker a build runs as it
    is queued, and would run again for each chunk). Part of the items' own write, which the
    gate already allowed."""
    on_commit_once(("duplicate index", project.pk), lambda: duplicate_index_queue(project=project))


def duplicate_index_current(project: Project) -> DuplicateIndex | None:
    """The build whose pairs are the index now (the newest done), if any."""
    done = DuplicateIndex.objects.filter(project=project, status=JobStatus.DONE)
    return done.order_by("-finished_at", "-pk").first()


@in_job_language(DuplicateIndex)
@heartbeat_kept(DuplicateIndex)
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
        # The items there are now: a pass reads no item that arrived after the one before it.
        last_item_id = job.project.items.aggregate(last=Max("pk"))["last"] or 0
        totals = project_trackers(job.project, last_item_id)
        indexed = sum(totals.values())
        job_beat(DuplicateIndex, job_id, items_indexed=indexed)
        read = partial(project_reports, job.project, last_item_id)
        found = similar_pairs_read(read, totals, job.threshold)
        _store(job.project, found, indexed_before=previous.last_item_id if previous else 0)
    except Exception:
        logger.exception("duplicate index %s failed", job_id)
        message = _("The build stopped on an unexpected error; see the log.")
        job_fail(DuplicateIndex, job_id, message)
    else:
        job_finish(
            DuplicateIndex,
            job_id,
            items_indexed=indexed,
            last_item_id=last_item_id,
            pairs_found=len(found),
            boilerplate=boilerplate_json(found),
        )
    job.refresh_from_db()
    return job


def project_trackers(project: Project, last_item_id: int) -> Counter[str]:
    """How many of the project's items (up to `last_item_id`) each tracker has."""
    items = Item.objects.filter(project=project, pk__lte=last_item_id)
    rows = items.values_list("issue__host", "issue__owner", "issue__repo").annotate(n=Count("pk"))
    return Counter({f"{host}/{owner}/{repo}": n for host, owner, repo, n in rows})


def project_reports(project: Project, last_item_id: int) -> Iterator[Report]:
    """The project's items up to `last_item_id` as the index reads them, in the order of their
    ids, REPORTS_AT_A_TIME per query (no model objects). Chunks by id rather than a server-side
    cursor, which a pooled connection (DATABASE_POOLED, PgBouncer) does not have."""
    after = 0
    while True:
        rows = list(
            Item.objects.filter(project=project, pk__gt=after, pk__lte=last_item_id)
            .order_by("pk")
            .values_list(
                "pk", "issue__host", "issue__owner", "issue__repo", "issue__title", "issue__body"
            )[:REPORTS_AT_A_TIME]
        )
        for pk, host, owner, repo, title, body in rows:
            yield Report(key=pk, tracker=f"{host}/{owner}/{repo}", title=title, body=body)
        if len(rows) < REPORTS_AT_A_TIME:
            return
        after = rows[-1][0]


def boilerplate_json(found: FoundPairs) -> dict[str, dict[str, list[str]]]:
    return {
        tracker: {"lines": sorted(b.lines), "terms": sorted(b.terms)}
        for tracker, b in found.boilerplate.items()
    }


@transaction.atomic
def _store(project: Project, found: FoundPairs, *, indexed_before: int) -> None:
    """Replace the project's pairs, PAIRS_AT_A_TIME rows at a time. A pair whose newer item
    arrived after the previous build (and whose older one was there) repeated an item at intake;
    a pair flagged so stays flagged."""
    flagged = set(
        DuplicatePair.objects.filter(project=project, at_intake=True).values_list(
            "item_a_id", "item_b_id"
        )
    )
    DuplicatePair.objects.filter(project=project).delete()
    for start in range(0, len(found), PAIRS_AT_A_TIME):
        part = slice(start, start + PAIRS_AT_A_TIME)
        pairs = zip(
            found.a[part].tolist(),
            found.b[part].tolist(),
            found.similarity[part].tolist(),
            strict=True,
        )
        rows = [
            (
                project.pk,
                a,
                b,
                round(similarity, 4),
                # COPY's text form of a boolean (insert_rows takes no bool)
                "t" if (a, b) in flagged or 0 < a <= indexed_before < b else "f",
            )
            for a, b, similarity in pairs
        ]
        insert_rows(
            DuplicatePair,
            ("project_id", "item_a_id", "item_b_id", "similarity", "at_intake"),
            rows,
        )
