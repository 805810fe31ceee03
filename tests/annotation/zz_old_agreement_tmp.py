"""A project's agreement (Fleiss' kappa, Krippendorff's alpha), overall and per group, and the
label fetches the reports and statistics share (fetch_rows, label_arrays, grouped_arrays)."""

from __future__ import annotations

from dataclasses import dataclass
from itertools import chain

import numpy as np
from django.db import connections
from django.db.models import QuerySet

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


def project_agreement(
    project: Project, *, level: str = Level.THEME, by: str = "type"
) -> AgreementReport:
    """Fleiss' kappa (and Krippendorff's alpha) at one level, overall and per group.

    Labels roll up to `level` (a sub-theme label counts as its theme and type); labels coarser
    than `level` are no rating there. Groups: `type` = the type of the final label (how the study
    reports kappa), `repository` = the issue's repository.
    """
    if by not in GROUPINGS:
        raise ValueError(f"unknown grouping {by!r}; use one of {GROUPINGS}")
    depth = Level.depth_of(level)
    lineage = taxonomy_lineage(project.taxonomy)
    # node id -> its code at `level`; labels on coarser nodes are no rating there, so the query
    # leaves them out (the same result as rolling them up to None, without fetching them)
    rolled = {node: agreement.roll_up(node, lineage, depth) for node in lineage}
    # A pilot label is the lead's worked example, one rater on its item: no agreement to measure.
    labels = Annotation.objects.filter(item__project=project, is_pilot=False)
    if None in rolled.values():
        labels = labels.filter(node_id__in=[node for node, code in rolled.items() if code])
    items, nodes = label_arrays(labels)
    matrix = agreement.rating_matrix_from_labels(
        items, nodes, rolled, categories=taxonomy_codes_at(project.taxonomy, level)
    )
    if not matrix.items:
        problem = f"No labels reach {Level(level).label.lower()} depth; try a coarser level."
        return AgreementReport(level, by, [GroupAgreement(ALL_ITEMS, 0, None, None, problem)])
    groups = [_group_agreement(ALL_ITEMS, matrix)]
    if by != "none":
        group_of_item = item_groups(project, by, lineage)
        for name, sub in agreement.split_by_group(matrix, group_of_item).items():
            groups.append(_group_agreement(name, sub))
    return AgreementReport(level=level, by=by, groups=groups)


def item_groups(project: Project, by: str, lineage: dict[int, tuple[str, ...]]) -> dict[int, str]:
    if by == "type":
        finals = fetch_rows(
            Resolution.objects.filter(item__project=project).values_list("item_id", "node_id")
        )
        names = dict(project.taxonomy.nodes.filter(level=Level.TYPE).values_list("code", "name"))
        group_of_node = {
            node: f"{lineage[node][0]} {names[lineage[node][0]]}" for node in {n for _, n in finals}
        }
        return {item: group_of_node[node] for item, node in finals}
    rows = Item.objects.filter(project=project).values_list("pk", "issue__owner", "issue__repo")
    return {pk: f"{owner}/{repo}" for pk, owner, repo in rows}


def label_arrays(labels: QuerySet) -> tuple[np.ndarray, np.ndarray]:
    """Item id and node id of every annotation in `labels`, as two aligned arrays. PostgreSQL
    groups the item ids by node (one row per node, not per label: half the time at study scale)."""
    if connections[labels.db].vendor == "postgresql":
        nodes, items = grouped_arrays(labels, "node_id", "item_id")
        return items, nodes
    rows = fetch_rows(labels.values_list("item_id", "node_id"))
    flat = np.fromiter(chain.from_iterable(rows), dtype=np.int64, count=2 * len(rows))
    return flat[0::2], flat[1::2]


def grouped_arrays(rows: QuerySet, key: str, value) -> tuple[np.ndarray, np.ndarray]:
    """PostgreSQL only: the integer `value` (a field or expression) of every row, fetched as one
    array per `key` (a few hundred result rows instead of 270k at study scale); returns the keys
    repeated and the values, as two aligned int64 arrays."""
    from django.contrib.postgres.aggregates import ArrayAgg

    per_key = fetch_rows(rows.values_list(key).annotate(values=ArrayAgg(value)).order_by())
    sizes = [len(values) for _, values in per_key]
    values = np.fromiter(
        chain.from_iterable(values for _, values in per_key), dtype=np.int64, count=sum(sizes)
    )
    keys = np.repeat(np.array([k for k, _ in per_key], dtype=np.int64), sizes)
    return keys, values


def fetch_rows(rows: QuerySet) -> list[tuple]:
    """A values_list query's rows straight from the cursor: the same tuples of ints, without
    Django's per-row converters (a third of the time at study scale)."""
    sql, params = rows.query.sql_with_params()
    with connections[rows.db].cursor() as cursor:
        cursor.execute(sql, params)
        return cursor.fetchall()


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
