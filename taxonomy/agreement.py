"""Inter-rater agreement as pure functions on rating matrices (numpy + statsmodels, no Django).

A rating matrix has one row per item and one column per category; a cell counts the raters who
put that item in that category. Fleiss' kappa comes from statsmodels (the study's own tool);
around it we add what a report needs: observed and expected agreement, per-category kappa, the
standard error and a 95% confidence interval (Fleiss, Nee & Landis 1979, the large-sample
variance under the null hypothesis of chance agreement, as in Fleiss' "Statistical Methods for
Rates and Proportions"), and Krippendorff's alpha for items with missing ratings.
"""

from __future__ import annotations

import math
from collections.abc import Hashable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from itertools import compress
from operator import itemgetter

import numpy as np

# statsmodels is imported where a kappa is computed, not at the top: it brings scipy and pandas,
# about 100 MB in every web and worker process, most of which never compute a kappa.

Z_95 = 1.959963984540054

# Landis & Koch (1977): upper bounds of each band, in order.
LANDIS_KOCH_BANDS = (
    (0.0, "poor"),
    (0.20, "slight"),
    (0.40, "fair"),
    (0.60, "moderate"),
    (0.80, "substantial"),
    (1.0, "almost perfect"),
)


class UnequalRatings(ValueError):
    """Fleiss' kappa needs the same number of ratings on every item."""

    def __init__(self, ratings_per_item: Mapping[int, int]) -> None:
        self.ratings_per_item = dict(sorted(ratings_per_item.items(), reverse=True))
        spread = ", ".join(f"{n} items have {r}" for r, n in self.ratings_per_item.items())
        super().__init__(
            "Fleiss' kappa needs the same number of ratings on every item, but "
            f"{spread} ratings. Krippendorff's alpha allows missing ratings."
        )


class NotEnoughRatings(ValueError):
    """Agreement is undefined with fewer than two items or two ratings per item."""


class NoVariation(NotEnoughRatings):
    """Every rating falls in one category: chance agreement is 1, so kappa and alpha are 0/0."""

    def __init__(self, category: str) -> None:
        self.category = category
        super().__init__(
            f"Every rating is {category!r}: agreement is total but kappa and alpha are undefined "
            "(chance agreement is 1 too)."
        )


@dataclass(frozen=True)
class RatingMatrix:
    items: tuple[Hashable, ...]
    categories: tuple[str, ...]
    counts: np.ndarray  # shape (len(items), len(categories)), integer

    @property
    def ratings_per_item(self) -> np.ndarray:
        return self.counts.sum(axis=1)

    def subset(self, mask: np.ndarray) -> RatingMatrix:
        if len(mask) != len(self.items):
            raise ValueError("mask and items differ in length")
        items = tuple(compress(self.items, mask))
        return RatingMatrix(items, self.categories, self.counts[mask])


@dataclass(frozen=True)
class FleissResult:
    kappa: float
    observed: float
    expected: float
    se: float
    ci_low: float
    ci_high: float
    n_items: int
    n_raters: int
    per_category: dict[str, float] = field(default_factory=dict)

    @property
    def band(self) -> str:
        return landis_koch_band(self.kappa)


@dataclass(frozen=True)
class AlphaResult:
    alpha: float
    n_items: int
    n_ratings: int
    items_left_out: int  # items with fewer than two ratings carry no information on agreement

    @property
    def band(self) -> str:
        return landis_koch_band(self.alpha)


def landis_koch_band(value: float) -> str:
    if math.isnan(value):
        return "undefined"
    for upper, name in LANDIS_KOCH_BANDS:
        if value <= upper:
            return name
    return LANDIS_KOCH_BANDS[-1][1]


def rating_matrix(
    rows: Iterable[tuple[Hashable, str | None, int]],
    categories: Sequence[str] | None = None,
) -> RatingMatrix:
    """Pivot long rows `(item, category, count)` into a matrix. `None` categories are no rating."""
    rows = [(item, cat, n) for item, cat, n in rows if cat is not None and n]
    # columns, and index lookups through map(): C loops, which matters at study scale (~85k rows)
    item_col, cat_col, n_col = (list(map(itemgetter(k), rows)) for k in range(3))
    items = tuple(dict.fromkeys(item_col))
    used = set(cat_col)
    cats = tuple(categories) if categories is not None else tuple(sorted(used))
    item_index = dict(zip(items, range(len(items)), strict=True))
    cat_index = dict(zip(cats, range(len(cats)), strict=True))
    counts = np.zeros((len(items), len(cats)), dtype=np.int64)
    if rows:
        unknown = used - cat_index.keys()
        if unknown:
            raise ValueError(f"ratings use categories outside the list: {sorted(unknown)}")
        r = np.fromiter(map(item_index.__getitem__, item_col), dtype=np.int64, count=len(rows))
        c = np.fromiter(map(cat_index.__getitem__, cat_col), dtype=np.int64, count=len(rows))
        n = np.fromiter(n_col, dtype=np.int64, count=len(rows))
        np.add.at(counts, (r, c), n)
    return RatingMatrix(items, cats, counts)


def rating_matrix_from_labels(
    items: np.ndarray,
    labels: np.ndarray,
    category_of: Mapping[int, str | None],
    categories: Sequence[str] | None = None,
) -> RatingMatrix:
    """rating_matrix for one entry per label, vectorised for study-scale projects (~270k labels):
    item `items[k]` got label `labels[k]` (an int, e.g. a node id), which counts as category
    `category_of[labels[k]]` (None: no rating). Items come out in ascending order."""
    distinct, which = np.unique(labels, return_inverse=True)
    category_of_distinct = [category_of[label] for label in distinct.tolist()]
    used = {c for c in category_of_distinct if c is not None}
    cats = tuple(categories) if categories is not None else tuple(sorted(used))
    cat_index = {cat: j for j, cat in enumerate(cats)}
    unknown = used - cat_index.keys()
    if unknown:
        raise ValueError(f"ratings use categories outside the list: {sorted(unknown)}")
    column_of_distinct = [-1 if c is None else cat_index[c] for c in category_of_distinct]
    column = np.array(column_of_distinct, dtype=np.int64)[which.reshape(-1)]
    rated = column >= 0
    item_ids, row = np.unique(np.asarray(items)[rated], return_inverse=True)
    counts = np.zeros((len(item_ids), len(cats)), dtype=np.int64)
    np.add.at(counts, (row.reshape(-1), column[rated]), 1)
    return RatingMatrix(tuple(item_ids.tolist()), cats, counts)


def roll_up(code: str | None, lineage: Mapping[str, Sequence[str]], depth: int) -> str | None:
    """The ancestor of `code` at `depth` (1 = type); None if the label is coarser than that."""
    if code is None:
        return None
    path = lineage[code]
    return path[depth - 1] if len(path) >= depth else None


def fleiss_kappa(matrix: RatingMatrix) -> FleissResult:
    counts = matrix.counts
    counts = counts[counts.sum(axis=1) > 0]
    per_item = counts.sum(axis=1)
    if len(counts) < 2:
        raise NotEnoughRatings(
            f"Agreement needs at least two rated items; there are {len(counts)}."
        )
    spread = np.unique(per_item, return_counts=True)
    if len(spread[0]) > 1:
        raise UnequalRatings({int(r): int(n) for r, n in zip(*spread, strict=True)})
    m = int(per_item[0])
    if m < 2:
        raise NotEnoughRatings("Agreement needs at least two ratings per item; each has one.")
    _require_variation(matrix.categories, counts)
    n_items = len(counts)

    p = counts.sum(axis=0) / (n_items * m)  # share of all ratings in each category
    observed = float(((counts * (counts - 1)).sum(axis=1) / (m * (m - 1))).mean())
    expected = float((p**2).sum())
    from statsmodels.stats.inter_rater import fleiss_kappa  # lazily: see the imports above

    kappa = float(fleiss_kappa(counts, method="fleiss"))

    pq = p * (1 - p)
    sum_pq = float(pq.sum())
    variance_term = float(sum_pq**2 - (pq * (1 - 2 * p)).sum())
    se = math.sqrt(2 / (n_items * m * (m - 1))) * math.sqrt(variance_term) / sum_pq
    with np.errstate(divide="ignore", invalid="ignore"):
        disagreement = (counts * (m - counts)).sum(axis=0) / (n_items * m * (m - 1) * pq)
    per_category = {
        cat: float(1 - d)
        for cat, d, share in zip(matrix.categories, disagreement, p, strict=True)
        if share > 0
    }
    return FleissResult(
        kappa=kappa,
        observed=observed,
        expected=expected,
        se=se,
        # kappa +- 1.96 standard errors (the large-sample error of Fleiss, Nee and Landis 1979),
        # clipped to the range kappa can take: a bound past 1 or -1 claims nothing
        ci_low=max(-1.0, kappa - Z_95 * se),
        ci_high=min(1.0, kappa + Z_95 * se),
        n_items=n_items,
        n_raters=m,
        per_category=per_category,
    )


def krippendorff_alpha(matrix: RatingMatrix) -> AlphaResult:
    """Nominal alpha; items with fewer than two ratings are left out (and counted)."""
    per_item = matrix.ratings_per_item
    pairable = per_item >= 2
    counts = matrix.counts[pairable]
    if len(counts) < 1 or counts.sum() == 0:
        raise NotEnoughRatings("Krippendorff's alpha needs at least one item with two ratings.")
    _require_variation(matrix.categories, counts)
    alpha = _nominal_alpha(counts)
    return AlphaResult(
        alpha=alpha,
        n_items=len(counts),
        n_ratings=int(counts.sum()),
        items_left_out=int((~pairable & (per_item > 0)).sum()),
    )


def _nominal_alpha(counts: np.ndarray) -> float:
    """Nominal alpha from value counts, the computation of
    `krippendorff.alpha(value_counts=counts, level_of_measurement="nominal")` (same coincidence
    matrix, expected coincidences and distances), with one matrix product in place of the
    package's items x categories x categories temporaries: at study scale (38,742 items, 18
    themes) that was ~0.3 s and ~400 MB per call. Equal to the package within rounding."""
    counts = counts.astype(np.float64)
    weights = 1 / (np.maximum(counts.sum(axis=1), 2) - 1)  # 1 / (m_u - 1)
    weighted = counts * weights[:, np.newaxis]
    observed = weighted.T @ counts - np.diag(weighted.sum(axis=0))  # o_ck
    n_v = observed.sum(axis=0)
    expected = (np.outer(n_v, n_v) - np.diagflat(n_v)) / (n_v.sum() - 1)  # e_ck
    distance = 1 - np.eye(len(n_v))  # nominal: 0 on the diagonal, 1 elsewhere
    return float(1 - (observed * distance).sum() / (expected * distance).sum())


def _require_variation(categories: Sequence[str], counts: np.ndarray) -> None:
    used = np.flatnonzero(counts.sum(axis=0))
    if len(used) == 1:
        raise NoVariation(categories[int(used[0])])


def split_by_group(
    matrix: RatingMatrix, group_of_item: Mapping[Hashable, str | None]
) -> dict[str, RatingMatrix]:
    """One matrix per group (e.g. per final type); items without a group are left out."""
    groups = np.array([group_of_item.get(item) or "" for item in matrix.items], dtype=object)
    return {str(g): matrix.subset(groups == g) for g in sorted(set(groups.tolist())) if g != ""}


def cohens_kappa(a: Sequence[Hashable] | np.ndarray, b: Sequence[Hashable] | np.ndarray) -> float:
    """Cohen's kappa of two raters over the same items (`a[i]` and `b[i]` rate item i), from
    statsmodels' `cohens_kappa` on their contingency table. NotEnoughRatings with fewer than two
    items; NoVariation when both put every item in one category (chance agreement is 1)."""
    a, b = np.asarray(a), np.asarray(b)
    if a.shape != b.shape or a.ndim != 1:
        raise ValueError("the two raters must rate the same items")
    if len(a) < 2:
        raise NotEnoughRatings(
            f"Cohen's kappa needs at least two shared items; there are {len(a)}."
        )
    categories, index = np.unique(np.concatenate([a, b]), return_inverse=True)
    k = len(categories)
    if k == 1:
        raise NoVariation(str(categories[0]))
    index = index.reshape(-1)
    table = np.bincount(index[: len(a)] * k + index[len(a) :], minlength=k * k).reshape(k, k)
    from statsmodels.stats.inter_rater import cohens_kappa  # lazily: see the imports above

    return float(cohens_kappa(table, return_results=False))
