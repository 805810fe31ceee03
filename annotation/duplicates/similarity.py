"""Which reports say the same thing: TF-IDF vectors of their terms (annotation.duplicates.text)
and every pair whose cosine reaches the threshold. Pure numpy/scipy, no database.

All pairs are found by multiplying the sparse matrix by itself in row blocks, on its rarer terms
only (a term in more than RARE_SHARE of the reports links too many of them to tell anything), and
the pairs that come out are then scored on all their terms. Exact, unlike an LSH sketch: no
threshold-dependent misses, and at the study's scale (38,742 reports) it takes seconds
(tests/bench/duplicates.py).
"""

from __future__ import annotations

import math
from array import array
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from annotation.duplicates.text import Boilerplate, Report, learn_boilerplate, report_terms

if TYPE_CHECKING:  # scipy is imported where a build uses it: every web process need not hold it
    from scipy import sparse  # type: ignore[import-untyped]  # scipy ships no types

DEFAULT_THRESHOLD = 0.45  # cosine; chosen on tests/bench/duplicate_cases.py (make bench prints P/R)
RARE_SHARE = 0.02  # terms in at most this share of reports (and RARE_FLOOR) find candidates
RARE_FLOOR = 20
CANDIDATE_FLOOR = 0.12  # a candidate shares at least this much weight in rare terms
BLOCK_ROWS = 2000  # rows per block of the product: bounds its memory


@dataclass(frozen=True)
class Pair:
    a: int  # the smaller report key
    b: int
    similarity: float


@dataclass(frozen=True)
class Found:
    pairs: list[Pair]
    boilerplate: dict[str, Boilerplate]


def similar_pairs(reports: Sequence[Report], threshold: float = DEFAULT_THRESHOLD) -> Found:
    """Every pair of reports with a cosine of at least `threshold`, with each tracker's learned
    boilerplate (what was left out of the comparison)."""
    boilerplate = learn_boilerplate(reports)
    empty = Boilerplate(frozenset(), frozenset())
    matrix, rare = _tfidf(report_terms(r, boilerplate.get(r.tracker, empty)) for r in reports)
    keys = np.fromiter((r.key for r in reports), dtype=np.int64, count=len(reports))
    pairs = [
        Pair(int(min(keys[i], keys[j])), int(max(keys[i], keys[j])), float(s))
        for i, j, s in _pairs_at_least(matrix, rare, threshold)
    ]
    return Found(pairs=pairs, boilerplate=boilerplate)


def _tfidf(counts: Iterable[Counter[str]]) -> tuple[sparse.csr_matrix, np.ndarray]:
    """Rows: reports, L2-normalised sublinear-tf x idf; and a mask of the rare columns. Terms are
    held as their hashes, in compact arrays, one report's counts at a time: a vocabulary of
    strings and a Counter per report took most of a study-scale build's memory. (A collision of
    two terms' hashes merges two rare terms; at 64 bits it does not happen in practice.)"""
    from scipy import sparse

    indptr, columns, tfs = array("q", [0]), array("q"), array("f")
    for doc in counts:
        for term, n in doc.items():
            columns.append(hash(term))
            tfs.append(1 + math.log(n))
        indptr.append(len(columns))
    hashes = np.frombuffer(columns, dtype=np.int64)
    distinct, indices = np.unique(hashes, return_inverse=True)
    shape = (len(indptr) - 1, len(distinct))
    rows = np.frombuffer(indptr, dtype=np.int64)
    data = np.frombuffer(tfs, dtype=np.float32)
    matrix = sparse.csr_matrix((data, indices.astype(np.int32), rows), shape=shape)
    df = np.bincount(matrix.indices, minlength=shape[1])
    idf = np.log((shape[0] + 1) / (df + 1)).astype(np.float32) + 1
    matrix = matrix @ sparse.diags(idf)
    norms = np.sqrt(np.asarray(matrix.multiply(matrix).sum(axis=1)).ravel())
    norms[norms == 0] = 1
    matrix = sparse.diags(1 / norms).astype(np.float32) @ matrix
    rare = df <= max(RARE_FLOOR, RARE_SHARE * shape[0])
    return matrix.tocsr(), rare


def _pairs_at_least(
    matrix: sparse.csr_matrix, rare: np.ndarray, threshold: float
) -> list[tuple[int, int, float]]:
    from scipy import sparse

    rare_part = (matrix @ sparse.diags(rare.astype(np.float32))).tocsr()
    rare_part.eliminate_zeros()
    transposed = rare_part.T.tocsr()
    found: list[tuple[int, int, float]] = []
    for start in range(0, matrix.shape[0], BLOCK_ROWS):
        block = (rare_part[start : start + BLOCK_ROWS] @ transposed).tocoo()
        rows = block.row + start
        keep = (block.col > rows) & (block.data >= min(CANDIDATE_FLOOR, threshold))
        rows, cols = rows[keep], block.col[keep]
        if not len(rows):
            continue
        scores = np.asarray(matrix[rows].multiply(matrix[cols]).sum(axis=1)).ravel()
        hit = scores >= threshold
        found.extend(zip(rows[hit].tolist(), cols[hit].tolist(), scores[hit].tolist(), strict=True))
    return found
