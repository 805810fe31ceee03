"""Inter-rater agreement as pure functions on rating matrices (numpy + statsmodels, no Django).

A rating matrix has one row per item and one column per category; a cell counts the raters who
put that item in that category. Fleiss' kappa is statsmodels' (the study's own tool; the tests
hold ours to it), computed from a RatingTally, the matrix's sums, which a project can keep up
to date label by label. Around it we add what a report needs: observed and expected agreement,
per-category kappa, the standard error and a 95% confidence interval (Fleiss, Nee & Landis
1979, the large-sample variance under the null hypothesis of chance agreement, as in Fleiss'
"Statistical Methods for Rates and Proportions"), and Krippendorff's alpha for items with
missing ratings.
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


def roll_up(code: str | None, lineage: Mapping[str, Sequence[str]], depth: int) -> str | None:
    """The ancestor of `code` at `depth` (1 = type); None if the label is coarser than that."""
    if code is None:
        return None
    path = lineage[code]
    return path[depth - 1] if len(path) >= depth else None


@dataclass(frozen=True)
class RatingTally:
    """What Fleiss' kappa and nominal alpha need of a rating matrix, summed over its items and
    kept apart by the number of ratings an item has (row r: the items with `ratings[r]`
    ratings): how many such items, and per category the ratings they got (`totals`, sum of
    n_ij) and the sum of their squares (`squares`, sum of n_ij**2).

    Additive: the tally of two sets of items is the sum of their tallies, and an item's change
    is its new tally minus its old. So a project can keep its tallies up to date label by
    label (annotation.figures.tallies) instead of reading every label for each figure."""

    categories: tuple[str, ...]
    ratings: np.ndarray  # (r,) ints >= 1, ascending, distinct
    items: np.ndarray  # (r,)
    totals: np.ndarray  # (r, len(categories))
    squares: np.ndarray  # (r, len(categories))

    @classmethod
    def empty(cls, categories: Sequence[str]) -> RatingTally:
        none = np.zeros((0, len(categories)), dtype=np.int64)
        no = np.zeros(0, dtype=np.int64)
        return cls(tuple(categories), no, no, none, none.copy())

    @property
    def n_items(self) -> int:
        return int(self.items.sum())

    def rows(self, mask: np.ndarray) -> RatingTally:
        return RatingTally(
            self.categories,
            self.ratings[mask],
            self.items[mask],
            self.totals[mask],
            self.squares[mask],
        )


def tally_of(matrix: RatingMatrix) -> RatingTally:
    """The matrix's RatingTally (items without a rating count nowhere)."""
    rows, columns = np.nonzero(matrix.counts)
    rated = matrix.counts.sum(axis=1) > 0
    group = np.where(rated, 0, -1)
    tallies = tallies_of_pairs(
        rows, columns, matrix.counts[rows, columns], group, 1, matrix.categories
    )
    return tallies[0]


def tallies_of_pairs(
    item: np.ndarray,
    column: np.ndarray,
    n: np.ndarray,
    group: np.ndarray,
    groups: int,
    categories: Sequence[str],
) -> list[RatingTally]:
    """The RatingTally of each of `groups` groups of items, from a sparse rating matrix: item
    `item[j]` (0, 1, ... len(group) - 1) has `n[j]` ratings in category `column[j]`, each
    (item, column) once; `group[i]` is item i's group (-1: none). Counting with bincount, never
    a dense matrix: a 10x project's sub-theme matrix would be 387,420 x 90."""
    c = len(categories)
    n = np.asarray(n, dtype=np.int64)
    per_item = np.bincount(item, weights=n, minlength=len(group)).astype(np.int64)
    counted = (group >= 0) & (per_item > 0)
    ratings, rating_index = np.unique(per_item[counted], return_inverse=True)
    r = len(ratings)
    cell = np.full(len(group), -1, dtype=np.int64)  # item -> group * r + its rating index
    cell[counted] = group[counted] * r + rating_index.reshape(-1)
    items = np.bincount(cell[counted], minlength=groups * r).reshape(groups, r)
    pair_cell = cell[item]
    kept = pair_cell >= 0
    at = pair_cell[kept] * c + np.asarray(column)[kept]
    weights = n[kept].astype(np.float64)  # exact: counts are far below 2**53
    totals = np.bincount(at, weights=weights, minlength=groups * r * c)
    squares = np.bincount(at, weights=weights * weights, minlength=groups * r * c)
    totals = totals.round().astype(np.int64).reshape(groups, r, c)
    squares = squares.round().astype(np.int64).reshape(groups, r, c)
    out = []
    for g in range(groups):
        present = items[g] > 0
        out.append(
            RatingTally(
                tuple(categories),
                ratings[present].astype(np.int64),
                items[g][present].astype(np.int64),
                totals[g][present],
                squares[g][present],
            )
        )
    return out


def fleiss_kappa(matrix: RatingMatrix) -> FleissResult:
    """Fleiss' kappa of a matrix whose rated items all have the same number of ratings."""
    tally = tally_of(matrix)
    if len(tally.ratings) > 1:
        raise UnequalRatings(dict(zip(tally.ratings.tolist(), tally.items.tolist(), strict=True)))
    if tally.n_items < 2:
        raise NotEnoughRatings(
            f"Agreement needs at least two rated items; there are {tally.n_items}."
        )
    return fleiss_kappa_of(tally, int(tally.ratings[0]))


def fleiss_kappa_of(tally: RatingTally, m: int) -> FleissResult:
    """Fleiss' kappa of the tally's items with exactly `m` ratings: statsmodels' `fleiss_kappa`
    (method="fleiss"), which the tests hold it to, computed from sums instead of the matrix."""
    row = np.flatnonzero(tally.ratings == m)
    n_items = int(tally.items[row].sum()) if len(row) else 0
    if n_items < 2:
        raise NotEnoughRatings(f"Agreement needs at least two rated items; there are {n_items}.")
    if m < 2:
        raise NotEnoughRatings("Agreement needs at least two ratings per item; each has one.")
    totals = tally.totals[row[0]].astype(np.float64)
    squares = tally.squares[row[0]].astype(np.float64)
    _require_variation(tally.categories, totals)

    p = totals / (n_items * m)  # share of all ratings in each category
    observed = float((squares.sum() - n_items * m) / (n_items * m * (m - 1)))
    expected = float((p**2).sum())
    kappa = (observed - expected) / (1 - expected)

    pq = p * (1 - p)
    sum_pq = float(pq.sum())
    variance_term = float(sum_pq**2 - (pq * (1 - 2 * p)).sum())
    se = math.sqrt(2 / (n_items * m * (m - 1))) * math.sqrt(variance_term) / sum_pq
    with np.errstate(divide="ignore", invalid="ignore"):
        # sum over items of n_ij (m - n_ij), per category
        disagreement = (m * totals - squares) / (n_items * m * (m - 1) * pq)
    per_category = {
        cat: float(1 - d)
        for cat, d, share in zip(tally.categories, disagreement, p, strict=True)
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
    return krippendorff_alpha_of(tally_of(matrix))


def krippendorff_alpha_of(tally: RatingTally) -> AlphaResult:
    """Nominal alpha of the tally's items with two ratings or more (the others are counted as
    left out): the computation of `krippendorff.alpha(value_counts=...,
    level_of_measurement="nominal")`, from sums. With nominal distances only the off-diagonal
    total of the coincidence matrix matters, which is sum over items of
    (m_u**2 - sum_c n_uc**2) / (m_u - 1); the expected one needs only the category totals."""
    pairable = tally.ratings >= 2
    totals = tally.totals[pairable].sum(axis=0).astype(np.float64)
    if totals.sum() == 0:
        raise NotEnoughRatings("Krippendorff's alpha needs at least one item with two ratings.")
    _require_variation(tally.categories, totals)
    m = tally.ratings[pairable].astype(np.float64)
    observed = float(
        ((m * m * tally.items[pairable] - tally.squares[pairable].sum(axis=1)) / (m - 1)).sum()
    )
    n = totals.sum()
    expected = float((n * n - (totals * totals).sum()) / (n - 1))
    return AlphaResult(
        alpha=1 - observed / expected,
        n_items=int(tally.items[pairable].sum()),
        n_ratings=int(n),
        items_left_out=int(tally.items[~pairable].sum()),
    )


def _require_variation(categories: Sequence[str], totals: np.ndarray) -> None:
    used = np.flatnonzero(totals)
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
