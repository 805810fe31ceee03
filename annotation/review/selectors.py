"""Reads behind the lead's pages: the disputed queue, one item's review, the taxonomy picker."""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass
from urllib.parse import urlencode

from django.db.models import Count, Exists, FloatField, OuterRef, Q, QuerySet, Value
from django.db.models.functions import Coalesce

from annotation.lifecycle import majority_suggestion
from annotation.models import Annotation, AuditEvent, Item, Post, Project, Resolution, Stage
from annotation.project_nodes import project_nodes
from annotation.review.services import item_version
from taxonomy.models import Level, Node
from taxonomy.selectors import taxonomy_lineage

# Items not yet cross-checked by Concord (imported) have no agreement: they come last.
NO_AGREEMENT = 2.0


@dataclass(frozen=True)
class QueueFilters:
    """Narrow the disputed queue: items with a label under a type or theme code, or from one
    repository (`owner/repo`). Empty strings mean no filter."""

    type: str = ""
    theme: str = ""
    repository: str = ""

    @classmethod
    def from_query(cls, params) -> QueueFilters:
        return cls(
            type=params.get("type", "").strip(),
            theme=params.get("theme", "").strip(),
            repository=params.get("repository", "").strip(),
        )

    @property
    def querystring(self) -> str:
        return urlencode({k: v for k, v in vars(self).items() if v})


@dataclass(frozen=True)
class Vote:
    node_id: int
    code: str
    name: str
    n: int


def _nodes_under(project: Project, code: str) -> list[int]:
    return [pk for pk, path in taxonomy_lineage(project.taxonomy).items() if code in path]


def disputed_items(project: Project, filters: QueueFilters | None = None) -> QuerySet[Item]:
    """Disputed items, lowest agreement first (the hardest cases), then oldest."""
    filters = filters or QueueFilters()
    items = project.items.filter(stage=Stage.DISPUTED).select_related("issue")
    for code in (filters.type, filters.theme):
        if code:
            labels = Annotation.objects.filter(
                item=OuterRef("pk"), node_id__in=_nodes_under(project, code)
            )
            items = items.filter(Exists(labels))
    if filters.repository:
        owner, _, repo = filters.repository.partition("/")
        items = items.filter(issue__owner=owner, issue__repo=repo)
    return items.annotate(
        sort_agreement=Coalesce("agreement", Value(NO_AGREEMENT), output_field=FloatField())
    ).order_by("sort_agreement", "pk")


def queue_neighbours(
    project: Project, filters: QueueFilters, item: Item
) -> tuple[int | None, int | None]:
    """The items before and after `item` in the filtered queue (two indexed queries, not a
    scan). `item` itself may have left the queue (just resolved): its place is still known."""
    key = item.agreement if item.agreement is not None else NO_AGREEMENT
    queue = disputed_items(project, filters).exclude(pk=item.pk)
    after = queue.filter(Q(sort_agreement__gt=key) | Q(sort_agreement=key, pk__gt=item.pk))
    before = queue.filter(Q(sort_agreement__lt=key) | Q(sort_agreement=key, pk__lt=item.pk))
    nxt = after.values_list("pk", flat=True).first()
    prev = before.order_by("-sort_agreement", "-pk").values_list("pk", flat=True).first()
    return prev, nxt


def vote_distributions(item_ids: list[int]) -> dict[int, list[Vote]]:
    """Per item, the labels it got and how often, most common first. One query."""
    rows = (
        Annotation.objects.filter(item_id__in=item_ids)
        .values("item_id", "node_id", "node__code", "node__name")
        .annotate(n=Count("pk"))
        .order_by("item_id", "-n", "node__code")
    )
    out: dict[int, list[Vote]] = defaultdict(list)
    for r in rows:
        out[r["item_id"]].append(Vote(r["node_id"], r["node__code"], r["node__name"], r["n"]))
    return out


def queue_repositories(project: Project) -> list[str]:
    rows = (
        project.items.filter(stage=Stage.DISPUTED)
        .values_list("issue__owner", "issue__repo")
        .distinct()
        .order_by("issue__owner", "issue__repo")
    )
    return [f"{owner}/{repo}" for owner, repo in rows]


def _tree_order(nodes: list[Node]) -> list[Node]:
    """Nodes sorted as the tree shows them (positions along the lineage), so a node added later
    sits with its siblings, not at the end. The parents must be loaded (select_related)."""

    def key(node: Node | None) -> tuple[int, ...]:
        chain = []
        while node is not None:
            chain.append(node.position)
            node = node.parent
        return tuple(reversed(chain))

    return sorted(nodes, key=key)


def picker_nodes(project: Project) -> list[Node]:
    """Every live node a final label may take (the project's depth), in tree order, with its
    ancestors loaded for grouping and search."""
    nodes = (
        project_nodes(project)
        .filter(level=project.label_depth)
        .select_related("parent", "parent__parent")
    )
    return _tree_order(list(nodes))


def parent_choices(project: Project) -> list[Node]:
    """Nodes a proposed category may go under: live types and themes the project may use (not
    another project's), in tree order."""
    nodes = (
        project_nodes(project).filter(level__in=[Level.TYPE, Level.THEME]).select_related("parent")
    )
    return _tree_order(list(nodes))


@dataclass
class ItemReview:
    item: Item
    labels: list[Annotation]
    distribution: list[Vote]
    suggestion: Vote | None
    posts: list[Post]
    audit: list[AuditEvent]
    resolution: Resolution | None
    version: int


def item_review(item: Item) -> ItemReview:
    """Everything the lead weighs for one item, in a handful of queries."""
    labels = list(item.annotations.select_related("volunteer", "node").order_by("created_at", "pk"))
    distribution = vote_distributions([item.pk]).get(item.pk, [])
    suggested = majority_suggestion([a.node_id for a in labels])
    suggestion = next((v for v in distribution if v.node_id == suggested), None)
    return ItemReview(
        item=item,
        labels=labels,
        distribution=distribution,
        suggestion=suggestion,
        posts=list(item.posts.select_related("author")),
        audit=list(item.audit_events.select_related("actor")),
        resolution=Resolution.objects.filter(item=item).select_related("node", "resolver").first(),
        version=item_version(item),
    )


def annotated_queue_page(items: list[Item]) -> list[tuple[Item, list[Vote]]]:
    """A page of queue items with their vote distributions (one more query for the page)."""
    votes = vote_distributions([i.pk for i in items])
    return [(i, votes.get(i.pk, [])) for i in items]


@dataclass(frozen=True)
class QueueRow:
    """One row of the disputed queue in the API: the item and its vote distribution."""

    item: Item
    votes: list[Vote]


def queue_rows(items: list[Item]) -> list[QueueRow]:
    """annotated_queue_page as QueueRows (one more query for the page)."""
    return [QueueRow(item, votes) for item, votes in annotated_queue_page(items)]


@dataclass(frozen=True)
class VoteBar:
    y: int
    width: float
    code: str
    name: str
    n: int
    suggested: bool


@dataclass(frozen=True)
class VoteChart:
    bars: list[VoteBar]
    height: int
    left: int = 70
    scale: int = 220
    width: int = 70 + 220 + 40


def vote_chart(distribution: list[Vote], suggestion: Vote | None) -> VoteChart:
    """Bars for an item's vote distribution; each bar carries its count as text."""
    top = max((v.n for v in distribution), default=1)
    bars = [
        VoteBar(
            y=8 + i * 26,
            width=220 * v.n / top,
            code=v.code,
            name=v.name,
            n=v.n,
            suggested=suggestion is not None and v.node_id == suggestion.node_id,
        )
        for i, v in enumerate(distribution)
    ]
    return VoteChart(bars=bars, height=16 + 26 * len(bars))
