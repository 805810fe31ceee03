"""Reads on taxonomies."""

from __future__ import annotations

from dataclasses import dataclass, field

from django.db.models import Prefetch

from taxonomy.models import Example, Level, Node, Taxonomy


def taxonomy_lineage(taxonomy: Taxonomy) -> dict[int, tuple[str, ...]]:
    """node id -> codes from its type down to itself, e.g. (`C`, `C.1`, `C.1.iii`). One query."""
    nodes = {
        pk: (code, parent)
        for pk, code, parent in taxonomy.nodes.values_list("pk", "code", "parent_id")
    }

    def path(pk: int) -> tuple[str, ...]:
        code, parent = nodes[pk]
        return (*path(parent), code) if parent else (code,)

    return {pk: path(pk) for pk in nodes}


def taxonomy_codes_at(taxonomy: Taxonomy, level: str) -> list[str]:
    return list(taxonomy.nodes.filter(level=level).values_list("code", flat=True))


@dataclass
class TreeNode:
    node: Node
    children: list[TreeNode] = field(default_factory=list)


def taxonomy_tree(taxonomy: Taxonomy) -> list[TreeNode]:
    """The whole tree with examples, in two queries."""
    nodes = list(
        taxonomy.nodes.prefetch_related(
            Prefetch("examples", queryset=Example.objects.order_by("position"))
        ).order_by("position")
    )
    wrapped = {n.pk: TreeNode(n) for n in nodes}
    roots = []
    for n in nodes:
        if n.parent_id is None:
            roots.append(wrapped[n.pk])
        else:
            wrapped[n.parent_id].children.append(wrapped[n.pk])
    return roots


def taxonomy_counts(taxonomy: Taxonomy) -> dict[str, int]:
    counts = {level.value: 0 for level in Level}
    for level in taxonomy.nodes.values_list("level", flat=True):
        counts[level] += 1
    counts["examples"] = Example.objects.filter(node__taxonomy=taxonomy).count()
    return counts
