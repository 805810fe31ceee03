"""Coded units of a transcript and the agreement of two coders on them. No database.

A transcript's units are its non-blank lines (a transcript writes one turn, a question or an
answer, to a line). A passage a coder links to a code covers every unit it touches, so two
coders who mark slightly different words of the same answer agree on that answer. Per code, each
unit is a yes or a no for each coder: Cohen's kappa on those pairs (the comparison NVivo reports
per code), and overall the same on every (unit, code) pair. The disagreements are the (unit,
code) pairs one coder marked and the other did not.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from taxonomy.agreement import NotEnoughRatings, cohens_kappa


@dataclass(frozen=True)
class Unit:
    number: int  # the line's number in the transcript, 1 = first
    start: int  # offset of its first character
    end: int  # offset just past its last character


def transcript_units(text: str) -> list[Unit]:
    """The non-blank lines of `text` (newlines are "\\n"), with their place."""
    units = []
    offset = 0
    for number, line in enumerate(text.split("\n"), start=1):
        if line.strip():
            units.append(Unit(number, offset, offset + len(line)))
        offset += len(line) + 1
    return units


def units_covered(units: Sequence[Unit], start: int, end: int) -> list[int]:
    """Indexes into `units` of the units a passage [start, end) touches."""
    return [k for k, u in enumerate(units) if u.start < end and start < u.end]


@dataclass(frozen=True)
class CodeAgreement:
    code: str
    kappa: float | None  # None: undefined (both marked every unit, or fewer than two units)
    observed: float  # share of units on which the two said the same
    a: int  # units coder A marked with the code
    b: int  # units coder B marked
    both: int  # units both marked


@dataclass(frozen=True)
class Disagreement:
    unit: int  # index into the units
    code: str
    by_a: bool  # A marked it and B did not (else the reverse)


@dataclass(frozen=True)
class PairAgreement:
    units: int
    kappa: float | None  # over every (unit, code) pair
    observed: float
    per_code: list[CodeAgreement]
    disagreements: list[Disagreement]


def coding_agreement(
    n_units: int, a: Mapping[str, set[int]], b: Mapping[str, set[int]]
) -> PairAgreement:
    """Agreement of coders A and B over `n_units` units, from the units each marked with each
    code (`a[code]` = indexes of units)."""
    codes = sorted(set(a) | set(b))
    per_code = []
    pooled_a: list[np.ndarray] = []
    pooled_b: list[np.ndarray] = []
    disagreements = []
    for code in codes:
        ya = np.zeros(n_units, dtype=bool)
        yb = np.zeros(n_units, dtype=bool)
        ya[sorted(a.get(code, set()))] = True
        yb[sorted(b.get(code, set()))] = True
        pooled_a.append(ya)
        pooled_b.append(yb)
        per_code.append(
            CodeAgreement(
                code=code,
                kappa=_kappa(ya, yb),
                observed=float((ya == yb).mean()) if n_units else 1.0,
                a=int(ya.sum()),
                b=int(yb.sum()),
                both=int((ya & yb).sum()),
            )
        )
        disagreements += [Disagreement(int(u), code, bool(ya[u])) for u in np.flatnonzero(ya ^ yb)]
    disagreements.sort(key=lambda d: (d.unit, d.code))
    if codes:
        all_a, all_b = np.concatenate(pooled_a), np.concatenate(pooled_b)
        kappa, observed = _kappa(all_a, all_b), float((all_a == all_b).mean()) if n_units else 1.0
    else:
        kappa, observed = None, 1.0
    return PairAgreement(n_units, kappa, observed, per_code, disagreements)


def _kappa(a: np.ndarray, b: np.ndarray) -> float | None:
    try:
        return cohens_kappa(a, b)
    except NotEnoughRatings:  # NoVariation too: chance agreement is 1, kappa is 0/0
        return None
