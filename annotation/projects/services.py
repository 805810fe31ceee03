"""How issues become a project's items: from a harvested source (all of it, or only the keyword
candidates of the source's keyword set) or from a list of issue ids (a URL-list import)."""

from __future__ import annotations

from collections.abc import Sequence

from django.db import transaction
from django.utils.translation import gettext as _

from annotation.models import Item, Project, Stage
from concord.db import refresh_planner_statistics
from concord.errors import ConcordError
from ingest.models import Issue, Source

BATCH = 2000
ANALYZE_AFTER = 1000  # items added at once, after which the planner's statistics are refreshed


def entry_stage(project: Project) -> str:
    """Items start in screening when the project screens candidates, else open for labeling."""
    return Stage.CANDIDATE if project.screening_enabled else Stage.OPEN


@transaction.atomic
def project_items_from_source(*, project: Project, source: Source, candidates_only: bool) -> int:
    """Add the source's issues (pull requests never) as items; returns how many were new."""
    issues = Issue.objects.filter(source=source, is_pull_request=False)
    if candidates_only:
        if source.keyword_set_id is None:
            raise ConcordError(
                _("%(source)s has no keyword set, so it has no keyword candidates.")
                % {"source": source}
            )
        issues = issues.filter(keyword_matches__keyword_set_id=source.keyword_set_id)
    return project_items_add(project=project, issue_ids=list(issues.values_list("pk", flat=True)))


@transaction.atomic
def project_items_add(*, project: Project, issue_ids: Sequence[int]) -> int:
    """Items for issues not yet in the project; existing items are left as they are."""
    existing = set(project.items.values_list("issue_id", flat=True))
    stage = entry_stage(project)
    new = [
        Item(project=project, issue_id=i, stage=stage)
        for i in dict.fromkeys(issue_ids)
        if i not in existing
    ]
    Item.objects.bulk_create(new, batch_size=BATCH, ignore_conflicts=True)
    if len(new) >= ANALYZE_AFTER:
        # Volunteers may start the moment the items are in; until autovacuum gets to the table
        # the planner would plan their claims for the table as it was (tests.bench.capacity,
        # state "bulk").
        transaction.on_commit(lambda: refresh_planner_statistics(Item))
    return len(new)
