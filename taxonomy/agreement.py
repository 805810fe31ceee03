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

import krippendorff
import numpy as np
from statsmodels.stats.inter_rater import fleiss_kappa as _statsmodels_fleiss_kappa

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
        items = tuple(i for i, keep in zip(self.items, mask, strict=True) if keep)
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
    items = tuple(dict.fromkeys(item for item, _, _ in rows))
    cats = tuple(categories) if categories is not None else tuple(sorted({c for _, c, _ in rows}))
    item_index = {item: i for i, item in enumerate(items)}
    cat_index = {cat: j for j, cat in enumerate(cats)}
    counts = np.zeros((len(items), len(cats)), dtype=np.int64)
    if rows:
        unknown = {c for _, c, _ in rows} - cat_index.keys()
        if unknown:
            raise ValueError(f"ratings use categories outside the list: {sorted(unknown)}")
        r = np.fromiter((item_index[i] for i, _, _ in rows), dtype=np.int64, count=len(rows))
        c = np.fromiter((cat_index[k] for _, k, _ in rows), dtype=np.int64, count=len(rows))
        n = np.fromiter((n for _, _, n in rows), dtype=np.int64, count=len(rows))
        np.add.at(counts, (r, c), n)
    return RatingMatrix(items, cats, counts)


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
        raise NotEnoughRatings(f"Agreement needs at least two rated items; there are {len(counts)}.")
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
    kappa = float(_statsmodels_fleiss_kappa(counts, method="fleiss"))

    pq = p * (1 - p)
    sum_pq = float(pq.sum())
    variance_term = float(sum_pq**2 - (pq * (1 - 2 * p)).sum())
    se = math.sqrt(2 / (n_items * m * (m - 1))) * math.sqrt(variance_term) / sum_pq
    with np.errstate(divide="ignore", invalid="ignore"):
        disagreement = (counts * (m - counts)).sum(axis=0) / (n_items * m * (m - 1) * pq)
    per_category = {
        cat: float(1 - d) for cat, d, share in zip(matrix.categories, disagreement, p, strict=True)
        if share > 0
    }
    return FleissResult(
        kappa=kappa,
        observed=observed,
        expected=expected,
        se=se,
        ci_low=kappa - Z_95 * se,
        ci_high=kappa + Z_95 * se,
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
    alpha = float(krippendorff.alpha(value_counts=counts, level_of_measurement="nominal"))
    return AlphaResult(
        alpha=alpha,
        n_items=int(len(counts)),
        n_ratings=int(counts.sum()),
        items_left_out=int((~pairable & (per_item > 0)).sum()),
    )


def _require_variation(categories: Sequence[str], counts: np.ndarray) -> None:
    used = np.flatnonzero(counts.sum(axis=0))
    if len(used) == 1:
        raise NoVariation(categories[int(used[0])])


def split_by_group(
    matrix: RatingMatrix, group_of_item: Mapping[Hashable, str | None]
) -> dict[str, RatingMatrix]:
    """One matrix per group (e.g. per final type); items without a group are left out."""
    groups = np.array([group_of_item.get(item) or "" for item in matrix.items], dtype=object)
    return {
        str(g): matrix.subset(groups == g) for g in sorted(set(groups.tolist())) if g != ""
    }
