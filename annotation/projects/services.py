"""How issues become a project's items: from a harvested source (all of it, or only the keyword
candidates of the source's keyword set), from a URL list (all of it, or the candidates of a
keyword set among it) or from a list of issue ids (an item import). All of them go through
project_items_add."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from django.db import transaction
from django.utils.translation import gettext as _

from annotation.duplicates.index import duplicate_index_after_items
from annotation.gate import Write, gate
from annotation.models import Item, Project, Stage
from concord.db import refresh_planner_statistics_on_commit
from concord.errors import ConcordError
from ingest.candidates import candidates_among
from ingest.importers import UrlImportReport, url_list_import
from ingest.models import Issue, KeywordSet, Source
from ingest.services import insert_rows

ANALYZE_AFTER = 1000  # items added at once, after which the planner's statistics are refreshed


def entry_stage(project: Project) -> str:
    """Items start in screening when the project screens candidates, else open for labeling."""
    return Stage.CANDIDATE if project.screening_enabled else Stage.OPEN


@transaction.atomic
def project_items_from_source(
    *, project: Project, actor, source: Source, candidates_only: bool
) -> int:
    """Add the source's issues (pull requests never) as items; returns how many were new."""
    gate(actor, project, Write.ITEMS_FROM_SOURCE)
    issues = Issue.objects.filter(source=source, is_pull_request=False)
    if candidates_only:
        if source.keyword_set_id is None:
            raise ConcordError(
                _("%(source)s has no keyword set, so it has no keyword candidates.")
                % {"source": source}
            )
        issues = issues.filter(keyword_matches__keyword_set_id=source.keyword_set_id)
    issue_ids = list(issues.values_list("pk", flat=True))
    return project_items_add(
        project=project, actor=actor, write=Write.ITEMS_FROM_SOURCE, issue_ids=issue_ids
    )


@dataclass(frozen=True)
class UrlListItems:
    report: UrlImportReport  # the URL list's own report: lines, new issues, bad lines
    added: int  # new items
    awaiting_details: int  # candidates only: issues with no text yet, so not judged


@transaction.atomic
def project_items_from_url_list(
    *, project: Project, actor, text: str, name: str, keyword_set: KeywordSet | None
) -> UrlListItems:
    """Import the URL list (good lines go in, bad ones are reported) and add its issues as items:
    all of them, or only those whose text matches `keyword_set`. Issues whose details are still
    being fetched cannot be matched yet; adding the same list again later takes them then."""
    gate(actor, project, Write.ITEMS_IMPORT)  # before any issue is created
    report = url_list_import(text=text, name=name)
    if report.lines == 0:
        raise ConcordError(f"{name} has no issue URLs (one per line).")
    issue_ids, awaiting = report.issue_ids, 0
    if keyword_set is not None:
        issue_ids, awaiting = candidates_among(keyword_set=keyword_set, issue_ids=issue_ids)
    added = project_items_add(
        project=project, actor=actor, write=Write.ITEMS_IMPORT, issue_ids=issue_ids
    )
    return UrlListItems(report=report, added=added, awaiting_details=awaiting)


def project_items_add(*, project: Project, actor, write: Write, issue_ids: Sequence[int]) -> int:
    """Items for issues not yet in the project; existing items are left as they are. The one way
    items are added, so it asks the gate itself: `actor` making `write` (the entry point's)."""
    gate(actor, project, write)
    ids = list(dict.fromkeys(issue_ids))
    # Only these issues': an item import adds a chunk at a time (issue 25) to a project that
    # may already hold the file's earlier chunks.
    existing = set(project.items.filter(issue_id__in=ids).values_list("issue_id", flat=True))
    stage = entry_stage(project)
    new = [(project.pk, i, stage) for i in ids if i not in existing]
    # COPY on PostgreSQL: bulk_create's per-object work was a third of a 38,742-issue item
    # import (tests.bench.item_imports). The database draws each row's shuffle key.
    insert_rows(Item, ("project_id", "issue_id", "stage"), new, ignore_conflicts=True)
    if len(new) >= ANALYZE_AFTER:
        # Volunteers may start the moment the items are in; until autovacuum gets to the table
        # the planner would plan their claims for the table as it was (tests.bench.capacity,
        # state "bulk").
        refresh_planner_statistics_on_commit(Item)
    if new:
        duplicate_index_after_items(project)  # an added item may repeat one already there
    return len(new)
