"""A project's agreement (Fleiss' kappa, Krippendorff's alpha), overall and per group, and the
label fetches the reports and statistics share (fetch_rows, label_arrays, grouped_arrays).

agreement_cell is the one place a rating matrix becomes kappa and alpha: the agreement page, its
API, `manage.py agreement` (all through project_agreement) and the Reports dashboard
(annotation.reporting.reports) call it, so they give the same answer.

Fleiss' kappa needs the same number of ratings on every item. Where coverage is uneven,
agreement_cell computes Fleiss on the items that have the full number of ratings at that level
(the project's k if enough items have it, else the most common count), says how many items were
left out and why, and gives Krippendorff's alpha on every item with two ratings or more beside it.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from itertools import chain

import numpy as np
from django.db import connections
from django.db.models import QuerySet
from django.utils.translation import gettext as _
from django.utils.translation import ngettext

from annotation.models import Annotation, Item, Project, Resolution
from taxonomy import agreement
from taxonomy.models import Level
from taxonomy.selectors import taxonomy_codes_at, taxonomy_lineage

GROUPINGS = ("none", "type", "repository")
ALL_ITEMS = "All items"


def level_label(level: str) -> str:
    return Level(level).label.lower()


@dataclass(frozen=True)
class Cell:
    """Agreement of one group of items at one level.

    `fleiss` is computed on the items with exactly `ratings` ratings at this level; `left_out`
    of the rated items are not among them, for the reason in `left_out_why`. `alpha` covers
    every item with at least two ratings. `problem` says why there is no Fleiss' kappa."""

    group: str
    level: str
    n_items: int  # items with at least one rating at this level
    fleiss: agreement.FleissResult | None
    alpha: agreement.AlphaResult | None
    ratings: int | None
    left_out: int
    left_out_why: str
    problem: str | None
    # not a finding: the type-level kappa of items that share their final type (see group_cell)
    omitted: bool = False

    @property
    def kappa(self) -> float | None:
        return self.fleiss.kappa if self.fleiss else None

    @property
    def ci_low(self) -> float | None:
        return self.fleiss.ci_low if self.fleiss else None

    @property
    def ci_high(self) -> float | None:
        return self.fleiss.ci_high if self.fleiss else None

    @property
    def se(self) -> float | None:
        return self.fleiss.se if self.fleiss else None

    @property
    def band(self) -> str | None:
        return self.fleiss.band if self.fleiss else None

    @property
    def fleiss_items(self) -> int:
        return self.fleiss.n_items if self.fleiss else 0

    @property
    def alpha_value(self) -> float | None:
        return self.alpha.alpha if self.alpha else None

    @property
    def alpha_band(self) -> str | None:
        return self.alpha.band if self.alpha else None

    @property
    def uneven(self) -> bool:
        """Items with different numbers of ratings: alpha is the figure that covers them all."""
        return self.left_out > 0


# The name the agreement page, API and command used for a group's row: it is a Cell.
GroupAgreement = Cell


@dataclass(frozen=True)
class AgreementReport:
    level: str
    by: str
    groups: list[Cell]


def _ratings_for_fleiss(per_item: np.ndarray, k: int) -> int:
    """How many ratings an item needs to count in Fleiss' kappa: the project's k when at least
    two items have exactly k ratings, otherwise the most common count (ties: the larger)."""
    if int((per_item == k).sum()) >= 2:
        return k
    values, counts = np.unique(per_item, return_counts=True)
    best = counts.max()
    return int(values[counts == best].max())


def agreement_cell(group: str, level: str, matrix: agreement.RatingMatrix, *, k: int) -> Cell:
    """Fleiss' kappa on the items with the full number of ratings, alpha on all; both explained.
    The only function that turns a rating matrix into the kappa and alpha Concord shows."""
    per_item = matrix.counts.sum(axis=1)
    rated = per_item > 0
    n_items = int(rated.sum())
    if n_items == 0:
        no_rating = _("No labels reach %(level)s level; try a coarser level.") % {
            "level": level_label(level)
        }
        return Cell(group, level, 0, None, None, None, 0, "", no_rating)
    m = _ratings_for_fleiss(per_item[rated], k)
    full = per_item == m
    fewer = int((rated & (per_item < m)).sum())
    more = int((per_item > m).sum())
    why = []
    if fewer:
        why.append(
            ngettext(
                "%(n)d item has fewer than %(m)d labels at %(level)s level",
                "%(n)d items have fewer than %(m)d labels at %(level)s level",
                fewer,
            )
            % {"n": fewer, "m": m, "level": level_label(level)}
        )
    if more:
        why.append(
            ngettext(
                "%(n)d item has more than %(m)d labels",
                "%(n)d items have more than %(m)d labels",
                more,
            )
            % {"n": more, "m": m}
        )
    fleiss: agreement.FleissResult | None = None
    alpha: agreement.AlphaResult | None = None
    problem: str | None = None
    counted = matrix if fewer + more == 0 else matrix_subset(matrix, full)
    try:
        fleiss = agreement.fleiss_kappa(counted)
    except agreement.NotEnoughRatings as exc:
        problem = problem_words(exc, items=len(counted.items), ratings=m)
    try:
        alpha = agreement.krippendorff_alpha(matrix)
    except agreement.NotEnoughRatings as exc:
        problem = problem or problem_words(exc, items=n_items, ratings=m)
    return Cell(
        group=group,
        level=level,
        n_items=n_items,
        fleiss=fleiss,
        alpha=alpha,
        ratings=m,
        left_out=fewer + more,
        left_out_why="; ".join(why),
        problem=problem,
    )


def problem_words(exc: agreement.NotEnoughRatings, *, items: int, ratings: int) -> str:
    """Why there is no kappa, in the reader's language (taxonomy.agreement, which knows no
    Django, says it in English)."""
    if isinstance(exc, agreement.NoVariation):
        return _(
            "Every rating is %(category)s: agreement is total but kappa and alpha are undefined "
            "(chance agreement is 1 too)."
        ) % {"category": exc.category}
    if items < 2:
        return _("Agreement needs at least two rated items; there are %(n)d.") % {"n": items}
    if ratings < 2:
        return _("Agreement needs at least two ratings per item; each has one.")
    return _("Krippendorff's alpha needs at least one item with two ratings.")


def group_cell(by: str, group: str, level: str, matrix: agreement.RatingMatrix, *, k: int) -> Cell:
    """A group's agreement_cell, except the type-level cell of a group of items sharing their
    final type: there nearly every label is that type, chance agreement is nearly 1 and kappa
    nears 0 however well volunteers agree, so it is shown as not computed, with the reason,
    rather than as a finding."""
    if by == "type" and level == Level.TYPE and group != ALL_ITEMS:
        n_items = int((matrix.counts.sum(axis=1) > 0).sum())
        why = _(
            "Not computed: these items share their final type, so at type level kappa measures "
            "chance, not agreement."
        )
        return Cell(group, level, n_items, None, None, None, 0, "", why, omitted=True)
    return agreement_cell(group, level, matrix, k=k)


def matrix_subset(matrix: agreement.RatingMatrix, mask: np.ndarray) -> agreement.RatingMatrix:
    """RatingMatrix.subset without its per-item Python loop: the reports keep item ids as a
    numpy array (RatingMatrix only ever iterates over them), which at study scale and ~130
    subsets saves a few hundred milliseconds."""
    items = np.asarray(matrix.items, dtype=np.int64)[mask]
    return agreement.RatingMatrix(items, matrix.categories, matrix.counts[mask])


def item_ids(matrix: agreement.RatingMatrix) -> np.ndarray:
    """The matrix's item ids as the int64 array the reports keep there (see matrix_subset): the
    array itself, typed as one (RatingMatrix declares a tuple)."""
    return np.asarray(matrix.items, dtype=np.int64)


def rolled_up(lineage: Mapping[int, Sequence[str]], depth: int) -> dict[int, str | None]:
    """node id -> its code at `depth` (agreement.roll_up; None for nodes coarser than that).
    roll_up looks codes up, and a code names one node of its taxonomy."""
    by_code = {path[-1]: path for path in lineage.values()}
    return {node: agreement.roll_up(path[-1], by_code, depth) for node, path in lineage.items()}


def project_agreement(
    project: Project, *, level: str = Level.THEME, by: str = "type"
) -> AgreementReport:
    """Fleiss' kappa (and Krippendorff's alpha) at one level, overall and per group, each an
    agreement_cell (as on the Reports dashboard).

    Labels roll up to `level` (a sub-theme label counts as its theme and type); labels coarser
    than `level` are no rating there. Groups: `type` = the type of the final label (how the study
    reports kappa), `repository` = the issue's repository; a group without a rating at `level`
    is left out.
    """
    if by not in GROUPINGS:
        raise ValueError(f"unknown grouping {by!r}; use one of {GROUPINGS}")
    depth = Level.depth_of(level)
    lineage = taxonomy_lineage(project.taxonomy)
    # node id -> its code at `level`; labels on coarser nodes are no rating there, so the query
    # leaves them out (the same result as rolling them up to None, without fetching them)
    rolled = rolled_up(lineage, depth)
    # A pilot label is the lead's worked example, one rater on its item: no agreement to measure.
    labels = Annotation.objects.filter(item__project=project, is_pilot=False)
    if None in rolled.values():
        labels = labels.filter(node_id__in=[node for node, code in rolled.items() if code])
    items, nodes = label_arrays(labels)
    m = agreement.rating_matrix_from_labels(
        items, nodes, rolled, categories=taxonomy_codes_at(project.taxonomy, level)
    )
    # item ids as a numpy array (see matrix_subset)
    matrix = agreement.RatingMatrix(np.array(m.items, dtype=np.int64), m.categories, m.counts)  # type: ignore[arg-type]
    k = project.overlap_k
    groups = [agreement_cell(ALL_ITEMS, level, matrix, k=k)]
    if by != "none" and len(matrix.items):
        for name, ids in sorted(group_items(project, by, lineage).items()):
            mask = np.isin(item_ids(matrix), ids)
            if mask.any():
                groups.append(group_cell(by, name, level, matrix_subset(matrix, mask), k=k))
    return AgreementReport(level=level, by=by, groups=groups)


def group_items(
    project: Project, by: str, lineage: dict[int, tuple[str, ...]]
) -> dict[str, np.ndarray]:
    """Group name -> its item ids: `type` = the final label's type, `repository` = owner/repo.
    One aggregate query on PostgreSQL (a row per final node or per repository); elsewhere
    item_groups, inverted."""
    if connections[Item.objects.db].vendor != "postgresql":
        inverted: dict[str, list[int]] = defaultdict(list)
        for item, group in item_groups(project, by, lineage).items():
            inverted[group].append(item)
        return {g: np.array(ids, dtype=np.int64) for g, ids in inverted.items()}
    from django.contrib.postgres.aggregates import ArrayAgg

    grouped: dict[str, list[int]] = defaultdict(list)
    if by == "type":
        finals = Resolution.objects.filter(item__project=project).values_list("node_id")
        names = dict(project.taxonomy.nodes.filter(level=Level.TYPE).values_list("code", "name"))
        for node, ids in fetch_rows(finals.annotate(ids=ArrayAgg("item_id")).order_by()):
            code = lineage[node][0]
            grouped[f"{code} {names[code]}"].extend(ids)
    else:
        repos = Item.objects.filter(project=project).values_list("issue__owner", "issue__repo")
        for owner, repo, ids in fetch_rows(repos.annotate(ids=ArrayAgg("pk")).order_by()):
            grouped[f"{owner}/{repo}"].extend(ids)
    return {g: np.array(ids, dtype=np.int64) for g, ids in grouped.items()}


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
