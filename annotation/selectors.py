"""Reads in the annotation app that are more than a filter."""

from __future__ import annotations

from dataclasses import dataclass

from django.db.models import Count

from annotation.models import Annotation, Item, Project, Resolution
from taxonomy import agreement
from taxonomy.models import Level
from taxonomy.selectors import taxonomy_codes_at, taxonomy_lineage

GROUPINGS = ("none", "type", "repository")
ALL_ITEMS = "All items"


@dataclass(frozen=True)
class GroupAgreement:
    group: str
    n_items: int
    fleiss: agreement.FleissResult | None
    alpha: agreement.AlphaResult | None
    problem: str | None  # why Fleiss' kappa could not be computed, shown beside alpha


@dataclass(frozen=True)
class AgreementReport:
    level: str
    by: str
    groups: list[GroupAgreement]


def project_agreement(project: Project, *, level: str = Level.THEME, by: str = "type") -> AgreementReport:
    """Fleiss' kappa (and Krippendorff's alpha) at one level, overall and per group.

    Labels roll up to `level` (a sub-theme label counts as its theme and type); labels coarser
    than `level` are no rating there. Groups: `type` = the type of the final label (how the study
    reports kappa), `repository` = the issue's repository.
    """
    if by not in GROUPINGS:
        raise ValueError(f"unknown grouping {by!r}; use one of {GROUPINGS}")
    depth = Level.depth_of(level)
    lineage = taxonomy_lineage(project.taxonomy)
    votes = (
        Annotation.objects.filter(item__project=project)
        .values_list("item_id", "node_id")
        .annotate(n=Count("pk"))
        .order_by()
    )
    matrix = agreement.rating_matrix(
        ((item, agreement.roll_up(node, lineage, depth), n) for item, node, n in votes),
        categories=taxonomy_codes_at(project.taxonomy, level),
    )
    if not matrix.items:
        problem = f"No labels reach {Level(level).label.lower()} depth; try a coarser level."
        return AgreementReport(level, by, [GroupAgreement(ALL_ITEMS, 0, None, None, problem)])
    groups = [_group_agreement(ALL_ITEMS, matrix)]
    if by != "none":
        group_of_item = _item_groups(project, by, lineage)
        for name, sub in agreement.split_by_group(matrix, group_of_item).items():
            groups.append(_group_agreement(name, sub))
    return AgreementReport(level=level, by=by, groups=groups)


def _item_groups(project: Project, by: str, lineage: dict[int, tuple[str, ...]]) -> dict[int, str]:
    if by == "type":
        finals = Resolution.objects.filter(item__project=project).values_list("item_id", "node_id")
        names = dict(project.taxonomy.nodes.filter(level=Level.TYPE).values_list("code", "name"))
        return {item: f"{lineage[node][0]} {names[lineage[node][0]]}" for item, node in finals}
    rows = Item.objects.filter(project=project).values_list("pk", "issue__owner", "issue__repo")
    return {pk: f"{owner}/{repo}" for pk, owner, repo in rows}


def _group_agreement(name: str, matrix: agreement.RatingMatrix) -> GroupAgreement:
    rated = int((matrix.ratings_per_item > 0).sum())
    fleiss = alpha = problem = None
    try:
        fleiss = agreement.fleiss_kappa(matrix)
    except (agreement.UnequalRatings, agreement.NotEnoughRatings) as exc:
        problem = str(exc)
    try:
        alpha = agreement.krippendorff_alpha(matrix)
    except agreement.NotEnoughRatings as exc:
        problem = problem or str(exc)
    return GroupAgreement(group=name, n_items=rated, fleiss=fleiss, alpha=alpha, problem=problem)
