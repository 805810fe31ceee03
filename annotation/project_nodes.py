"""The nodes a project may use: ONE rule, for every place that offers or accepts a node.

Projects may share a taxonomy. A category a project adds through an accepted proposal
(annotation.review.proposals) is recorded as a ProjectNode and belongs to that project only. So
the nodes a project may use are its taxonomy's nodes minus those other projects added, and
anything under them. `foreign_nodes` is the rule; the other functions here are its shapes
(a lazy queryset, a set of ids for the picker's cache key, a yes/no for one node).
"""

from __future__ import annotations

from django.db.models import Exists, IntegerField, OuterRef, Q, QuerySet, Value

from annotation.models import Project, ProjectNode
from taxonomy.models import Node


def foreign_nodes(project: Project) -> QuerySet[Node]:
    """Nodes of the project's taxonomy that other projects added, with what lies under them (the
    taxonomy is three levels deep: a node's parent and grandparent cover every ancestor). Lazy:
    used as a subquery it costs no query of its own."""
    added = (
        ProjectNode.objects.filter(node__taxonomy_id=project.taxonomy_id)
        .exclude(project_id=project.pk)
        .values("node_id")
    )
    return Node.objects.filter(taxonomy_id=project.taxonomy_id).filter(
        Q(pk__in=added) | Q(parent_id__in=added) | Q(parent__parent_id__in=added)
    )


def foreign_node_ids(project: Project) -> frozenset[int]:
    """foreign_nodes as a set of ids (one query), e.g. for taxonomy.selectors.label_picker."""
    return frozenset(foreign_nodes(project).values_list("pk", flat=True))


def project_nodes(project: Project, *, live: bool = True) -> QuerySet[Node]:
    """The nodes `project` may use: its taxonomy's nodes, not retired (`live`), minus
    foreign_nodes. `live=False` keeps retired nodes, for lists of what labels may already carry
    (filters, reports)."""
    nodes = Node.objects.filter(taxonomy_id=project.taxonomy_id).exclude(
        pk__in=foreign_nodes(project).values("pk")
    )
    return nodes.filter(retired_at__isnull=True) if live else nodes


def with_foreign_flag(nodes: QuerySet[Node], project: Project) -> QuerySet[Node]:
    """`nodes` annotated with whether each is foreign to `project`, so that node_is_foreign
    costs no query of its own for them."""
    return nodes.annotate(
        foreign_for=Value(project.pk, output_field=IntegerField()),
        is_foreign=Exists(foreign_nodes(project).filter(pk=OuterRef("pk"))),
    )


def node_is_foreign(project: Project, node: Node) -> bool:
    """Whether another project added `node` (or a node above it). A node loaded through
    with_foreign_flag for this project answers from its annotation; any other costs one query."""
    if getattr(node, "foreign_for", None) == project.pk:
        return bool(node.is_foreign)  # type: ignore[attr-defined]
    return foreign_nodes(project).filter(pk=node.pk).exists()
