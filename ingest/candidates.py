"""Keyword sets and the candidates they mark: an issue whose title or body contains one of the
set's keywords gets a KeywordMatch naming the keywords found (the labeling page highlights them)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence

from django.db import transaction

from concord.db import upsert
from ingest.keywords import KeywordMatcher, unique_keywords
from ingest.models import Issue, KeywordMatch, KeywordSet

BATCH = 2000


def keyword_sets_save(sets: Mapping[str, Iterable[str]]) -> dict[str, int]:
    """Create or replace keyword sets by name, then re-mark candidates of the changed ones."""
    saved = {}
    for name, keywords in sets.items():
        keyword_set = keyword_set_save(name=name, keywords=keywords)
        saved[name] = len(keyword_set.keywords)
    return saved


@transaction.atomic
def keyword_set_save(
    *,
    name: str,
    keywords: Iterable[str],
    description: str | None = None,
    keyword_set: KeywordSet | None = None,
) -> KeywordSet:
    """Create the set `name`, or update `keyword_set` (or the set called `name`): rename it, replace
    its keywords, and set its description unless it is None. Changed keywords re-mark candidates."""
    cleaned = unique_keywords(keywords)
    if keyword_set is None:
        keyword_set, created = KeywordSet.objects.get_or_create(
            name=name, defaults={"keywords": cleaned, "description": description or ""}
        )
        if created:
            return keyword_set
    keywords_changed = keyword_set.keywords != cleaned
    keyword_set.name, keyword_set.keywords = name, cleaned
    if description is not None:
        keyword_set.description = description
    keyword_set.save()
    if keywords_changed:
        candidates_mark(
            keyword_set=keyword_set, issues=Issue.objects.filter(source__keyword_set=keyword_set)
        )
    return keyword_set


def candidates_mark(*, keyword_set: KeywordSet, issues: Iterable[Issue]) -> int:
    """(Re)compute the set's matches on `issues`; returns how many match. Idempotent."""
    matcher = KeywordMatcher(keyword_set.keywords)
    matched: dict[int, list[str]] = {}
    seen: list[int] = []
    for issue in issues:
        seen.append(issue.pk)
        found = matcher.found(f"{issue.title}\n{issue.body}")
        if found:
            matched[issue.pk] = found
    for start in range(0, len(seen), BATCH):
        chunk = seen[start : start + BATCH]
        KeywordMatch.objects.filter(keyword_set=keyword_set, issue_id__in=chunk).exclude(
            issue_id__in=[pk for pk in chunk if pk in matched]
        ).delete()
    upsert(
        KeywordMatch,
        (
            {"issue": pk, "keyword_set": keyword_set.pk, "keywords": kws}
            for pk, kws in matched.items()
        ),
        unique=("issue", "keyword_set"),
        update=("keywords",),
    )
    return len(matched)


def candidates_among(*, keyword_set: KeywordSet, issue_ids: Sequence[int]) -> tuple[list[int], int]:
    """The keyword candidates of `keyword_set` among these issues, matched afresh on the text
    they have, and how many have no text yet (a URL list's issues whose details are still being
    fetched): those cannot be judged until their text is in."""
    with_text = Issue.objects.filter(pk__in=issue_ids, fetched_at__isnull=False)
    candidates_mark(keyword_set=keyword_set, issues=with_text.only("pk", "title", "body"))
    matched = KeywordMatch.objects.filter(keyword_set=keyword_set, issue_id__in=issue_ids)
    awaiting = Issue.objects.filter(pk__in=issue_ids, fetched_at__isnull=True, fetch_error="")
    return sorted(matched.values_list("issue_id", flat=True)), awaiting.count()
