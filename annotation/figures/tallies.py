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

Both ways go through `tallies_from`: one rule for what an item contributes where.
"""

from __future__ import annotations

import hashlib
import json
from collections import defaultdict
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass

import numpy as np
from django.db import OperationalError, connections, transaction
from django.db.models import Count

from annotation.figures.labels import (
    LabelArrays,
    fetch_rows,
    project_labels,
    rolled_up,
    weeks_of,
)
from annotation.models import Annotation, FigureState, FigureTally, Item, Project, Resolution
from ingest.models import Issue
from taxonomy import agreement
from taxonomy.models import Level, Node
from taxonomy.selectors import taxonomy_lineage

LEVELS = tuple(Level.values)  # type, theme, subtheme: depth 1, 2, 3
GROUPINGS = ("all", "type", "repository", "week")
# A project's rows are summed into one past this many (a kept write adds one): by the read that
# finds them, and by beat (figures_compact) for the projects nobody reads meanwhile.
COMPACT_AFTER_ROWS = 300

Key = tuple[str, str, str]  # level, grouping, group
Lineage = dict[int, tuple[str, ...]]


# ---------------------------------------------------------------- tallies from labels


@dataclass(frozen=True)
class Members:
    """Which items belong to which group of one grouping: `items[i]` is in group `names[i]`."""

    items: np.ndarray
    names: list[str]


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
    """Every (level, grouping, group) tally of these labels: the one rule, for a whole project
    (a rebuild) as for one item (a kept write). `members` holds the type and repository
    groupings; `all` and `week` come from the labels."""
    weeks = weeks_of(labels, k)
    week_members = Members(
        np.concatenate([*weeks.values(), np.zeros(0, dtype=np.int64)]),
        [monday.isoformat() for monday, ids in weeks.items() for _ in range(len(ids))],
    )
    groupings = {"type": members["type"], "repository": members["repository"], "week": week_members}
    codes = codes_by_level(lineage)
    out: dict[Key, agreement.RatingTally] = {}
    for depth, level in enumerate(LEVELS, start=1):
        matrix = agreement.rating_matrix_from_labels(
            labels.items, labels.nodes, rolled_up(lineage, depth), categories=codes[level]
        )
        rows = np.asarray(matrix.items, dtype=np.int64)
        if len(rows):  # no entry for no rated item, as when kept
            out[(level, "all", "")] = agreement.tally_of(matrix)
        for grouping, of in groupings.items():
            for name, tally in _tallies_by_group(matrix, rows, of).items():
                out[(level, grouping, name)] = tally
    return out


def _tallies_by_group(
    matrix: agreement.RatingMatrix, rows: np.ndarray, members: Members
) -> dict[str, agreement.RatingTally]:
    """tally_of each group's rows of the matrix (rows: its item ids, ascending)."""
    names = sorted(set(members.names))
    index = {name: i for i, name in enumerate(names)}
    group = np.full(len(rows), -1, dtype=np.int64)
    if len(rows) and len(members.items):
        where = np.searchsorted(rows, members.items).clip(0, len(rows) - 1)
        found = rows[where] == members.items
        codes = np.fromiter((index[n] for n in members.names), np.int64, len(members.names))
        group[where[found]] = codes[found]
    out = {}
    for i in np.unique(group[group >= 0]).tolist():
        mask = group == i
        out[names[i]] = agreement.tally_of(
            agreement.RatingMatrix(rows[mask], matrix.categories, matrix.counts[mask])
        )
    return out


def project_members(project: Project, lineage: Lineage) -> dict[str, Members]:
    """The type (final label's type code) and repository (owner/repo) of every item."""
    finals = fetch_rows(
        Resolution.objects.filter(item__project=project).values_list("item_id", "node_id")
    )
    repos = fetch_rows(
        Item.objects.filter(project=project).values_list("pk", "issue__owner", "issue__repo")
    )
    return _members([(item, lineage[node][0]) for item, node in finals], repos)


def _members(finals: list[tuple], repos: list[tuple]) -> dict[str, Members]:
    """Members from (item, final type code) and (item, owner, repo) rows."""
    return {
        "type": Members(
            np.array([item for item, _ in finals], dtype=np.int64),
            [code for _, code in finals],
        ),
        "repository": Members(
            np.array([item for item, _, _ in repos], dtype=np.int64),
            [f"{owner}/{repo}" for _, owner, repo in repos],
        ),
    }


def computed_tallies(project: Project, lineage: Lineage) -> dict[Key, agreement.RatingTally]:
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


def _entries(tallies: dict[Key, agreement.RatingTally], sign: int = 1) -> list[Entry]:
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
                    sign * int(tally.items[r]),
                    {tally.categories[j]: sign * int(totals[j]) for j in used},
                    {tally.categories[j]: sign * int(squares[j]) for j in used},
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
    before = _item_tallies(connection, item.pk, k, kept="on")
    yield
    after = _item_tallies(connection, item.pk, k, kept="off")
    change = _nonzero(_summed([_entries(after), _entries(before, sign=-1)]))
    if change:
        FigureTally.objects.create(project_id=item.project_id, entries=change)


# One item's labels with their nodes' paths (type, theme, sub-theme: three levels at most),
# its final label's type and its repository, in one statement; the flag the trigger reads is
# set in the same round trip.
_ITEM_SQL = f"""
SELECT set_config('concord.figures_kept', %s, true);
SELECT s.owner, s.repo, COALESCE(rg.code, rp.code, rn.code),
       a.node_id, FLOOR(EXTRACT(EPOCH FROM a.created_at))::bigint, g.code, p.code, n.code
FROM {Item._meta.db_table} i
JOIN {Issue._meta.db_table} s ON s.id = i.issue_id
LEFT JOIN {Resolution._meta.db_table} r ON r.item_id = i.id
LEFT JOIN {Node._meta.db_table} rn ON rn.id = r.node_id
LEFT JOIN {Node._meta.db_table} rp ON rp.id = rn.parent_id
LEFT JOIN {Node._meta.db_table} rg ON rg.id = rp.parent_id
LEFT JOIN {Annotation._meta.db_table} a ON a.item_id = i.id AND NOT a.is_pilot
LEFT JOIN {Node._meta.db_table} n ON n.id = a.node_id
LEFT JOIN {Node._meta.db_table} p ON p.id = n.parent_id
LEFT JOIN {Node._meta.db_table} g ON g.id = p.parent_id
WHERE i.id = %s
"""  # noqa: S608 (table names from the models)


def _item_tallies(connection, item: int, k: int, *, kept: str) -> dict[Key, agreement.RatingTally]:
    """tallies_from one item's labels, with the lineage of the nodes they use."""
    with connection.cursor() as cursor:
        cursor.execute(_ITEM_SQL, [kept, item])
        rows = cursor.fetchall()
    owner, repo, final_type = rows[0][:3]
    labelled = [row[3:] for row in rows if row[3] is not None]
    lineage = {node: tuple(c for c in codes if c) for node, _, *codes in labelled}
    labels = LabelArrays(
        np.full(len(labelled), item, dtype=np.int64),
        np.array([row[0] for row in labelled], dtype=np.int64),
        np.array([row[1] for row in labelled], dtype=np.int64),
    )
    finals = [(item, final_type)] if final_type else []
    members = _members(finals, [(item, owner, repo)])
    return tallies_from(lineage, labels, members, k)
