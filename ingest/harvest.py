"""Harvesting a Source: walk the tracker's issue listing newest first, then its comments in bulk.

The run's cursor is the checkpoint. Each page is fetched outside any transaction, then its
upserts and the advanced cursor commit together under a lock on the run, and only if the cursor
is still where this page started (compare-and-set): a killed worker resumes from the last
committed page, and a duplicate task finds nothing to do. Rate limits never block a worker: the
run records how long to wait and RateLimited propagates to the caller (Celery retries with a
countdown, the command sleeps with a message).
"""

from __future__ import annotations

from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from datetime import UTC, datetime, time, timedelta

from django.conf import settings
from django.db import transaction
from django.utils import timezone

from concord.db import refresh_planner_statistics, relax_commit_durability, upsert
from concord.errors import Conflict
from concord.tasks import send
from ingest.candidates import candidates_mark
from ingest.clients import (
    CommentRecord,
    CursorExpired,
    ForgeError,
    IssueRecord,
    Page,
    RateLimited,
    client_for,
)
from ingest.issue_refs import IssueRef, issue_web_url
from ingest.models import (
    ACTIVE_STATUSES,
    Comment,
    HarvestRun,
    Issue,
    PageValidator,
    RunStatus,
    Source,
)

ISSUES, COMMENTS, DONE = "issues", "comments", "done"
ISSUE_UPDATE_FIELDS = (
    "url",
    "title",
    "body",
    "author",
    "state",
    "labels",
    "created_at",
    "updated_at",
    "closed_at",
    "comment_count",
    "is_pull_request",
    "host_id",
    "fetched_at",
    "fetch_error",
)
COMMENT_UPDATE_FIELDS = ("issue", "author", "body", "created_at", "updated_at")


def source_client(source: Source):
    api_url = {"github": settings.GITHUB_API_URL, "gitee": settings.GITEE_API_URL}[source.host]
    token = (
        source.token
        or {"github": settings.GITHUB_TOKEN, "gitee": settings.GITEE_TOKEN}[source.host]
    )
    return client_for(
        source.host,
        api_url=api_url,
        token=token,
        max_retries=settings.HARVEST_MAX_RETRIES,
        backoff=settings.HARVEST_BACKOFF_SECONDS,
        secondary_wait=settings.HARVEST_SECONDARY_WAIT_SECONDS,
    )


def window(source: Source) -> tuple[datetime, datetime]:
    """[first instant, last instant] of the creation window, in UTC."""
    start = datetime.combine(source.created_from, time.min, tzinfo=UTC)
    end = datetime.combine(source.created_until, time.max, tzinfo=UTC)
    return start, end


@dataclass(frozen=True)
class HarvestQueued:
    """A new run, and whether the broker took its task (False: Redis could not be reached; the
    stale-job sweep sends it later). True while the caller's own transaction is still open: the
    task goes when it commits."""

    run: HarvestRun
    sent: bool


def harvest_start(*, source: Source, user=None, enqueue: bool = True) -> HarvestRun:
    """Create a run for `source`; at most one is active per source (a database constraint).
    harvest_queue also tells whether the broker took its task."""
    return harvest_queue(source=source, user=user, enqueue=enqueue).run


def harvest_queue(*, source: Source, user=None, enqueue: bool = True) -> HarvestQueued:
    """harvest_start, returning the run with whether its task was sent."""
    sent: dict[str, bool] = {}  # filled by the on-commit hook below
    with transaction.atomic():
        Source.objects.select_for_update().get(pk=source.pk)
        active = source.runs.filter(status__in=ACTIVE_STATUSES).first()
        if active is not None:
            raise Conflict(
                f"{source} is already being harvested (run {active.pk}, {active.status})."
            )
        run = HarvestRun.objects.create(
            source=source,
            started_by=user if user and user.is_authenticated else None,
            cursor={"phase": ISSUES, "url": None},
        )
        if enqueue:
            from ingest.tasks import harvest_continue as harvest_continue_task

            transaction.on_commit(lambda: sent.update(ok=send(harvest_continue_task, run.pk)))
    return HarvestQueued(run=run, sent=sent.get("ok", True))


def harvest_cancel(*, run: HarvestRun) -> None:
    """Ask a run to stop; it stops before its next page (a queued or waiting run at once)."""
    HarvestRun.objects.filter(pk=run.pk, status__in=ACTIVE_STATUSES).update(cancel_requested=True)
    HarvestRun.objects.filter(pk=run.pk, status__in=(RunStatus.QUEUED, RunStatus.WAITING)).update(
        status=RunStatus.CANCELLED, finished_at=timezone.now()
    )


def harvest_advance(
    *,
    run_id: int,
    max_pages: int | None = None,
    client=None,
    on_page: Callable[[HarvestRun], None] | None = None,
) -> HarvestRun:
    """Fetch and store pages from the checkpoint until done, failed, cancelled or `max_pages`;
    `on_page` sees the run after each page (the command draws its progress bar with it).

    Raises RateLimited (after recording the wait on the run) when the forge says to wait.
    """
    run = HarvestRun.objects.select_related("source").get(pk=run_id)
    validators = {v.url: v for v in run.source.page_validators.all()}
    pages = 0
    with PageFetcher(client or source_client(run.source)) as fetcher:
        while run.is_active and (max_pages is None or pages < max_pages):
            if run.cancel_requested:
                return _finish(run, RunStatus.CANCELLED)
            _wait_if_exhausted(run)
            try:
                stored = _advance_one_page(run, fetcher, validators)
            except RateLimited as exc:
                _record_wait(run, exc)
                raise
            except ForgeError as exc:
                return _finish(run, RunStatus.FAILED, error=str(exc))
            pages += 1
            if stored is None:  # someone else moved the checkpoint: start from theirs
                stored = HarvestRun.objects.select_related("source").get(pk=run_id)
            elif stored.cursor["phase"] != run.cursor["phase"] == ISSUES:
                refresh_planner_statistics(Issue)  # the comments phase looks issues up by number
            run = stored
            if on_page:
                on_page(run)
    return run


class PageFetcher:
    """Fetches pages on one background thread, so the next page travels while this one is stored.

    Only the page the checkpoint is known to move to is fetched ahead, and never when the rate
    limit is used up; a page fetched ahead for a cursor that went elsewhere is simply dropped.
    """

    def __init__(self, client):
        self.client = client
        self._pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="harvest-fetch")
        self._ahead: tuple[tuple, Future] | None = None

    def __enter__(self) -> PageFetcher:
        return self

    def __exit__(self, *exc_info) -> None:
        self._pool.shutdown(wait=False, cancel_futures=True)

    def fetch(self, phase: str, url: str, etag: str | None) -> Page:
        key = (phase, url, etag)
        ahead, self._ahead = self._ahead, None
        if ahead and ahead[0] == key:
            return ahead[1].result()
        return self._pool.submit(self._get, *key).result()

    def fetch_ahead(self, phase: str, url: str | None, etag: str | None, rate) -> None:
        if url and rate.remaining != 0:
            self._ahead = ((phase, url, etag), self._pool.submit(self._get, phase, url, etag))

    def _get(self, phase: str, url: str, etag: str | None) -> Page:
        fetch = self.client.issues_page if phase == ISSUES else self.client.comments_page
        return fetch(url, etag=etag)


def _advance_one_page(
    run: HarvestRun, fetcher: PageFetcher, validators: dict[str, PageValidator]
) -> HarvestRun | None:
    """Fetch the page at the checkpoint and store it; the run as stored, None if it was not."""
    source = run.source
    phase, url = run.cursor["phase"], run.cursor.get("url")
    if phase == DONE:
        return _finish(run, RunStatus.DONE)
    first_url = _first_url(source, fetcher.client, phase)
    url = url or first_url
    cached = validators.get(url)
    try:
        page = fetcher.fetch(phase, url, _etag(cached))
    except CursorExpired:
        if url == first_url:
            raise
        # A stored cursor URL expired: walk the listing again; upserts make that harmless.
        _move_cursor(run, expected=run.cursor, cursor={"phase": phase, "url": first_url})
        return None
    next_url = (cached.next_url or None) if page.not_modified and cached else page.next_url
    ahead = validators.get(next_url) if next_url else None
    fetcher.fetch_ahead(phase, next_url, _etag(ahead), page.rate)
    return _store_page(run, page, expected=dict(run.cursor), phase=phase, cached=cached)


def _etag(validator: PageValidator | None) -> str | None:
    return validator.etag if validator else None


def _first_url(source: Source, client, phase: str) -> str:
    if phase == ISSUES:
        return client.issues_url(source.owner, source.repo)
    return client.comments_url(source.owner, source.repo, window(source)[0])


def _store_page(
    run: HarvestRun, page: Page, *, expected: dict, phase: str, cached: PageValidator | None
) -> HarvestRun | None:
    """Store a page's rows and move the checkpoint past it, in one transaction, if the checkpoint
    is still `expected`. Returns the run as stored, or None when another worker got there first."""
    source = run.source
    counts = {"pages": 1, "requests": 1}
    next_url, ends_phase = page.next_url, False
    if page.not_modified and cached:
        counts["pages_unchanged"] = 1
        next_url, ends_phase = cached.next_url or None, cached.ends_phase
    with transaction.atomic():
        relax_commit_durability()  # a page lost to a crash goes with its checkpoint: refetched
        runs = HarvestRun.objects.select_related("source").select_for_update(of=("self",))
        locked = runs.get(pk=run.pk)
        if locked.cursor != expected or not locked.is_active:
            return None
        if not page.not_modified:
            if phase == ISSUES:
                stored, skipped, ends_phase = _store_issues(source, page.items)
                counts.update(issues_fetched=stored, pull_requests_skipped=skipped)
            else:
                counts["comments_fetched"] = _store_comments(source, page.items)
        cursor = {"phase": phase, "url": next_url}
        if ends_phase or next_url is None:
            cursor = {"phase": COMMENTS if phase == ISSUES else DONE, "url": None}
        upsert(
            PageValidator,
            [
                {
                    "source": source.pk,
                    "url": page.url,
                    "etag": page.etag or "",
                    "next_url": next_url or "",
                    "ends_phase": ends_phase,
                }
            ],
            unique=("source", "url"),
            update=("etag", "next_url", "ends_phase"),
        )
        for name, n in counts.items():
            setattr(locked, name, getattr(locked, name) + n)
        same_phase = cursor["phase"] == phase
        locked.reached = (_reached(page, phase) or locked.reached) if same_phase else None
        locked.cursor = cursor
        locked.status = RunStatus.RUNNING
        locked.waiting_until = None
        locked.heartbeat_at = timezone.now()
        locked.rate_remaining = page.rate.remaining
        locked.rate_reset_at = page.rate.reset_at
        if cursor["phase"] == DONE:
            locked.status, locked.finished_at = RunStatus.DONE, timezone.now()
        locked.save()
    return locked


def _reached(page: Page, phase: str) -> datetime | None:
    """Where in time the listing has got after this page (see HarvestRun.reached)."""
    if phase == ISSUES:
        return min((r.created_at for r in page.items), default=None)
    return max((r.updated_at or r.created_at for r in page.items if r.created_at), default=None)


def _store_issues(source: Source, records: list[IssueRecord]) -> tuple[int, int, bool]:
    """Upsert the in-window issues of a page (newest first); say whether the window ended here."""
    start, end = window(source)
    now = timezone.now()
    in_window = [r for r in records if start <= r.created_at <= end]
    issues = [r for r in in_window if not r.is_pull_request]
    upsert(
        Issue,
        (issue_row(source.host, source.owner, source.repo, r, now, source=source) for r in issues),
        unique=("host", "owner", "repo", "number"),
        update=(*ISSUE_UPDATE_FIELDS, "source"),
        newer="updated_at",
    )
    if issues and source.keyword_set is not None:
        candidates_mark(
            keyword_set=source.keyword_set,
            issues=Issue.objects.filter(
                host=source.host,
                owner=source.owner,
                repo=source.repo,
                number__in=[r.number for r in issues],
            ).only("pk", "title", "body"),
        )
    ended = any(r.created_at < start for r in records)
    return len(issues), len(in_window) - len(issues), ended


def issue_row(host, owner, repo, record: IssueRecord, now, *, source=None) -> dict:
    """The Issue columns for a record. The forge's `html_url` is kept only if it is an http(s)
    URL; anything else (`javascript:…`) gives way to the canonical URL built from the ref."""
    return {
        "host": host,
        "owner": owner,
        "repo": repo,
        "number": record.number,
        "url": issue_web_url(record.url, IssueRef(host, owner, repo, record.number)),
        "title": record.title[:1000],
        "body": record.body,
        "author": record.author[:100],
        "state": record.state,
        "labels": record.labels,
        "created_at": record.created_at,
        "updated_at": record.updated_at,
        "closed_at": record.closed_at,
        "comment_count": record.comment_count,
        "is_pull_request": record.is_pull_request,
        "host_id": record.host_id,
        "fetched_at": now,
        "fetch_error": "",
        "source": source.pk if source else None,
    }


def _store_comments(source: Source, records: list[CommentRecord]) -> int:
    """Upsert comments whose issue we hold; PR comments and out-of-window issues are dropped."""
    numbers = {r.issue_number for r in records if r.issue_number}
    ids = dict(
        Issue.objects.filter(
            host=source.host,
            owner=source.owner,
            repo=source.repo,
            number__in=numbers,
            is_pull_request=False,
        ).values_list("number", "pk")
    )
    rows = [
        comment_row(source.host, r, ids[r.issue_number]) for r in records if r.issue_number in ids
    ]
    upsert(
        Comment,
        rows,
        unique=("host", "comment_id"),
        update=COMMENT_UPDATE_FIELDS,
        newer="updated_at",
    )
    return len(rows)


def comment_row(host: str, record: CommentRecord, issue_id: int) -> dict:
    return {
        "host": host,
        "comment_id": record.comment_id,
        "issue": issue_id,
        "author": record.author[:100],
        "body": record.body,
        "created_at": record.created_at,
        "updated_at": record.updated_at,
    }


def _move_cursor(run: HarvestRun, *, expected: dict, cursor: dict) -> None:
    with transaction.atomic():
        locked = HarvestRun.objects.select_for_update().get(pk=run.pk)
        if locked.cursor == expected:
            locked.cursor = cursor
            locked.save(update_fields=["cursor"])


def _wait_if_exhausted(run: HarvestRun) -> None:
    """Do not spend a request we know will be refused: wait for the announced reset."""
    now = timezone.now()
    if run.rate_remaining == 0 and run.rate_reset_at and run.rate_reset_at > now:
        wait = (run.rate_reset_at - now).total_seconds() + 1
        raise_wait = RateLimited("the rate limit is used up until its reset", wait)
        _record_wait(run, raise_wait)
        raise raise_wait


def _record_wait(run: HarvestRun, exc: RateLimited) -> None:
    until = timezone.now() + timedelta(seconds=exc.wait_seconds)
    HarvestRun.objects.filter(pk=run.pk, status__in=ACTIVE_STATUSES).update(
        status=RunStatus.WAITING,
        waiting_until=until,
        error="",
        rate_remaining=exc.rate.remaining if exc.rate.remaining is not None else run.rate_remaining,
        rate_reset_at=exc.rate.reset_at or run.rate_reset_at,
    )


def _finish(run: HarvestRun, status: str, *, error: str = "") -> HarvestRun:
    HarvestRun.objects.filter(pk=run.pk, status__in=ACTIVE_STATUSES).update(
        status=status, error=error, finished_at=timezone.now(), waiting_until=None
    )
    run.refresh_from_db()
    return run


def harvest_runs_stale(*, older_than: timedelta | None = None) -> list[int]:
    """Active runs nobody is working on: no heartbeat for a while (a killed worker), or a wait
    that ended long ago (a lost retry). The caller enqueues them again; steps are idempotent."""
    limit = timezone.now() - (older_than or timedelta(seconds=settings.JOB_STALE_SECONDS))
    runs = HarvestRun.objects.filter(status__in=ACTIVE_STATUSES, cancel_requested=False)
    stale = runs.filter(status__in=(RunStatus.QUEUED, RunStatus.RUNNING)).exclude(
        heartbeat_at__gt=limit
    )
    stale = stale.exclude(created_at__gt=limit)
    waited = runs.filter(status=RunStatus.WAITING, waiting_until__lt=limit)
    return sorted(
        set(stale.values_list("pk", flat=True)) | set(waited.values_list("pk", flat=True))
    )
