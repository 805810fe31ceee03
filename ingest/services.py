"""Writes on issues."""

from __future__ import annotations

from collections.abc import Iterable

from ingest.issue_refs import IssueRef
from ingest.models import Issue

BATCH = 2000


def issues_ensure(refs: Iterable[IssueRef]) -> dict[IssueRef, int]:
    """Make sure an Issue row exists for every ref; return ids. Safe to repeat, safe under races."""
    wanted = set(refs)
    found = _issue_ids(wanted)
    missing = [
        Issue(host=r.host, owner=r.owner, repo=r.repo, number=r.number, url=r.url)
        for r in sorted(wanted - found.keys())
    ]
    if missing:
        Issue.objects.bulk_create(missing, batch_size=BATCH, ignore_conflicts=True)
        found.update(_issue_ids({r for r in wanted if r not in found}))
    return found


def _issue_ids(refs: set[IssueRef]) -> dict[IssueRef, int]:
    ids: dict[IssueRef, int] = {}
    by_repo: dict[tuple[str, str, str], set[str]] = {}
    for r in refs:
        by_repo.setdefault((r.host, r.owner, r.repo), set()).add(r.number)
    for (host, owner, repo), numbers in by_repo.items():
        rows = Issue.objects.filter(host=host, owner=owner, repo=repo).values_list("pk", "number")
        for pk, number in rows.iterator(chunk_size=BATCH):
            if number in numbers:
                ids[IssueRef(host, owner, repo, number)] = pk
    return ids
