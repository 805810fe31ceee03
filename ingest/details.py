"""Details for issues that arrived as bare URLs: title, body, state and comments, one issue at a
time (a URL list spans many repositories). Issues already fetched are skipped, so a retry after a
rate limit or a killed worker picks up where it stopped."""

from __future__ import annotations

from collections.abc import Sequence

from django.db import transaction
from django.utils import timezone

from concord.db import upsert
from ingest.clients import ForgeError, RateLimited, RepoNotFound
from ingest.harvest import (
    COMMENT_UPDATE_FIELDS,
    ISSUE_UPDATE_FIELDS,
    comment_row,
    issue_row,
    source_client,
)
from ingest.models import Comment, Issue, Source


def issues_fetch_details(*, issue_ids: Sequence[int], clients: dict | None = None) -> int:
    """Fetch what is missing; returns how many issues were filled in. Raises RateLimited."""
    clients = clients if clients is not None else {}
    done = 0
    pending = Issue.objects.filter(pk__in=issue_ids, fetched_at__isnull=True, fetch_error="")
    for issue in pending.order_by("pk"):
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
        except RateLimited:
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
            del row["source"]
            upsert(
                Issue,
                [row],
                unique=("host", "owner", "repo", "number"),
                update=tuple(f for f in ISSUE_UPDATE_FIELDS),
            )
            upsert(
                Comment,
                [comment_row(issue.host, c, issue.pk) for c in comments],
                unique=("host", "comment_id"),
                update=COMMENT_UPDATE_FIELDS,
                newer="updated_at",
            )
        done += 1
    return done


def _client(host: str):
    # A transient Source carries no token: the environment's token for the host applies.
    return source_client(Source(host=host))


def _mark(issue: Issue, reason: str) -> None:
    Issue.objects.filter(pk=issue.pk).update(fetch_error=reason)
