"""Reads of the interviews feature: a project's participants and quotes (searched and filtered),
the codes its quotes link that its taxonomy lacks, and the frameworks named."""

from __future__ import annotations

from dataclasses import dataclass

from django.db.models import Count, Prefetch, Q, QuerySet

from annotation.models import Project
from annotation.project_nodes import project_nodes
from taxonomy.interviews.models import Participant, Quote, QuoteLink

QUERY_MAX = 200


@dataclass(frozen=True)
class QuoteFilters:
    q: str = ""  # words in the quote, its insight or its prompt category
    node: str = ""  # a node code: quotes linked to it or to a node under it
    kind: str = ""  # ParticipantKind, or "" for both
    framework: str = ""  # words of the framework context

    @property
    def any(self) -> bool:
        return bool(self.q or self.node or self.kind or self.framework)


def project_quotes(project: Project, filters: QuoteFilters) -> QuerySet[Quote]:
    """The project's quotes matching `filters`, with participant and links in a fixed order
    (participants by kind and code, a participant's quotes as imported)."""
    quotes = Quote.objects.filter(participant__project=project)
    if filters.q:
        words = filters.q[:QUERY_MAX]
        quotes = quotes.filter(
            Q(text__icontains=words)
            | Q(insight__icontains=words)
            | Q(prompt_category__icontains=words)
        )
    if filters.kind:
        quotes = quotes.filter(participant__kind=filters.kind)
    if filters.framework:
        quotes = quotes.filter(participant__framework__icontains=filters.framework[:QUERY_MAX])
    if filters.node:
        code = filters.node[:QUERY_MAX]
        under = (
            Q(links__code=code)
            | Q(links__node__parent__code=code)
            | Q(links__node__parent__parent__code=code)
        )
        quotes = quotes.filter(under).distinct()
    links = QuoteLink.objects.select_related("node").order_by("pk")
    return (
        quotes.select_related("participant")
        .prefetch_related(Prefetch("links", queryset=links))
        .order_by("participant__kind", "participant__code", "pk")
    )


def project_participants(project: Project) -> QuerySet[Participant]:
    return (
        Participant.objects.filter(project=project)
        .annotate(
            quote_count=Count("quotes", distinct=True), ranked=Count("rankings", distinct=True)
        )
        .order_by("-kind", "pk")
    )


def project_frameworks(project: Project) -> list[str]:
    """The framework contexts the participants named, for the filter's suggestions."""
    values = Participant.objects.filter(project=project).exclude(framework="")
    return sorted(set(values.values_list("framework", flat=True)), key=str.lower)


@dataclass(frozen=True)
class UnresolvedCode:
    code: str
    links: int  # quote links written with it
    mapped_to: str  # the node code a lead mapped it to, or ""


def unresolved_codes(project: Project) -> list[UnresolvedCode]:
    """Codes the project's quotes link that its taxonomy lacks (mapped or not): one query."""
    known = project_nodes(project, live=False).values("code")
    rows = (
        QuoteLink.objects.filter(quote__participant__project=project)
        .exclude(code__in=known)
        .values_list("code", "node__code")
        .annotate(n=Count("pk"))
        .order_by("code")
    )
    merged: dict[str, UnresolvedCode] = {}
    for code, node_code, n in rows:
        before = merged.get(code)
        merged[code] = UnresolvedCode(
            code,
            n + (before.links if before else 0),
            node_code or (before and before.mapped_to) or "",
        )
    return list(merged.values())
