"""Issue-URL lists (the study's `issue-lists/*.txt`): one URL per line, GitHub or Gitee.

Unlike label files, a URL list is taken line by line: good lines go in at once (URL, host, repo,
number), bad lines come back with their line numbers, and details are fetched in the background.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from django.conf import settings
from django.db import transaction

from concord.errors import RowError
from ingest.details import details_request
from ingest.issue_refs import BadIssueUrl, IssueRef, parse_issue_url
from ingest.services import issues_ensure


@dataclass
class UrlImportReport:
    lines: int = 0
    created: int = 0
    already_known: int = 0
    duplicates: int = 0
    issue_ids: list[int] = field(default_factory=list)
    errors: list[RowError] = field(default_factory=list)


def url_list_import(*, text: str, name: str, fetch_details: bool = True) -> UrlImportReport:
    report = UrlImportReport()
    refs: dict[IssueRef, int] = {}
    for number, line in enumerate(text.splitlines(), start=1):
        candidate = line.strip().lstrip("\ufeff")
        if not candidate or candidate.startswith("#"):
            continue
        report.lines += 1
        try:
            ref = parse_issue_url(candidate)
        except BadIssueUrl as exc:
            report.errors.append(RowError(name, number, None, str(exc)))
            continue
        if ref in refs:
            report.duplicates += 1
            continue
        refs[ref] = number
    with transaction.atomic():
        from ingest.models import Issue

        before = Issue.objects.count()
        ids = issues_ensure(refs)
        report.created = Issue.objects.count() - before
    report.already_known = len(ids) - report.created
    report.issue_ids = sorted(ids.values())
    # Without a worker (eager mode) thousands of fetches would run inside this request: the
    # command's --fetch-details does that job in the foreground instead.
    if fetch_details and report.issue_ids and not settings.CELERY_TASK_ALWAYS_EAGER:
        transaction.on_commit(lambda: details_request(report.issue_ids))
    return report
