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
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from annotation.duplicates.text import (
    Boilerplate,
    Report,
    learn_boilerplate,
    report_terms,
    words_forgotten,
)

if TYPE_CHECKING:  # scipy is imported where a build uses it: every web process need not hold it
    from scipy import sparse  # type: ignore[import-untyped]  # scipy ships no types

DEFAULT_THRESHOLD = 0.45  # cosine; chosen on tests/bench/duplicate_cases.py (make bench prints P/R)
RARE_SHARE = 0.02  # terms in at most this share of reports (and RARE_FLOOR) find candidates
RARE_FLOOR = 20
CANDIDATE_FLOOR = 0.12  # a candidate shares at least this much weight in rare terms
BLOCK_ROWS = 2000  # rows per block of the product: bounds its memory
WEIGHT_ROWS = 20_000  # rows weighed at a time
COUNT_BLOCK = 1 << 22  # entries counted at a time (_column_counts)
# A term's repeats in one report are held in 2 bytes while the reports are read (4 as a float
# took 9 MB more at the 10x bench's 4.6 million terms: issue 31). No report comes near: GitHub
# caps a body at 65,536 characters, and a term repeated more weighs as if repeated this often.
MOST_REPEATS = 65_535


@dataclass(frozen=True)
class Pair:
    a: int  # the smaller report key
    b: int
    similarity: float


@dataclass(frozen=True)
class Found:
    pairs: list[Pair]
    boilerplate: dict[str, Boilerplate]


@dataclass(frozen=True)
class FoundPairs:
    """What similar_pairs finds, the pairs held as arrays (a project's pairs as Pair objects, and
    its reports as Report objects, took a 10x study's build past a GiB: issue 31)."""

    a: np.ndarray  # int64: each pair's smaller report key
    b: np.ndarray  # int64
    similarity: np.ndarray  # float32
    boilerplate: dict[str, Boilerplate]

    def __len__(self) -> int:
        return len(self.a)


def similar_pairs(reports: Sequence[Report], threshold: float = DEFAULT_THRESHOLD) -> Found:
    """Every pair of reports with a cosine of at least `threshold`, with each tracker's learned
    boilerplate (what was left out of the comparison)."""
    totals = Counter(r.tracker for r in reports)
    found = similar_pairs_read(lambda: reports, totals, threshold)
    columns = (found.a.tolist(), found.b.tolist(), found.similarity.tolist())
    pairs = [Pair(a, b, s) for a, b, s in zip(*columns, strict=True)]
    return Found(pairs=pairs, boilerplate=found.boilerplate)


def similar_pairs_read(
    read: Callable[[], Iterable[Report]],
    totals: Mapping[str, int],
    threshold: float = DEFAULT_THRESHOLD,
) -> FoundPairs:
    """similar_pairs of reports that are read, not held: `read()` gives them, in the same order
    each time, `totals` each tracker's number of them. They are read twice, to learn the
    boilerplate and then for their terms; what is kept of a report is its terms' columns."""
    boilerplate = learn_boilerplate(read(), totals)
    empty = Boilerplate(frozenset(), frozenset())
    keys = array("q")

    def counts() -> Iterator[Counter[str]]:
        for r in read():
            keys.append(r.key)
            yield report_terms(r, boilerplate.get(r.tracker, empty))
        words_forgotten()  # every report is read: the arrays need the room from here on

    matrix, rare = _tfidf(counts())
    rows, cols, scores = _pairs_at_least(matrix, rare, threshold)
    del matrix
    key = np.frombuffer(keys, dtype=np.int64)
    a, b = key[rows], key[cols]
    return FoundPairs(np.minimum(a, b), np.maximum(a, b), scores, boilerplate)


def _tfidf(counts: Iterable[Counter[str]]) -> tuple[sparse.csr_matrix, np.ndarray]:
    """Rows: reports, L2-normalised sublinear-tf x idf; and a mask of the rare columns. Terms are
    held as their hashes, in compact arrays, one report's counts at a time: a vocabulary of
    strings and a Counter per report took most of a study-scale build's memory. (A collision of
    two terms' hashes merges two rare terms; at 64 bits it does not happen in practice.)"""
    from scipy import sparse

    indptr, repeats, columns = array("q", [0]), array("H"), _Columns()
    for doc in counts:
        for term, n in doc.items():
            columns.add(hash(term))
            repeats.append(min(n, MOST_REPEATS))
        indptr.append(len(repeats))
    indices, width = columns.numbered()
    del columns
    shape = (len(indptr) - 1, width)
    rows = np.frombuffer(indptr, dtype=np.int64)
    data = _sublinear_tf(np.frombuffer(repeats, dtype=np.uint16))
    del repeats
    matrix = sparse.csr_matrix((data, indices, rows), shape=shape)
    del data, indices, rows, indptr  # the matrix holds what it needs
    df = _column_counts(matrix.indices, shape[1])
    idf = np.log((shape[0] + 1) / (df + 1)).astype(np.float32) + 1
    for start in range(0, shape[0], WEIGHT_ROWS):
        _weigh(matrix, slice(start, start + WEIGHT_ROWS), idf)
    # A term of one report alone links it to none: left out of the candidates' product (exactly
    # the same pairs), which at 10x was a third of its entries. Its weight stays in the norms.
    rare = (df >= 2) & (df <= max(RARE_FLOOR, RARE_SHARE * shape[0]))
    return matrix, rare


def _sublinear_tf(repeats: np.ndarray) -> np.ndarray:
    """1 + ln(n) of each count, as float32: looked up in a table of the counts there are, so each
    weight is the float64 result rounded once (what math.log gave term by term)."""
    table = np.array([0, *(1 + math.log(n) for n in range(1, int(repeats.max(initial=0)) + 1))])
    return table.astype(np.float32)[repeats]


def _column_counts(indices: np.ndarray, width: int) -> np.ndarray:
    """np.bincount(indices, minlength=width), COUNT_BLOCK entries at a time: bincount first
    casts what it counts to int64, a copy of 8 bytes per entry of the whole matrix (37 MB for
    the 10x bench's 4.6 million, more with richer text)."""
    counts = np.zeros(width, np.int64)
    for start in range(0, len(indices), COUNT_BLOCK):
        counts += np.bincount(indices[start : start + COUNT_BLOCK], minlength=width)
    return counts


def _weigh(matrix: sparse.csr_matrix, rows: slice, idf: np.ndarray) -> None:
    """Weigh `rows` of the matrix by idf and L2-normalise them, in place: the whole matrix at once
    took two more of its size in memory (issue 31). Each row's result depends on that row alone,
    so a block's is what the whole matrix's would be, entry for entry."""
    from scipy import sparse

    block = matrix[rows] @ sparse.diags(idf)
    norms = np.sqrt(np.asarray(block.multiply(block).sum(axis=1)).ravel())
    norms[norms == 0] = 1
    block = (sparse.diags(1 / norms).astype(np.float32) @ block).tocsr()
    start, stop = matrix.indptr[rows.start], matrix.indptr[min(rows.stop, matrix.shape[0])]
    if block.nnz != stop - start:  # tf and idf are at least 1: no product is ever zero
        raise ValueError("a weighed row lost a term")
    matrix.data[start:stop] = block.data
    matrix.indices[start:stop] = block.indices


class _Columns:
    """Each term's column, numbered as np.unique would number the terms' hashes (in their order),
    found a block of hashes at a time: np.unique of every hash of a 10x study's reports at once
    took several times their size in memory (issue 31). What is kept is a column per term of the
    reports (4 bytes) and, per distinct term, its hash and the number it was first given."""

    BLOCK = 1 << 16

    def __init__(self) -> None:
        self.pending = array("q")
        self.numbers = array("i")  # per term of the reports, its first-given number
        self.known = np.zeros(0, np.int64)  # the distinct hashes, in order
        self.first = np.zeros(0, np.int32)  # the number each was first given

    def add(self, term_hash: int) -> None:
        self.pending.append(term_hash)
        if len(self.pending) >= self.BLOCK:
            self._flush()

    def numbered(self) -> tuple[np.ndarray, int]:
        """The column of each term added, in order, and how many columns there are."""
        self._flush()
        rank = np.empty(len(self.first), np.int32)
        rank[self.first] = np.arange(len(self.first), dtype=np.int32)
        columns = np.frombuffer(self.numbers, dtype=np.int32)
        for start in range(0, len(columns), self.BLOCK):  # in place: no second array of them
            part = columns[start : start + self.BLOCK]
            part[:] = rank[part]
        return columns, len(self.first)

    def _flush(self) -> None:
        distinct, inverse = np.unique(np.frombuffer(self.pending, np.int64), return_inverse=True)
        at = np.searchsorted(self.known, distinct)
        seen = np.zeros(len(distinct), bool)
        inside = at < len(self.known)
        seen[inside] = self.known[at[inside]] == distinct[inside]
        number = np.empty(len(distinct), np.int32)
        number[seen] = self.first[at[seen]]
        new = ~seen
        number[new] = np.arange(len(self.first), len(self.first) + new.sum(), dtype=np.int32)
        self.known = np.insert(self.known, at[new], distinct[new])
        self.first = np.insert(self.first, at[new], number[new])
        self.numbers.frombytes(number[inverse.ravel()].tobytes())
        self.pending = array("q")


def _pairs_at_least(
    matrix: sparse.csr_matrix, rare: np.ndarray, threshold: float
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(rows, columns, cosines) of the pairs of rows at `threshold` or more, row < column."""
    from scipy import sparse

    rare_part = (matrix @ sparse.diags(rare.astype(np.float32))).tocsr()
    rare_part.eliminate_zeros()
    transposed = rare_part.T.tocsr()
    found: list[tuple[np.ndarray, np.ndarray, np.ndarray]] = []
    for start in range(0, matrix.shape[0], BLOCK_ROWS):
        block = (rare_part[start : start + BLOCK_ROWS] @ transposed).tocoo()
        rows = block.row + start
        keep = (block.col > rows) & (block.data >= min(CANDIDATE_FLOOR, threshold))
        rows, cols = rows[keep], block.col[keep]
        if not len(rows):
            continue
        scores = np.asarray(matrix[rows].multiply(matrix[cols]).sum(axis=1)).ravel()
        hit = scores >= threshold
        found.append((rows[hit], cols[hit], scores[hit]))
    if not found:
        return np.zeros(0, np.int64), np.zeros(0, np.int64), np.zeros(0, np.float32)
    rows, cols, scores = (np.concatenate(part) for part in zip(*found, strict=True))
    return rows, cols, scores
