"""Details for issues that arrived as bare URLs: title, body, state and comments, one issue at a
time (a URL list spans many repositories). Issues already fetched are skipped, so a retry after a
rate limit or a killed worker picks up where it stopped.

Each pending issue carries `details_requested_at`, set when its batch is sent and renewed as the
worker goes: a batch whose worker was killed (or that was sent while Redis was down) goes quiet,
and the sweep (`details_stale`, from beat and each worker's start) sends it again.

Only an answer about the issue itself marks it as not fetchable (`fetch_error`, shown on the
labeling page and never fetched again): gone, a pull request, an answer of the wrong shape. A
host that fails (5xx, timeouts, after the client's retries) or a token it refuses says nothing
about the issue: those issues stay pending and are fetched again later."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import timedelta

from django.conf import settings
from django.db import transaction
from django.utils import timezone

from concord.db import upsert
from concord.tasks import send
from ingest.clients import ForgeError, ForgeUnavailable, RateLimited, RepoNotFound, Unauthorized
from ingest.harvest import (
    ISSUE_UPDATE_FIELDS,
    comment_row,
    comments_upsert,
    issue_row,
    source_client,
)
from ingest.models import Issue, Source

DETAIL_BATCH = 100
HEARTBEAT_EVERY = 10  # issues
# Issues in a row the host failed on before the batch stops: the host is down, not one issue.
DOWN_AFTER = 2


def details_request(issue_ids: Sequence[int]) -> int:
    """Send the detail fetch of these issues (those still missing it) to the workers, in batches;
    returns how many batches the broker took. Those it did not take wait for the sweep."""
    pending = _pending(issue_ids)
    ids = sorted(pending.values_list("pk", flat=True))
    pending.update(details_requested_at=timezone.now())
    from ingest.tasks import issues_fetch_details as fetch_task

    batches = [ids[start : start + DETAIL_BATCH] for start in range(0, len(ids), DETAIL_BATCH)]
    return sum(send(fetch_task, batch) for batch in batches)


def details_stale() -> list[int]:
    """Issues whose requested fetch went quiet: no worker has touched them for a while."""
    limit = timezone.now() - timedelta(seconds=settings.JOB_STALE_SECONDS)
    quiet = Issue.objects.filter(
        fetched_at__isnull=True, fetch_error="", details_requested_at__lt=limit
    )
    return sorted(quiet.values_list("pk", flat=True))


def issues_fetch_details(*, issue_ids: Sequence[int], clients: dict | None = None) -> int:
    """Fetch what is missing; returns how many issues were filled in. Raises RateLimited (wait,
    then again), Unauthorized (the token; nothing marked) or, once every issue it could fetch is
    stored, ForgeUnavailable: the host failed on some (stopping after DOWN_AFTER in a row), and
    they stay pending."""
    clients = clients if clients is not None else {}
    done = 0
    failed: ForgeUnavailable | None = None
    in_a_row = 0
    pending = _pending(issue_ids)
    for n, issue in enumerate(pending.order_by("pk")):
        if n % HEARTBEAT_EVERY == 0:
            _pending(issue_ids).update(details_requested_at=timezone.now())
        client = clients.get(issue.host) or clients.setdefault(issue.host, _client(issue.host))
        try:
            record = client.issue(issue.owner, issue.repo, issue.number)
            if record.is_pull_request:
                _mark(issue, "this number is a pull request, not an issue")
                continue
            comments = (
                client.issue_comments(issue.owner, issue.repo, issue.number)
                if record.comment_count
                else []
            )
        except RateLimited as exc:
            details_held(issue_ids, exc.wait_seconds)
            raise
        except ForgeUnavailable as exc:
            failed, in_a_row = exc, in_a_row + 1
            if in_a_row == DOWN_AFTER:
                break
            continue
        except Unauthorized:
            raise
        except RepoNotFound:
            _mark(issue, "not found on the host (deleted, moved, or private)")
            continue
        except ForgeError as exc:
            _mark(issue, str(exc)[:300])
            continue
        with transaction.atomic():
            now = timezone.now()
            row = issue_row(issue.host, issue.owner, issue.repo, record, now)
            row["url"] = issue.url  # keep the canonical URL the list gave
            row["number"] = issue.number  # a transferred issue keeps the identity asked for
            del row["source"]
            upsert(
                Issue,
                [row],
                unique=("host", "owner", "repo", "number"),
                update=tuple(f for f in ISSUE_UPDATE_FIELDS),
            )
            comments_upsert([comment_row(issue.host, c, issue.pk) for c in comments])
        done += 1
        in_a_row = 0
    if failed is not None:
        raise failed
    return done


def details_held(issue_ids: Sequence[int], seconds: float) -> None:
    """The batch is sent again in `seconds`: until then the sweep must not send a duplicate."""
    back = timezone.now() + timedelta(seconds=seconds)
    _pending(issue_ids).update(details_requested_at=back)


def _pending(issue_ids: Sequence[int]):
    return Issue.objects.filter(pk__in=issue_ids, fetched_at__isnull=True, fetch_error="")


def _client(host: str):
    # A transient Source carries no token: the environment's token for the host applies.
    return source_client(Source(host=host))


def _mark(issue: Issue, reason: str) -> None:
    Issue.objects.filter(pk=issue.pk).update(fetch_error=reason)
