"""Harvesting a Source: walk the tracker's issue listing newest first, then its comments in bulk.

The run's cursor is the checkpoint. Each page is fetched outside any transaction, then its
upserts and the advanced cursor commit together under a lock on the run, and only if the cursor
is still where this page started (compare-and-set): a killed worker resumes from the last
committed page, and a duplicate task finds nothing to do. Rate limits never block a worker: the
run records how long to wait and RateLimited propagates to the caller (Celery retries with a
countdown, the command sleeps with a message).
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from datetime import datetime, time, timedelta
from urllib.parse import unquote
from zoneinfo import ZoneInfo

from django.conf import settings
from django.db import DatabaseError, transaction
from django.utils import timezone

from concord.db import refresh_planner_statistics, relax_commit_durability, upsert
from concord.errors import Conflict
from concord.tasks import send
from ingest.candidates import candidates_mark
from ingest.clients import (
    CommentRecord,
    CursorExpired,
    ForgeError,
    ForgeUnavailable,
    IssueRecord,
    Moved,
    Page,
    RateLimited,
    client_for,
)
from ingest.clients.base import PER_PAGE, answer_json
from ingest.clients.github_graphql import GitHubGraphQLClient
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
from ingest.services import issue_spellings, repository_issues

logger = logging.getLogger(__name__)

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
    "moved_to",
)
# Not "issue": a comment never moves between issues (see comments_upsert).
COMMENT_UPDATE_FIELDS = ("author", "body", "created_at", "updated_at")


def source_client(source: Source, *, listing: bool = False):
    """The client for a source's host. For a harvest's listing (`listing`), GitHub with a token
    is asked through GraphQL (GITHUB_GRAPHQL): issues with their comments, no pull requests."""
    api_url = {"github": settings.GITHUB_API_URL, "gitee": settings.GITEE_API_URL}[source.host]
    token = (
        source.token
        or {"github": settings.GITHUB_TOKEN, "gitee": settings.GITEE_TOKEN}[source.host]
    )
    options = {
        "api_url": api_url,
        "token": token,
        "max_retries": settings.HARVEST_MAX_RETRIES,
        "request_seconds": settings.HARVEST_REQUEST_SECONDS,
        "backoff": settings.HARVEST_BACKOFF_SECONDS,
        "secondary_wait": settings.HARVEST_SECONDARY_WAIT_SECONDS,
    }
    if listing and source.host == "github" and token and settings.GITHUB_GRAPHQL:
        return GitHubGraphQLClient(**options)
    return client_for(source.host, **options)


def window(source: Source) -> tuple[datetime, datetime]:
    """[first instant, last instant] of the creation window: its dates are days in the source's
    time zone (a Gitee tracker's dates are Asia/Shanghai days; in UTC they are 8 hours off)."""
    zone = ZoneInfo(source.time_zone)
    start = datetime.combine(source.created_from, time.min, tzinfo=zone)
    end = datetime.combine(source.created_until, time.max, tzinfo=zone)
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
        cursor, began = {"phase": ISSUES, "url": None}, None
        active = source.runs.filter(status__in=ACTIVE_STATUSES).first()
        if active is not None and active.pk in harvest_runs_stale(source=source):
            # Its process is gone (killed, crashed, the machine restarted): the new run takes
            # over from its checkpoint instead of being refused until someone notices.
            cursor, began = active.cursor, active.host_began_at
            harvest_abandon(run=active, reason=_abandoned_reason(active))
        elif active is not None:
            raise Conflict(
                f"{source} is already being harvested (run {active.pk}, {active.status})."
            )
        run = HarvestRun.objects.create(
            source=source,
            started_by=user if user and user.is_authenticated else None,
            cursor=cursor,
            host_began_at=began,  # what it went on from was read from then on
        )
        if enqueue:
            from ingest.tasks import harvest_continue as harvest_continue_task

            transaction.on_commit(lambda: sent.update(ok=send(harvest_continue_task, run.pk)))
    return HarvestQueued(run=run, sent=sent.get("ok", True))


def _abandoned_reason(run: HarvestRun) -> str:
    since = run.heartbeat_at or run.created_at
    return (
        f"stopped without finishing: no sign of its process since {since:%Y-%m-%d %H:%M:%S %Z} "
        f"(JOB_STALE_SECONDS={settings.JOB_STALE_SECONDS}); a new run of the source went on "
        "from its checkpoint."
    )


def harvest_abandon(*, run: HarvestRun, reason: str) -> None:
    """End an active run that nobody will finish (its process is gone, or was interrupted), as
    failed with `reason`: it never stays "running" and holds the source no longer."""
    _finish(run, RunStatus.FAILED, error=reason)


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

    Raises RateLimited (after recording the wait on the run) when the forge says to wait, or
    when it keeps failing (5xx, timeouts after the client's retries): an outage of minutes waits
    and goes on from the checkpoint instead of failing the run.
    """
    run = HarvestRun.objects.select_related("source").get(pk=run_id)
    validators = {v.url: v for v in run.source.page_validators.all()}
    pages = 0
    with PageFetcher(client or source_client(run.source, listing=True)) as fetcher:
        while run.is_active and (max_pages is None or pages < max_pages):
            if run.cancel_requested:
                return _finish(run, RunStatus.CANCELLED)
            _wait_if_exhausted(run)
            try:
                stored = _advance_one_page(run, fetcher, validators)
            except RateLimited as exc:
                return _rate_limited(run, exc)
            except ForgeUnavailable as exc:
                return _host_failing(run, exc)
            except ForgeError as exc:
                return _finish(run, RunStatus.FAILED, error=str(exc))
            except DatabaseError:
                raise  # the database is away: the run keeps its checkpoint for the sweep
            except Exception as exc:
                # A fault of Concord's own on an answer nobody foresaw: end the run in words
                # (the traceback goes to the log), never leave it "running".
                logger.exception("harvest run %s stopped by an unexpected error", run.pk)
                return _finish(run, RunStatus.FAILED, error=_crash_reason(exc))
            pages += 1
            if stored is None:  # someone else moved the checkpoint: start from theirs
                stored = HarvestRun.objects.select_related("source").get(pk=run_id)
            elif stored.cursor["phase"] != run.cursor["phase"] == ISSUES:
                refresh_planner_statistics(Issue)  # the comments phase looks issues up by number
            run = stored
            if _stalled(run):
                return _finish(run, RunStatus.FAILED, error=_stalled_reason(run))
            if on_page:
                on_page(run)
    return run


def _crash_reason(exc: Exception) -> str:
    return (
        f"stopped by an error in Concord ({type(exc).__name__}: {str(exc)[:300]}); the stored "
        "issues are kept, and the details are in the server's log."
    )


def _stalled(run: HarvestRun) -> bool:
    """No progress over too many requests: re-walking the pages already walked is allowed once,
    then HARVEST_IDLE_REQUESTS more, and no more (a host that keeps sending the run back must not
    keep it busy forever)."""
    deepest = run.cursor.get("deepest", 0)
    return run.is_active and run.idle_requests > deepest + settings.HARVEST_IDLE_REQUESTS


def _stalled_reason(run: HarvestRun) -> str:
    return (
        f"no progress in {run.idle_requests} requests: the {run.cursor.get('phase')} listing "
        f"kept returning to pages already walked (deepest page {run.cursor.get('deepest', 0)}, "
        f"{run.restarts} restarts). Stopped instead of looping; the stored issues are kept and "
        "a new run starts the listing afresh."
    )


def _rate_limited(run: HarvestRun, exc: RateLimited) -> HarvestRun:
    """Record the wait and re-raise, longer each time in a row for secondary limits; after
    HARVEST_MAX_RATE_WAITS in a row the run fails, saying why."""
    waits = run.rate_waits + 1
    words = f"kept refusing with a rate limit: {waits} answers in a row, the last {exc}"
    if (failed := _failed_past_the_waits(run, waits, words)) is not None:
        return failed
    wait = exc.wait_seconds
    if exc.rate.remaining != 0:  # a secondary limit: no reset time, so back off with growth
        wait = max(wait, grown_wait(waits))
        exc = RateLimited(str(exc), wait, exc.rate)
    _record_wait(run, exc, rate_waits=waits)
    raise exc


def _host_failing(run: HarvestRun, exc: ForgeUnavailable) -> HarvestRun:
    """The host still failing after the client's retries (a GitHub incident lasts minutes):
    wait as for a secondary limit, longer each time in a row, and say why on the run; after
    HARVEST_MAX_RATE_WAITS in a row the run fails."""
    waits = run.rate_waits + 1
    words = f"kept failing: {waits} times in a row, the last {exc}"
    if (failed := _failed_past_the_waits(run, waits, words)) is not None:
        return failed
    wait = RateLimited(str(exc), grown_wait(waits))
    reason = f"{run.source.get_host_display()} failing: {exc}"[:300]
    _record_wait(run, wait, rate_waits=waits, reason=reason)
    raise wait from exc


def _failed_past_the_waits(run: HarvestRun, waits: int, words: str) -> HarvestRun | None:
    """The run failed, saying `words` of its host, when `waits` in a row is past the bound."""
    if waits <= settings.HARVEST_MAX_RATE_WAITS:
        return None
    return _finish(
        run,
        RunStatus.FAILED,
        error=f"{run.source.get_host_display()} {words}. Gave up after HARVEST_MAX_RATE_WAITS="
        f"{settings.HARVEST_MAX_RATE_WAITS}; start a new run later (what is stored stays).",
    )


def grown_wait(waits: int) -> float:
    """The wait before try `waits` + 1 when the host names none (a secondary limit, a failing
    host; a harvest's or a detail fetch's): doubling, up to a cap."""
    grown = settings.HARVEST_SECONDARY_WAIT_SECONDS * 2 ** (waits - 1)
    return min(grown, settings.HARVEST_MAX_WAIT_SECONDS)


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
    source, cursor = run.source, dict(run.cursor)
    phase, url = cursor["phase"], cursor.get("url")
    if phase == DONE:
        return _finish(run, RunStatus.DONE)
    first_url = _first_url(source, fetcher.client, phase)
    url = url or first_url
    cached = None if cursor.get("fresh") else validators.get(url)
    extra = 0
    try:
        page = fetcher.fetch(phase, url, _etag(cached))
        if page.not_modified and cached and cached.full and not cached.next_url:
            # The body is unchanged, but a full last page says nothing of a page added after it
            # since (the `link` header is not in the ETag): ask again, unconditionally.
            page, cached, extra = fetcher.fetch(phase, url, None), None, 1
    except Moved as exc:
        if url != first_url:
            raise
        return _follow_rename(run, fetcher.client, exc)
    except CursorExpired:
        if url == (cursor.get("walk_start") or first_url):
            raise
        return _after_refusal(run, fetcher.client)
    if page.renamed_to is not None:  # GraphQL answers under the old name with the new one
        return _renamed(run, *page.renamed_to, requests=page.requests)
    next_url, ends, moves = _where_next(run, fetcher.client, url, page, cached)
    if not ends:  # never spend a request on the page after the window
        ahead = None if cursor.get("fresh") else validators.get(next_url or "")
        fetcher.fetch_ahead(phase, next_url, _etag(ahead), page.rate)
    return _store_page(
        run,
        page,
        expected=cursor,
        phase=phase,
        cached=cached,
        next_url=next_url,
        ends=ends,
        moves=moves,
        extra=extra,
    )


def _where_next(
    run: HarvestRun, client, url: str, page: Page, cached: PageValidator | None
) -> tuple[str | None, bool, dict]:
    """(the next page, whether this one ends the phase, what else the checkpoint takes): the
    host's `next`, or the cached one on a 304; comments by time; a step back when the issue
    pages shifted (an issue before this page went away)."""
    cursor, phase = run.cursor, run.cursor["phase"]
    ends = _ends_phase(run.source, page, cached, phase)
    next_url = (cached.next_url or None) if page.not_modified and cached else page.next_url
    if phase == COMMENTS:
        return _comments_next(run, client, page, next_url)
    if _shifted(cursor, page):  # an item before this page went away: re-walk what moved up
        pages_back = -(-(cursor["total"] - (page.total or 0)) // PER_PAGE)
        depth = max(cursor.get("depth", 0) - pages_back, 0)
        moves = {"depth": depth, "last_number": None}  # stepping back: nothing to follow on
        return client.page_back(url, pages_back) or next_url, False, moves
    boundary = _moved_up(client, cursor, page)
    if boundary is not None and (back := client.page_back(url, 1)) is not None:
        depth = max(cursor.get("depth", 0) - 1, 0)
        return back, False, {"depth": depth, "rechecked": boundary, "last_number": None}
    return next_url, ends, {"last_number": _last_number(page, cached) or None}


def _comments_next(
    run: HarvestRun, client, page: Page, next_url: str | None
) -> tuple[str | None, bool, dict]:
    """Comments are read by time, never by page number: after a full page, the next one asks
    for what was updated since the last update on it (`since=`; the comments of that second
    come again and are not counted twice). A comment edited or deleted meanwhile moves nothing
    not yet read, a listing the host caps deep down is never reached, and a re-run of an
    unchanged tracker asks the very same URLs (all 304s). A page that is not full ends the
    listing; a 304 goes where it went. More than a page of comments of one second (an import)
    are read through the host's pages of that one query."""
    if page.not_modified:
        return next_url, False, {"boundary_ids": []}
    since = _reached(page, COMMENTS) if len(page.items) >= PER_PAGE else None
    if since is None:
        return None, False, {}
    again = [r.comment_id for r in page.items if (r.updated_at or r.created_at) == since]
    previous = run.cursor.get("since")
    if previous and datetime.fromisoformat(previous) >= since and next_url:
        return next_url, False, {"boundary_ids": again}
    url = _time_continuation(run, client, since)
    return url, False, {"walk_start": url, "since": since.isoformat(), "boundary_ids": again}


def _shifted(cursor: dict, page: Page) -> bool:
    """The host's item count fell since the last page (Gitee's `total_count`): the items after
    the one that went away moved up a place, and the first of this page now ends the page
    before, already walked."""
    before = cursor.get("total")
    return page.total is not None and before is not None and page.total < before


def _moved_up(client, cursor: dict, page: Page) -> list[str] | None:
    """[last number of the page before, first of this one] when this page does not follow on
    from the page before (client.page_follows) and that boundary was not read again already,
    else None. Numbered pages shift when an issue before them goes away: the next one moves up
    into the page already read. Reading that page again (once per boundary) finds it; a gap
    that stays (older deletions) costs those two requests."""
    last = cursor.get("last_number")
    if not (last and page.items and not page.not_modified) or client.page_follows(last, page):
        return None
    boundary = [last, page.items[0].number]
    return None if cursor.get("rechecked") == boundary else boundary


def _ends_phase(source: Source, page: Page, cached: PageValidator | None, phase: str) -> bool:
    """The issues listing (newest first) has gone past the window's start on this page."""
    if phase != ISSUES:
        return False
    if page.not_modified and cached:
        return cached.ends_phase
    start = window(source)[0]
    return any(r.created_at < start for r in page.items)


def _after_refusal(run: HarvestRun, client) -> HarvestRun | None:
    """The host refused a saved page URL (422: an expired cursor, or a listing capped deep down).

    Comments are listed by update time, so they continue by time from the last update stored
    (`since=`). Issues begin again from the first page, fresh: no ETags, since 304s would walk
    the stored `next` links back to the very URL refused. HARVEST_MAX_RESTARTS bounds that."""
    cursor, source = dict(run.cursor), run.source
    if cursor["phase"] == COMMENTS and run.reached:
        return _continue_by_time(run, client, since=run.reached, extra_requests=1)
    restarts = run.restarts + 1
    if restarts > settings.HARVEST_MAX_RESTARTS:
        raise ForgeError(
            f"{source.get_host_display()} refused the saved page URL {cursor.get('url')} again "
            f"after {run.restarts} fresh restarts of the {cursor['phase']} listing; stopped "
            f"(HARVEST_MAX_RESTARTS={settings.HARVEST_MAX_RESTARTS})."
        )
    restarted = {**cursor, "url": None, "fresh": True, "depth": 0, "walk_start": None}
    restarted["last_number"] = None  # a new walk: no page before its first
    _move_cursor(run, expected=run.cursor, cursor=restarted, restarts=restarts)
    return None


def _continue_by_time(
    run: HarvestRun, client, *, since: datetime, extra_requests: int = 0
) -> HarvestRun | None:
    """Go on with the comments listing from `since` (its last update stored): never finish
    while the host says, or may be saying, there is more."""
    url = _time_continuation(run, client, since)
    moved = {**run.cursor, "url": url, "walk_start": url, "since": since.isoformat()}
    _move_cursor(run, expected=run.cursor, cursor=moved, requests=extra_requests)
    return None


def _time_continuation(run: HarvestRun, client, since: datetime) -> str:
    """The comments listing from `since` on; ForgeError when that would not move forward."""
    previous = run.cursor.get("since")
    if previous and datetime.fromisoformat(previous) >= since:
        raise ForgeError(
            f"the comments listing cannot go on past {since.isoformat()}: more than a page of "
            "comments share that update time, and the host serves no page after it. Stopped "
            "rather than finish with comments missing."
        )
    return client.comments_url(run.source.owner, run.source.repo, since)


def _follow_rename(run: HarvestRun, client, moved: Moved) -> HarvestRun | None:
    """A renamed repository: record the old name on the source and go on under the new one, so
    stored issues carry the name their URLs say and a harvest under the new name finds them."""
    source = run.source
    target, asked = repository_at(client, client.move_target(moved))
    if target is None or target == (source.owner, source.repo):
        raise ForgeError(f"the repository moved to {moved.location}, which is not a repository")
    return _renamed(run, *target, requests=1 + asked)


def _renamed(run: HarvestRun, owner: str, repo: str, *, requests: int) -> HarvestRun | None:
    """The host names the source's repository otherwise now: record it, and start the listing
    again under the new name (nothing stored is lost; upserts find it under the new name)."""
    source_rename(run.source, owner, repo)
    again = {**run.cursor, "url": None, "last_number": None}
    _move_cursor(run, expected=run.cursor, cursor=again, requests=requests)
    return None  # the checkpoint moved without a page: the caller reads the run again


def repository_at(client, api_url: str) -> tuple[tuple[str, str] | None, int]:
    """(owner, repo) of a repository API URL on the API host, and the requests that took to
    know: `/repos/{owner}/{repo}/...` says it; GitHub's rename redirect, `/repositories/{id}/...`,
    is asked for the repository's current `full_name`."""
    path = api_url.removeprefix(client.api_url).split("?")[0]
    parts = path.strip("/").split("/")
    if len(parts) >= 3 and parts[0] == "repos":
        return (unquote(parts[1]), unquote(parts[2])), 0
    if len(parts) >= 2 and parts[0] == "repositories" and parts[1].isdigit():
        url = f"{client.api_url}/repositories/{parts[1]}"
        meta = answer_json(client.get(url), dict, "a repository")
        owner, _, repo = str(meta.get("full_name", "")).partition("/")
        return ((owner, repo) if owner and repo else None), 1
    return None, 0


def source_rename(source: Source, owner: str, repo: str) -> None:
    """Rename a source after its host did, carrying its stored issues over to the new name (an
    issue already stored under the new name keeps its row)."""
    old = source.repository
    with transaction.atomic():
        clash = Source.objects.filter(
            host=source.host,
            owner=owner,
            repo=repo,
            created_from=source.created_from,
            created_until=source.created_until,
        ).exclude(pk=source.pk)
        other = clash.first()
        if other is not None:
            raise ForgeError(
                f"{old} was renamed to {owner}/{repo} on {source.get_host_display()}, which is "
                f"already a source for the same window (#{other.pk}); harvest that one."
            )
        # Names without case, as issues are told apart (repository_issues).
        taken = repository_issues(source.host, owner, repo).values("number")
        moving = repository_issues(source.host, source.owner, source.repo).exclude(number__in=taken)
        Issue.objects.filter(pk__in=moving.values("pk")).update(owner=owner, repo=repo)
        Source.objects.filter(pk=source.pk).update(owner=owner, repo=repo, renamed_from=old)
    source.owner, source.repo, source.renamed_from = owner, repo, old


def _etag(validator: PageValidator | None) -> str | None:
    return validator.etag if validator else None


def _first_url(source: Source, client, phase: str) -> str:
    if phase == ISSUES:
        return client.issues_url(source.owner, source.repo, _last_done_start(source))
    return client.comments_url(source.owner, source.repo, window(source)[0])


def _last_done_start(source: Source) -> datetime | None:
    """When the source's last finished run began, on the host's clock and less a margin:
    everything updated before then is stored (a GraphQL re-harvest asks only for what changed
    since; REST sends ETags instead). The host's clock, not ours: ours may be ahead of it, and
    an edit made in between would be missed for good. The margin covers the time between the
    host's answer and its `Date` (whole seconds), and a run that began before the old format."""
    done = source.runs.filter(status=RunStatus.DONE).order_by("-created_at")
    began = done.values_list("host_began_at", "created_at").first()
    if began is None:
        return None
    margin = timedelta(seconds=settings.HARVEST_SINCE_MARGIN_SECONDS)
    return (began[0] or began[1]) - margin


def _store_page(
    run: HarvestRun,
    page: Page,
    *,
    expected: dict,
    phase: str,
    cached: PageValidator | None,
    next_url: str | None,
    ends: bool,
    moves: dict,
    extra: int = 0,
) -> HarvestRun | None:
    """Store a page's rows and move the checkpoint past it, in one transaction, if the checkpoint
    is still `expected`. Returns the run as stored, or None when another worker got there first."""
    source = run.source
    counts = {"pages": 1, "requests": page.requests + extra}
    if page.not_modified and cached:
        counts["pages_unchanged"] = 1
    with transaction.atomic():
        relax_commit_durability()  # a page lost to a crash goes with its checkpoint: refetched
        runs = HarvestRun.objects.select_related("source").select_for_update(of=("self",))
        locked = runs.get(pk=run.pk)
        if locked.cursor != expected or not locked.is_active:
            return None
        if not page.not_modified:
            if phase == ISSUES:
                stored, skipped = _store_issues(source, page.items)
                counts.update(issues_fetched=stored, pull_requests_skipped=skipped)
                if page.comments:  # GraphQL: the issues' comments came with them
                    counts["comments_fetched"] = _store_comments(source, page.comments)
            else:
                seen = set(expected.get("boundary_ids") or ())  # the page before ended with them
                fresh = [r for r in page.items if r.comment_id not in seen]
                counts["comments_fetched"] = _store_comments(source, fresh)
        cursor = _next_cursor(expected, page, phase, next_url, ends, moves)
        _remember_page(source, page, cached, next_url, ends)
        for name, n in counts.items():
            setattr(locked, name, getattr(locked, name) + n)
        same_phase = cursor["phase"] == phase
        locked.reached = (_reached(page, phase) or locked.reached) if same_phase else None
        went_deeper = not same_phase or cursor.get("depth", 0) > expected.get("deepest", 0)
        locked.idle_requests = 0 if went_deeper else locked.idle_requests + page.requests + extra
        locked.rate_waits = 0
        locked.cursor = cursor
        locked.status = RunStatus.RUNNING
        locked.waiting_until = None
        locked.wait_reason = ""
        locked.heartbeat_at = timezone.now()
        locked.host_began_at = locked.host_began_at or page.host_date or locked.heartbeat_at
        locked.rate_remaining = page.rate.remaining
        locked.rate_reset_at = page.rate.reset_at
        if cursor["phase"] == DONE:
            locked.status, locked.finished_at = RunStatus.DONE, timezone.now()
        locked.save()
    return locked


def _next_cursor(
    expected: dict, page: Page, phase: str, next_url: str | None, ends: bool, moves: dict
) -> dict:
    """Where the checkpoint goes after this page: the next page of this walk (how deep it is,
    the deepest page reached, the host's item count), or the next phase."""
    if ends or next_url is None:
        after_issues = DONE if page.comments_included else COMMENTS
        return {"phase": after_issues if phase == ISSUES else DONE, "url": None}
    depth = expected.get("depth", 0) + 1
    cursor = {
        **expected,
        "url": next_url,
        "depth": depth,
        "deepest": max(expected.get("deepest", 0), depth),
    }
    if page.total is not None:
        cursor["total"] = page.total
    cursor.update(moves)
    return cursor


def _remember_page(
    source: Source, page: Page, cached: PageValidator | None, next_url: str | None, ends: bool
) -> None:
    """The page's ETag and where the listing went on from it, for a conditional request next
    time; whether it was full (see PageValidator.full)."""
    full = cached.full if page.not_modified and cached else len(page.items) >= PER_PAGE
    upsert(
        PageValidator,
        [
            {
                "source": source.pk,
                "url": page.url,
                "etag": page.etag or "",
                "next_url": next_url or "",
                "ends_phase": ends,
                "full": full,
                "last_number": _last_number(page, cached),
            }
        ],
        unique=("source", "url"),
        update=("etag", "next_url", "ends_phase", "full", "last_number"),
    )


def _last_number(page: Page, cached: PageValidator | None) -> str:
    """The number of the page's last item; of the cached page's on a 304."""
    if page.not_modified and cached:
        return cached.last_number
    last = page.items[-1] if page.items else None
    return last.number if isinstance(last, IssueRecord) else ""


def _reached(page: Page, phase: str) -> datetime | None:
    """Where in time the listing has got after this page (see HarvestRun.reached)."""
    if phase == ISSUES:
        return min((r.created_at for r in page.items), default=None)
    return max((r.updated_at or r.created_at for r in page.items if r.created_at), default=None)


def _store_issues(source: Source, records: list[IssueRecord]) -> tuple[int, int]:
    """Upsert the in-window issues of a page; how many, and how many pull requests left out."""
    start, end = window(source)
    now = timezone.now()
    in_window = [r for r in records if start <= r.created_at <= end]
    issues = [r for r in in_window if not r.is_pull_request]
    # Under the names as Concord spells them (an issue a URL list brought as nvidia/megatron-lm
    # is the source's NVIDIA/Megatron-LM one): the upsert finds rows by the names as stored.
    spelled = issue_spellings(source.host, source.owner, source.repo, (r.number for r in issues))
    upsert(
        Issue,
        (issue_row(source.host, *spelled[r.number], r, now, source=source) for r in issues),
        unique=("host", "owner", "repo", "number"),
        update=(*ISSUE_UPDATE_FIELDS, "source"),
        newer="updated_at",
    )
    if issues and source.keyword_set is not None:
        candidates_mark(
            keyword_set=source.keyword_set,
            issues=repository_issues(source.host, source.owner, source.repo)
            .filter(number__in=[r.number for r in issues])
            .only("pk", "title", "body"),
        )
    return len(issues), len(in_window) - len(issues)


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
        "moved_to": record.moved_to,
        "source": source.pk if source else None,
    }


def _store_comments(source: Source, records: list[CommentRecord]) -> int:
    """Upsert comments whose issue we hold; PR comments and out-of-window issues are dropped."""
    numbers = {r.issue_number for r in records if r.issue_number}
    ids = dict(
        repository_issues(source.host, source.owner, source.repo)
        .filter(number__in=numbers, is_pull_request=False)
        .order_by("-pk")  # one issue with two rows (two spellings stored before): the older one
        .values_list("number", "pk")
    )
    rows = [
        comment_row(source.host, r, ids[r.issue_number]) for r in records if r.issue_number in ids
    ]
    comments_upsert(rows)
    return len(rows)


def comments_upsert(rows: list[dict]) -> None:
    """Store comment rows (comment_row), unique by host + comment id; a newer copy updates the
    text. A comment never moves between issues: one whose id is stored under another issue is
    left as it is, not moved and not rewritten, since the labelers of that issue read it (an
    item import's file, or a tracker's listing gone wrong, could otherwise take it over)."""
    upsert(
        Comment,
        rows,
        unique=("host", "comment_id"),
        update=COMMENT_UPDATE_FIELDS,
        newer="updated_at",
        same=("issue",),
    )


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


def _move_cursor(
    run: HarvestRun, *, expected: dict, cursor: dict, requests: int = 1, restarts: int | None = None
) -> None:
    """Move the checkpoint without storing a page (a refused URL, a rename), counting the
    request spent as one without progress."""
    with transaction.atomic():
        locked = HarvestRun.objects.select_for_update().get(pk=run.pk)
        if locked.cursor == expected:
            locked.cursor = cursor
            locked.requests += requests
            locked.idle_requests += requests
            if restarts is not None:
                locked.restarts = restarts
            locked.save(update_fields=["cursor", "requests", "idle_requests", "restarts"])


def _wait_if_exhausted(run: HarvestRun) -> None:
    """Do not spend a request we know will be refused: wait for the announced reset."""
    now = timezone.now()
    if run.rate_remaining == 0 and run.rate_reset_at and run.rate_reset_at > now:
        wait = (run.rate_reset_at - now).total_seconds() + 1
        raise_wait = RateLimited("the rate limit is used up until its reset", wait)
        _record_wait(run, raise_wait)
        raise raise_wait


def _record_wait(
    run: HarvestRun, exc: RateLimited, *, rate_waits: int | None = None, reason: str = ""
) -> None:
    until = timezone.now() + timedelta(seconds=exc.wait_seconds)
    HarvestRun.objects.filter(pk=run.pk, status__in=ACTIVE_STATUSES).update(
        status=RunStatus.WAITING,
        rate_waits=run.rate_waits if rate_waits is None else rate_waits,
        waiting_until=until,
        wait_reason=reason,
        error="",
        rate_remaining=exc.rate.remaining if exc.rate.remaining is not None else run.rate_remaining,
        rate_reset_at=exc.rate.reset_at or run.rate_reset_at,
    )


def _finish(run: HarvestRun, status: str, *, error: str = "") -> HarvestRun:
    HarvestRun.objects.filter(pk=run.pk, status__in=ACTIVE_STATUSES).update(
        status=status, error=error, finished_at=timezone.now(), waiting_until=None, wait_reason=""
    )
    run.refresh_from_db()
    return run


def harvest_runs_stale(
    *, older_than: timedelta | None = None, source: Source | None = None
) -> list[int]:
    """Active runs nobody is working on: no heartbeat for a while (a killed worker), or a wait
    that ended long ago (a lost retry). The caller enqueues them again; steps are idempotent."""
    limit = timezone.now() - (older_than or timedelta(seconds=settings.JOB_STALE_SECONDS))
    runs = HarvestRun.objects.filter(status__in=ACTIVE_STATUSES, cancel_requested=False)
    if source is not None:
        runs = runs.filter(source=source)
    stale = runs.filter(status__in=(RunStatus.QUEUED, RunStatus.RUNNING)).exclude(
        heartbeat_at__gt=limit
    )
    stale = stale.exclude(created_at__gt=limit)
    waited = runs.filter(status=RunStatus.WAITING, waiting_until__lt=limit)
    return sorted(
        set(stale.values_list("pk", flat=True)) | set(waited.values_list("pk", flat=True))
    )
