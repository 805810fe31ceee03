"""Reads of the near-duplicate index: one item's duplicates as a viewer may see them, the
project's pairs, the pairs whose final labels differ (the consistency queue) and the pairs an
intake added."""

from __future__ import annotations

from dataclasses import dataclass

from django.db.models import Count, Exists, F, OuterRef, Q, QuerySet

from annotation.access import has_role
from annotation.blindness import revealed
from annotation.models import (
    DuplicatePair,
    Item,
    NotDuplicate,
    Project,
    Role,
    Stage,
)


def _not_dismissed(pairs: QuerySet[DuplicatePair]) -> QuerySet[DuplicatePair]:
    """Less the pairs a lead said are not duplicates."""
    dismissed = NotDuplicate.objects.filter(item_a=OuterRef("item_a"), item_b=OuterRef("item_b"))
    return pairs.exclude(Exists(dismissed))


def pairs_standing(project: Project) -> QuerySet[DuplicatePair]:
    """The project's pairs, less those a lead said are not duplicates, most similar first."""
    return (
        _not_dismissed(DuplicatePair.objects.filter(project=project))
        .select_related(
            "item_a__issue",
            "item_b__issue",
            "item_a__resolution__node",
            "item_b__resolution__node",
        )
        .order_by("-similarity", "item_a_id", "item_b_id")
    )


def pairs_inconsistent(project: Project) -> QuerySet[DuplicatePair]:
    """Duplicates that both reached a final label, and not the same one: the review queue."""
    return (
        pairs_standing(project)
        .filter(item_a__stage=Stage.FINAL, item_b__stage=Stage.FINAL)
        .exclude(item_a__resolution__node=F("item_b__resolution__node"))
    )


def pairs_at_intake(project: Project) -> QuerySet[DuplicatePair]:
    """Pairs whose newer item repeated one already in the project when it was added."""
    return pairs_standing(project).filter(at_intake=True).order_by("-item_b_id")


@dataclass(frozen=True)
class Duplicate:
    """One likely duplicate of an item, as its viewer may see it."""

    item: Item
    similarity: float
    final: bool  # whether it has a final label (item.resolution)


def duplicates_of(item: Item, viewer) -> list[Duplicate]:
    """The likely duplicates of `item` that `viewer` may see. Leads: all. A volunteer: only those
    whose labels the blindness rule already shows them (revealed: disputed or final, in a project
    that reveals), so the list never depends on unfinished items."""
    project = item.project
    # two small queries, not one of ten joins: this runs on every resolve page (20 ms budget)
    pairs = _not_dismissed(DuplicatePair.objects.filter(Q(item_a=item) | Q(item_b=item)))
    similarity = {
        b if a == item.pk else a: s
        for a, b, s in pairs.values_list("item_a_id", "item_b_id", "similarity")
    }
    others = Item.objects.filter(project=project, pk__in=similarity)
    others = others.select_related("issue", "resolution__node")
    if not has_role(viewer, project, Role.LEAD):
        others = revealed(others, project)  # the blindness rule's, as a query
    found = [Duplicate(o, similarity[o.pk], o.stage == Stage.FINAL) for o in others]
    return sorted(found, key=lambda d: (-d.similarity, d.item.pk))


def duplicate_counts(project: Project) -> dict[str, int]:
    """How many standing pairs, items in one, pairs whose final labels differ, intake repeats."""
    ends = list(pairs_standing(project).values_list("item_a_id", "item_b_id"))
    return {
        "pairs": len(ends),
        "items": len({item for pair in ends for item in pair}),
        "inconsistent": pairs_inconsistent(project).count(),
        "at_intake": pairs_at_intake(project).count(),
    }


def final_node(item: Item):
    """The item's final label (a taxonomy Node), or None before it has one."""
    resolution = getattr(item, "resolution", None)  # None: no Resolution row
    return resolution.node if resolution is not None else None


def pair_of(project: Project, a_id: int, b_id: int) -> DuplicatePair | None:
    """The project's pair of these two items (either order), dismissed or not."""
    low, high = sorted((a_id, b_id))
    return (
        DuplicatePair.objects.filter(project=project, item_a_id=low, item_b_id=high)
        .select_related("item_a__issue", "item_b__issue")
        .first()
    )


@dataclass(frozen=True)
class RepositoryDuplicates:
    repository: str  # owner/repo
    items: int  # items with a standing near-duplicate
    inconsistent: int  # pairs (by their older item's repository) whose final labels differ


def duplicates_by_repository(project: Project) -> list[RepositoryDuplicates]:
    """Per repository, the items that have a near-duplicate and the pairs whose final labels
    differ (Reports' repository table): two aggregate queries."""
    ends = pairs_standing(project).values_list("item_a_id", "item_b_id")
    items = {item for pair in ends for item in pair}
    by_repo = (
        Item.objects.filter(pk__in=items)
        .values_list("issue__owner", "issue__repo")
        .annotate(n=Count("pk"))
        .order_by()
    )
    differ = (
        pairs_inconsistent(project)
        .values_list("item_a__issue__owner", "item_a__issue__repo")
        .annotate(n=Count("pk"))
        .order_by()
    )
    inconsistent = {f"{o}/{r}": n for o, r, n in differ}
    rows = [
        RepositoryDuplicates(f"{o}/{r}", n, inconsistent.get(f"{o}/{r}", 0)) for o, r, n in by_repo
    ]
    return sorted(rows, key=lambda row: row.repository.lower())
