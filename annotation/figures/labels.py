"""A project's labels as numpy arrays, fetched in a few aggregate queries: what the agreement
figures, the reports and the statistics read (annotation.figures.tallies, .reports, .stats)."""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from itertools import chain

import numpy as np
from django.db import connections
from django.db.models import BigIntegerField, F, Func, QuerySet

from annotation.models import Annotation, Project
from taxonomy import agreement


def rolled_up(lineage: Mapping[int, Sequence[str]], depth: int) -> dict[int, str | None]:
    """node id -> its code at `depth` (agreement.roll_up; None for nodes coarser than that).
    roll_up looks codes up, and a code names one node of its taxonomy."""
    by_code = {path[-1]: path for path in lineage.values()}
    return {node: agreement.roll_up(path[-1], by_code, depth) for node, path in lineage.items()}


class EpochSeconds(Func):
    """PostgreSQL: a timestamp as whole seconds since 1970-01-01 UTC."""

    template = "FLOOR(EXTRACT(EPOCH FROM %(expressions)s))::bigint"
    output_field = BigIntegerField()


SHIFT = 2**32  # a label packs as item id * SHIFT + its time in epoch seconds (< 2**32 until 2106)


@dataclass(frozen=True)
class LabelArrays:
    """Every non-pilot label of a project as aligned arrays: item id, node id, epoch seconds.
    32 bits each (seconds unsigned, until 2106): a 10x project has 2.7 million labels, and every
    sort and mask of them is half the memory int64 would take."""

    items: np.ndarray
    nodes: np.ndarray
    times: np.ndarray


def project_labels(project: Project) -> LabelArrays:
    """ONE query. On PostgreSQL one row per node holding its labels' (item, time) packed into one
    bigint array (agreement.grouped_arrays: a few hundred rows instead of 270k, and item and time
    cannot come apart)."""
    # A pilot label is the lead's worked example, one rater on its item: no agreement to measure.
    labels = Annotation.objects.filter(item__project=project, is_pilot=False)
    if connections[labels.db].vendor == "postgresql":
        packed = F("item_id") * SHIFT + EpochSeconds("created_at")
        nodes, flat = grouped_arrays(labels, "node_id", packed)
        return LabelArrays(
            (flat // SHIFT).astype(np.int32),
            nodes.astype(np.int32),
            (flat % SHIFT).astype(np.uint32),
        )
    rows = list(labels.values_list("item_id", "node_id", "created_at"))
    return LabelArrays(
        np.array([r[0] for r in rows], dtype=np.int32),
        np.array([r[1] for r in rows], dtype=np.int32),
        np.array([int(r[2].timestamp()) for r in rows], dtype=np.uint32),
    )


WEEK = 7 * 86400
EPOCH_MONDAY = dt.date(1969, 12, 29)  # 1970-01-01 was a Thursday; weeks start on Mondays


def weeks_of(labels: LabelArrays, k: int) -> dict[dt.date, np.ndarray]:
    """Monday of an ISO week -> ids of the items whose k-th label was given in that week (UTC),
    ascending. Items with fewer than k labels are in no week."""
    order = np.lexsort((labels.times, labels.items))
    items, times = labels.items[order], labels.times[order]
    starts = np.flatnonzero(np.r_[True, items[1:] != items[:-1]]) if len(items) else items
    per_item = np.diff(np.r_[starts, len(items)])
    complete = starts[per_item >= k]
    week = week_number(times[complete + k - 1].astype(np.int64))
    out = {}
    for w in np.unique(week).tolist():
        out[monday_of(w)] = items[complete[week == w]]
    return out


def week_number(seconds):
    """The week (since EPOCH_MONDAY) of a time in epoch seconds, UTC; an int or an array."""
    return (seconds + 3 * 86400) // WEEK


def monday_of(week: int) -> dt.date:
    return EPOCH_MONDAY + dt.timedelta(weeks=week)


def items_by_week(project: Project, k: int) -> dict[dt.date, np.ndarray]:
    """weeks_of the project's non-pilot labels."""
    return weeks_of(project_labels(project), k)


def label_arrays(labels: QuerySet) -> tuple[np.ndarray, np.ndarray]:
    """Item id and node id of every annotation in `labels`, as two aligned arrays (pairs:
    one row per node on PostgreSQL, not per label: half the time at study scale)."""
    nodes, items = pairs(labels, "node_id", "item_id")
    return items, nodes


def pairs(rows: QuerySet, key: str, value: str) -> tuple[np.ndarray, np.ndarray]:
    """The integer fields `key` and `value` of every row as two aligned int64 arrays: grouped
    by key on PostgreSQL (grouped_arrays), row by row elsewhere."""
    if connections[rows.db].vendor == "postgresql":
        return grouped_arrays(rows, key, value)
    fetched = fetch_rows(rows.values_list(key, value))
    flat = np.fromiter(chain.from_iterable(fetched), dtype=np.int64, count=2 * len(fetched))
    return flat[0::2], flat[1::2]


def grouped_arrays(rows: QuerySet, key: str, value) -> tuple[np.ndarray, np.ndarray]:
    """PostgreSQL only: the integer `value` (a field or expression) of every row, fetched as one
    array per `key` (a few hundred result rows instead of 270k at study scale); returns the keys
    repeated and the values, as two aligned int64 arrays."""
    from django.contrib.postgres.aggregates import ArrayAgg

    grouped = rows.values_list(key).annotate(values=ArrayAgg(value)).order_by()
    keys, arrays = [], []
    # Row by row: psycopg2 makes a row's list of ints as it is fetched, so one key's list lives
    # at a time; fetch_rows() held every value as a Python int at once (2.7 million at 10x: a
    # rebuild's fetch peaked about 50 MB higher).
    for group, values in streamed_rows(grouped):
        keys.append(group)
        arrays.append(np.array(values, dtype=np.int64))
    sizes = [len(array) for array in arrays]
    values = np.concatenate(arrays) if arrays else np.empty(0, dtype=np.int64)
    return np.repeat(np.array(keys, dtype=np.int64), sizes), values


def fetch_rows(rows: QuerySet) -> list[tuple]:
    """A values_list query's rows straight from the cursor: the same tuples of ints, without
    Django's per-row converters (a third of the time at study scale)."""
    return list(streamed_rows(rows))


def streamed_rows(rows: QuerySet) -> Iterator[tuple]:
    """fetch_rows one row at a time, each made as it is read."""
    sql, params = rows.query.sql_with_params()
    with connections[rows.db].cursor() as cursor:
        cursor.execute(sql, params)
        yield from cursor


@dataclass(frozen=True)
class RatedPairs:
    """A level's rating matrix, sparse: item `items[row[j]]` has `n[j]` labels that roll up to
    category `column[j]`, each (row, column) once. `items`: the rated items' ids, ascending."""

    items: np.ndarray
    row: np.ndarray
    column: np.ndarray
    n: np.ndarray


def rated_pairs(
    items: np.ndarray,
    nodes: np.ndarray,
    category_of: Mapping[int, str | None],
    categories: Sequence[str],
) -> RatedPairs:
    """Label k (item `items[k]`, node `nodes[k]`) counts as category `category_of[node]` (None:
    no rating at this level). The tallies and the confusion report read a level through this:
    a 10x project's 2.7 million labels at sub-theme level without a 387,420 x 90 matrix."""
    index = {code: j for j, code in enumerate(categories)}
    # Each label's column through its node's place among the distinct nodes (searchsorted), and
    # the pairs in int32 where they fit: np.unique's inverse and int64 throughout made a 10x
    # rebuild's peak (2.7 million labels) about 60 MB higher.
    distinct = np.unique(nodes)
    column_of = [-1 if category_of[n] is None else index[category_of[n]] for n in distinct.tolist()]  # type: ignore[index]
    column = np.array(column_of, dtype=np.int32)[np.searchsorted(distinct, nodes)]
    rated = column >= 0
    ids, row = numbered(items[rated])
    width = max(len(categories), 1)
    fits = len(ids) * width < np.iinfo(np.int32).max  # a Python int times it keeps its type
    narrow: np.ndarray = row.astype(np.int32 if fits else np.int64)
    cells = narrow * width + column[rated]
    pair, n = np.unique(cells, return_counts=True)
    return RatedPairs(ids, (pair // width).astype(np.int64), (pair % width).astype(np.int64), n)


def numbered(items: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """np.unique(items, return_inverse=True) without sorting 2.7 million ids: a project's item
    ids lie in a range not much wider than their number, so a lookup table over that range
    (int32) numbers them in a fraction of the memory a sort takes."""
    if not len(items):
        return items.astype(np.int64), items.astype(np.int64)
    low, high = int(items.min()), int(items.max())
    if high - low > 16 * len(items):  # ids scattered far apart: sort after all
        ids, rows = np.unique(items, return_inverse=True)
        return ids, rows.reshape(-1)
    present = np.zeros(high - low + 1, dtype=bool)
    present[items - low] = True
    ids = np.flatnonzero(present) + low
    row_of = np.cumsum(present, dtype=np.int32) - 1
    return ids.astype(np.int64), row_of[items - low]
