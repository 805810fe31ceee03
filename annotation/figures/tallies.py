"""A project's agreement figures as tallies: the RatingTally (taxonomy.agreement) of every group
of items at every level, which is all Fleiss' kappa, its interval and Krippendorff's alpha need.

Groups: `all` items; `type`, the final label's type (by code); `repository` (owner/repo);
`week`, the ISO week (its Monday) in which an item's k-th label was given. A tally is additive
over items, so the figures can follow every label without reading the project's labels again:

* On PostgreSQL the tallies are kept in FigureTally rows. A rebuild (a read that finds none it
  can trust) computes them from the labels in one snapshot and writes them as one row. Every
  write through `figures_kept` (a volunteer's label, a lead's final label) adds a row with its
  item's change, new tally minus old, computed under the item's lock in the write's own
  transaction: a figure read after the write's commit counts it, one read before does not.
  Any other write of labels or final labels (an import, a restore, a bulk update, the admin)
  fires the trigger of migration 0020, which marks the project's tallies stale, so the next read
  rebuilds them: none is served from tallies a write went around. What the tallies were rolled
  up by (the taxonomy's tree, k) is their `basis`; a read with another basis rebuilds too.
* Elsewhere (SQLite, the embedded demo) every read computes them from the labels.

What an item contributes where is `tallies_from` (numpy, a whole project: rebuilds, SQLite);
a kept write computes its one item's share with `_item_entries` (plain Python: for a dozen labels
numpy cost more than the rest of the submit), and the tests hold the two to the same figures.
"""

from __future__ import annotations

import hashlib
import json
import logging
from collections import Counter, defaultdict
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass

import numpy as np
from django.contrib.postgres.aggregates import ArrayAgg
from django.db import OperationalError, connections, transaction
from django.db.models import Count

from annotation.figures.labels import (
    LabelArrays,
    fetch_rows,
    monday_of,
    pairs,
    project_labels,
    rated_pairs,
    rolled_up,
    week_number,
    weeks_of,
)
from annotation.models import FigureState, FigureTally, Item, Project, Resolution
from concord.prepared import saved
from concord.tasks import send
from taxonomy import agreement
from taxonomy.models import Level
from taxonomy.selectors import taxonomy_lineage

logger = logging.getLogger(__name__)

LEVELS = tuple(Level.values)  # type, theme, subtheme: depth 1, 2, 3
# A project's rows are summed into one past this many (a kept write adds one): by the read that
# finds them, and by beat (figures_compact) for the projects nobody reads meanwhile.
COMPACT_AFTER_ROWS = 300

Key = tuple[str, str, str]  # level, grouping, group
Lineage = dict[int, tuple[str, ...]]


# ---------------------------------------------------------------- tallies from labels


@dataclass(frozen=True)
class Members:
    """Which items belong to which group of one grouping: `items[i]` is in group
    `names[group[i]]` (an index per item, not a name: a 10x project has 387,420 items)."""

    items: np.ndarray
    group: np.ndarray
    names: list[str]

    @classmethod
    def of(cls, groups: dict[str, np.ndarray]) -> Members:
        """From group name -> its item ids."""
        names = sorted(groups)
        sizes = [len(groups[name]) for name in names]
        items = np.concatenate(
            [np.asarray(groups[n], dtype=np.int64) for n in names] or [np.zeros(0, dtype=np.int64)]
        )
        group = np.repeat(np.arange(len(names), dtype=np.int64), sizes)
        return cls(items.astype(np.int64), group, names)


def codes_by_level(lineage: Lineage) -> dict[str, list[str]]:
    """Each level's codes, in the taxonomy's order (the categories of its rating matrix)."""
    codes: dict[str, dict[str, None]] = {level: {} for level in LEVELS}
    for path in lineage.values():
        codes[LEVELS[len(path) - 1]][path[-1]] = None
    for path in lineage.values():  # a part of the tree (one item's): its nodes' ancestors too
        for depth, code in enumerate(path[:-1]):
            codes[LEVELS[depth]].setdefault(code)
    return {level: list(found) for level, found in codes.items()}


def tallies_from(
    lineage: Lineage, labels: LabelArrays, members: dict[str, Members], k: int
) -> dict[Key, agreement.RatingTally]:
    """Every (level, grouping, group) tally of these labels (a rebuild; every read on SQLite).
    `members` holds the type and repository groupings; `all` and `week` come from the labels. A
    group without a rated item at a level has no entry there. Sparse throughout
    (labels.rated_pairs, agreement.tallies_of_pairs): no items x categories matrix."""
    groupings = {
        **members,
        "week": Members.of({day.isoformat(): ids for day, ids in weeks_of(labels, k).items()}),
    }
    codes = codes_by_level(lineage)
    out: dict[Key, agreement.RatingTally] = {}
    for depth, level in enumerate(LEVELS, start=1):
        rated = rated_pairs(labels.items, labels.nodes, rolled_up(lineage, depth), codes[level])
        everyone = Members(rated.items, np.zeros(len(rated.items), dtype=np.int64), [""])
        for grouping, of in {"all": everyone, **groupings}.items():
            group = _group_of(rated.items, of)
            found = agreement.tallies_of_pairs(
                rated.row, rated.column, rated.n, group, len(of.names), codes[level]
            )
            for name, tally in zip(of.names, found, strict=True):
                if tally.n_items:
                    out[(level, grouping, name)] = tally
    return out


def _group_of(items: np.ndarray, members: Members) -> np.ndarray:
    """Each of `items` (ascending)'s group index in `members`, -1 for none."""
    group = np.full(len(items), -1, dtype=np.int64)
    if len(items) and len(members.items):
        where = np.searchsorted(items, members.items).clip(0, len(items) - 1)
        found = items[where] == members.items
        group[where[found]] = members.group[found]
    return group


def project_members(project: Project, lineage: Lineage) -> dict[str, Members]:
    """The type (final label's type code) and repository (owner/repo) of every item: one row
    per final node and one per repository on PostgreSQL (arrays of item ids)."""
    nodes, finals = pairs(Resolution.objects.filter(item__project=project), "node_id", "item_id")
    by_type: dict[str, list[np.ndarray]] = defaultdict(list)
    distinct, which = np.unique(nodes, return_inverse=True)
    for i, node in enumerate(distinct.tolist()):
        by_type[lineage[node][0]].append(finals[which.reshape(-1) == i])
    items = Item.objects.filter(project=project)
    if connections[items.db].vendor == "postgresql":
        repos = fetch_rows(
            items.values_list("issue__owner", "issue__repo").annotate(ids=ArrayAgg("pk")).order_by()
        )
    else:
        grouped = defaultdict(list)
        for pk, owner, repo in items.values_list("pk", "issue__owner", "issue__repo"):
            grouped[(owner, repo)].append(pk)
        repos = [(owner, repo, ids) for (owner, repo), ids in grouped.items()]
    return {
        "type": Members.of({code: np.concatenate(parts) for code, parts in by_type.items()}),
        "repository": Members.of({f"{o}/{r}": np.array(ids) for o, r, ids in repos}),
    }


def computed_tallies(project: Project, lineage: Lineage) -> dict[Key, agreement.RatingTally]:
    """The project's tallies from its labels, now (a rebuild; every read on SQLite)."""
    return tallies_from(
        lineage, project_labels(project), project_members(project, lineage), project.overlap_k
    )


# ---------------------------------------------------------------- kept tallies (PostgreSQL)


@dataclass(frozen=True)
class Figures:
    """A project's tallies and what they were rolled up by."""

    lineage: Lineage
    tallies: dict[Key, agreement.RatingTally]

    def groups(self, level: str, grouping: str) -> dict[str, agreement.RatingTally]:
        return {g: t for (lv, gr, g), t in self.tallies.items() if lv == level and gr == grouping}

    def tally(self, level: str) -> agreement.RatingTally:
        """All items at `level` (an empty tally when nothing is rated)."""
        return self.tallies.get((level, "all", "")) or self.none(level)

    def none(self, level: str) -> agreement.RatingTally:
        """The tally of no rated item at `level`."""
        return agreement.RatingTally.empty(codes_by_level(self.lineage)[level])

    @property
    def labels(self) -> int:
        """Non-pilot labels counted: every label rolls up to its type."""
        tally = self.tally(Level.TYPE)
        return int((tally.ratings * tally.items).sum())


def project_figures(project: Project) -> Figures:
    """The project's tallies, kept (PostgreSQL) or computed (elsewhere)."""
    lineage = taxonomy_lineage(project.taxonomy)
    if connections[FigureTally.objects.db].vendor != "postgresql":
        return Figures(lineage, computed_tallies(project, lineage))
    basis = _basis(lineage, project.overlap_k)
    stored = _stored(project, basis, codes_by_level(lineage))
    if stored is None:
        stored = _rebuilt(project, lineage, basis)
    return Figures(lineage, stored)


def figures_rebuild_queue(project: Project) -> None:
    """An import job's last step: its labels went around the tallies, which marked them stale;
    have the worker rebuild them (figures_rebuilt_after_import) rather than the first request
    that asks for a figure.

    A task of its own, not the job's last lines: an import leaves its worker process larger
    than it found it (freed memory the allocator keeps: a 10x label import, 87 -> 160 MB), and
    the rebuild's own 140 MB on top of that took a worker's child to 328 MB. The worker replaces
    a child whose peak passed CELERY_WORKER_MAX_MEMORY_PER_CHILD once its task ends, so the
    rebuild starts in a lean process. Not sent (the broker is down) or failed, the tallies stay
    stale and the next read rebuilds them."""
    from annotation.figures.tasks import figures_rebuild

    send(figures_rebuild, project.pk)


def figures_rebuilt_after_import(project: Project) -> None:
    """Rebuild the tallies an import left stale, here and now (the figures_rebuild task, and
    restore_project as it ends), rather than in the first request that asks for a figure (about
    7 s on a 10x project). A failure leaves them stale, which the next read repairs."""
    try:
        project_figures(project)
    except Exception:
        logger.exception("agreement figures of project %s not rebuilt after an import", project.pk)


def _basis(lineage: Lineage, k: int) -> str:
    """What the tallies are rolled up by: the taxonomy's tree of codes, and k (the weeks)."""
    tree = json.dumps([k, sorted(lineage.values())], separators=(",", ":"))
    return hashlib.sha256(tree.encode()).hexdigest()


Entry = list  # [level, grouping, group, ratings, items, {code: total}, {code: square}]


def _stored(
    project: Project, basis: str, codes: dict[str, list[str]]
) -> dict[Key, agreement.RatingTally] | None:
    """The sum of the project's FigureTally rows, or None when they cannot be trusted. One
    statement, so the state and the rows are read in one snapshot."""
    with connections[FigureTally.objects.db].cursor() as cursor:
        cursor.execute(
            "SELECT s.built = s.generation AND s.basis = %s, t.entries "
            "FROM annotation_figurestate s LEFT JOIN annotation_figuretally t "
            "ON t.project_id = s.project_id WHERE s.project_id = %s",
            [basis, project.pk],
        )
        rows = cursor.fetchall()
    if not rows or not rows[0][0]:
        return None
    documents = [_document(entries) for _, entries in rows if entries is not None]
    summed = _summed(documents)
    if len(documents) > COMPACT_AFTER_ROWS:
        _compact(project.pk)
    return _as_tallies(summed, codes)


def _document(entries) -> list[Entry]:
    return json.loads(entries) if isinstance(entries, str) else entries


def _summed(documents: list[list[Entry]]) -> dict[tuple, list]:
    """(level, grouping, group, ratings) -> [items, totals, squares], summed over documents."""
    summed: dict[tuple, list] = {}
    for entries in documents:
        for level, grouping, group, ratings, items, totals, squares in entries:
            key = (level, grouping, group, ratings)
            into = summed.setdefault(key, [0, defaultdict(int), defaultdict(int)])
            into[0] += items
            for code, n in totals.items():
                into[1][code] += n
            for code, n in squares.items():
                into[2][code] += n
    return summed


def _as_tallies(
    summed: dict[tuple, list], codes: dict[str, list[str]]
) -> dict[Key, agreement.RatingTally] | None:
    rows: dict[Key, list[tuple[int, int, dict, dict]]] = defaultdict(list)
    for (level, grouping, group, ratings), (items, totals, squares) in sorted(summed.items()):
        if items:
            rows[(level, grouping, group)].append((ratings, items, totals, squares))
    out = {}
    for (level, grouping, group), parts in rows.items():
        index = {code: j for j, code in enumerate(codes[level])}
        if any(code not in index for _, _, totals, _ in parts for code in totals):
            return None  # a code the taxonomy no longer has: rebuild
        totals = np.zeros((len(parts), len(index)), dtype=np.int64)
        squares = np.zeros_like(totals)
        for r, (_, _, by_code, squared) in enumerate(parts):
            for code, n in by_code.items():
                totals[r, index[code]] = n
                squares[r, index[code]] = squared.get(code, 0)
        out[(level, grouping, group)] = agreement.RatingTally(
            tuple(codes[level]),
            np.array([p[0] for p in parts], dtype=np.int64),
            np.array([p[1] for p in parts], dtype=np.int64),
            totals,
            squares,
        )
    return out


def _entries(tallies: dict[Key, agreement.RatingTally]) -> list[Entry]:
    entries = []
    for (level, grouping, group), tally in tallies.items():
        for r, ratings in enumerate(tally.ratings.tolist()):
            totals, squares = tally.totals[r], tally.squares[r]
            used = np.flatnonzero(totals).tolist()
            entries.append(
                [
                    level,
                    grouping,
                    group,
                    ratings,
                    int(tally.items[r]),
                    {tally.categories[j]: int(totals[j]) for j in used},
                    {tally.categories[j]: int(squares[j]) for j in used},
                ]
            )
    return entries


def _rebuilt(project: Project, lineage: Lineage, basis: str) -> dict[Key, agreement.RatingTally]:
    """Compute the tallies from the labels and keep them, all in one snapshot (REPEATABLE READ):
    the rows kept writes committed before it are replaced, those committed after it add to it.
    When another rebuild or a write of the state gets in the way, the figures computed are
    served and not kept (the next read tries again)."""
    FigureState.objects.get_or_create(project=project, defaults={"generation": 0, "basis": ""})
    connection = connections[FigureTally.objects.db]
    if connection.in_atomic_block:  # inside a request's or a test's transaction: no snapshot
        return _rebuild(project, lineage, basis)
    try:
        with transaction.atomic(using=connection.alias):
            with connection.cursor() as cursor:
                cursor.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ")
                cursor.execute("SET LOCAL lock_timeout = '2s'")
            return _rebuild(project, lineage, basis)
    except OperationalError:  # serialization failure, lock timeout: serve, do not keep
        return computed_tallies(project, lineage)


def _rebuild(project: Project, lineage: Lineage, basis: str) -> dict[Key, agreement.RatingTally]:
    generation = FigureState.objects.values_list("generation", flat=True).get(project=project)
    tallies = computed_tallies(project, lineage)
    FigureTally.objects.filter(project=project).delete()
    FigureTally.objects.create(project=project, entries=_entries(tallies))
    FigureState.objects.filter(project=project).update(built=generation, basis=basis)
    return tallies


def figures_compact() -> list[int]:
    """Sum the rows of every project that has more than COMPACT_AFTER_ROWS (beat runs this
    every JOB_SWEEP_SECONDS): otherwise a project labeled for weeks with nobody reading its
    figures would keep a row per label. Returns the projects compacted."""
    crowded = list(
        FigureTally.objects.values("project")
        .annotate(rows=Count("pk"))
        .filter(rows__gt=COMPACT_AFTER_ROWS)
        .values_list("project", flat=True)
    )
    for project in crowded:
        _compact(project)
    return crowded


def _compact(project: int) -> None:
    """Replace the project's rows by their sum: the rows deleted are exactly the rows summed
    (DELETE … RETURNING), so a row a kept write adds meanwhile stays, and counts once."""
    connection = connections[FigureTally.objects.db]
    with transaction.atomic(using=connection.alias), connection.cursor() as cursor:
        cursor.execute(
            "DELETE FROM annotation_figuretally WHERE project_id = %s RETURNING entries",
            [project],
        )
        summed = _summed([_document(entries) for (entries,) in cursor.fetchall()])
        FigureTally.objects.create(project_id=project, entries=_nonzero(summed))


def _nonzero(summed: dict[tuple, list]) -> list[Entry]:
    """Summed entries back as a row's entries, without those that came to nothing."""
    entries = []
    for key, (items, totals, squares) in summed.items():
        totals = {code: n for code, n in totals.items() if n}
        squares = {code: n for code, n in squares.items() if n}
        if items or totals or squares:
            entries.append([*key, items, totals, squares])
    return entries


@contextmanager
def figures_kept(item: Item) -> Iterator[None]:
    """Around a write of `item`'s labels or final label, inside its transaction and under its
    row lock: the project's tallies follow the write (a row with the item's new tally minus its
    old), and the stale-marking trigger lets the write's statements pass. Three statements
    (before, after, the row), each one round trip."""
    connection = connections[FigureTally.objects.db]
    if connection.vendor != "postgresql":
        yield
        return
    k = item.project.overlap_k
    before = _item_entries(_item_rows(connection, item.pk, kept="on"), k, sign=-1)
    yield
    after = _item_entries(_item_rows(connection, item.pk, kept="off"), k, sign=1)
    change = _nonzero(_summed([after, before]))
    if change:
        saved(FigureTally(project_id=item.project_id, entries=change))


@contextmanager
def figures_marked_stale(project: Project) -> Iterator[None]:
    """Around a bulk write of `project`'s labels (an import), inside its transaction: mark the
    tallies stale once, up front, with the trigger's own mark (migration 0023), and let the
    write's statements pass the stale-marking trigger of migration 0020, which would otherwise
    join every statement's rows to their items to find the projects to mark (at 10x, a label
    import's chunks: seconds). The next read, or the import job's figures_rebuilt_after_import,
    rebuilds them. Only `project`'s labels may be written inside."""
    connection = connections[FigureTally.objects.db]
    if connection.vendor != "postgresql":
        yield
        return
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT concord_figures_stale_mark(ARRAY[%s]::bigint[]), "  # the trigger's own mark
            "set_config('concord.figures_kept', 'on', true)",
            [project.pk],
        )
    yield  # an error in the write rolls the flag back with it (set_config is transactional)
    with connection.cursor() as cursor:
        cursor.execute("SELECT set_config('concord.figures_kept', 'off', true)")


def _item_rows(connection, item: int, *, kept: str) -> list[tuple]:
    """One item's labels (node, epoch seconds, the codes of its path) with its repository and
    its final label's type, and the trigger's flag set: migration 0021's function, whose plan
    PostgreSQL keeps per connection (the ten-table join took more to plan than to run, twice
    per submit)."""
    with connection.cursor() as cursor:
        cursor.execute("SELECT * FROM concord_item_figures(%s, %s)", [item, kept])
        return cursor.fetchall()


def _item_entries(rows: list[tuple], k: int, *, sign: int) -> list[Entry]:
    """One item's entries, times `sign`: tallies_from's rule for a single item, in plain Python
    (a dozen labels at most; the numpy path costs a submit more than the rest of it). The tests
    hold the two to the same figures."""
    owner, repo, final_type = rows[0][:3]
    labelled = [row[3:] for row in rows if row[3] is not None]  # node, seconds, codes
    paths = [tuple(code for code in codes if code) for _, _, *codes in labelled]
    groups = [("all", ""), ("repository", f"{owner}/{repo}")]
    if final_type:
        groups.append(("type", final_type))
    if len(labelled) >= k:  # in the week of its k-th label (labels.weeks_of)
        kth = sorted(seconds for _, seconds, *_ in labelled)[k - 1]
        groups.append(("week", monday_of(week_number(kth)).isoformat()))
    entries = []
    for depth, level in enumerate(LEVELS, start=1):
        counts = Counter(agreement.roll_up(path[-1], {path[-1]: path}, depth) for path in paths)
        counts.pop(None, None)
        if not counts:
            continue
        ratings = sum(counts.values())
        totals = {code: sign * n for code, n in counts.items()}
        squares = {code: sign * n * n for code, n in counts.items()}
        for grouping, group in groups:
            entries.append([level, grouping, group, ratings, sign, totals, squares])
    return entries
