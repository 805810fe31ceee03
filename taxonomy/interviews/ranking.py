"""Rank maths for triangulating interviews with labeled issues: ranks of counts, Spearman's rank
correlation with a confidence interval, and the themes whose ranks part. No database.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

Z_95 = 1.959963984540054  # the standard normal's 97.5th percentile


def ranks_of(counts: Sequence[float]) -> list[float]:
    """Rank 1 = the largest count; ties share the mean of their places (so two themes tied
    for second are both 2.5, and every theme nobody named shares the last places)."""
    if not counts:
        return []
    from scipy.stats import rankdata  # type: ignore[import-untyped]  # here: scipy.stats is heavy

    return [float(r) for r in rankdata([-c for c in counts], method="average")]


@dataclass(frozen=True)
class RankCorrelation:
    n: int
    rho: float | None  # None: fewer than 4 themes, or one side has no variation
    low: float | None  # 95% interval (Fisher z, Fieller-Hartley-Pearson standard error)
    high: float | None
    p_value: float | None


def spearman(x: Sequence[float], y: Sequence[float]) -> RankCorrelation:
    """Spearman's rho between two sets of counts over the same themes, with a 95% interval:
    z = atanh(rho), standard error sqrt(1.06 / (n - 3)) (Fieller, Hartley & Pearson 1957, the
    usual one for Spearman's rho), back through tanh."""
    n = len(x)
    if n != len(y):
        raise ValueError(f"{n} and {len(y)} values: the same themes are needed on both sides")
    if n < 4 or len(set(x)) < 2 or len(set(y)) < 2:
        return RankCorrelation(n, None, None, None, None)
    from scipy.stats import spearmanr

    result = spearmanr(np.asarray(x, dtype=float), np.asarray(y, dtype=float))
    rho = float(result.statistic)
    p_value = float(result.pvalue)
    if abs(rho) >= 1.0:
        return RankCorrelation(n, rho, rho, rho, p_value)
    z, se = math.atanh(rho), math.sqrt(1.06 / (n - 3))
    return RankCorrelation(n, rho, math.tanh(z - Z_95 * se), math.tanh(z + Z_95 * se), p_value)


def rank_gap(themes: int) -> int:
    """How many places apart two ranks of the same theme must be to call it a disagreement: a
    quarter of the themes, at least 3 (the study's 18 themes: 4 places)."""
    return max(3, themes // 4)
