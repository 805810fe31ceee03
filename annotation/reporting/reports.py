"""Reads behind the Reports section (leads and admins): the agreement dashboard, the confusion
view, the distribution of final labels, and the volunteers' weekly throughput.

The dashboard reads the project's agreement tallies (annotation.figures.tallies: kept up to date
label by label on PostgreSQL), grouped by final type, repository and ISO week at each level; the
confusion view reads a level's labels as sparse (item, category) pairs
(annotation.figures.labels.rated_pairs, the tallies' own rule).

Every cell is annotation.reporting.agreement.agreement_cell, the same computation as the
agreement page, its API and `manage.py agreement`: where coverage is uneven, Fleiss' kappa on the
items with the full number of ratings, how many items were left out and why, and Krippendorff's
alpha on every item with two ratings or more beside it.
"""

from __future__ import annotations

import datetime as dt
from collections import defaultdict
from dataclasses import dataclass

import numpy as np
from django.db.models import Count, Exists, OuterRef, QuerySet
from django.db.models.functions import TruncWeek

from annotation.figures.labels import fetch_rows, label_arrays, rated_pairs, rolled_up
from annotation.figures.tallies import LEVELS, Figures, project_figures
from annotation.models import Annotation, Item, MergedRepeat, Project, Resolution
from annotation.project_nodes import project_nodes
from annotation.reporting.agreement import ALL_ITEMS, Cell, agreement_cell, group_cell, group_names
from concord.input_checks import ascii_digits
from taxonomy.models import Level, bilingual_name, reader_name
from taxonomy.selectors import taxonomy_lineage

HEAT_CATEGORIES = 20  # categories drawn in the confusion heat map (the most confused ones)


# ---------------------------------------------------------------- agreement dashboard


@dataclass(frozen=True)
class WeekCells:
    week: str  # ISO week, e.g. "2025-W07"
    start: dt.date  # its Monday
    n_items: int  # items whose k-th label fell in the week
    cells: dict[str, Cell]  # level -> cell

    @property
    def cell_list(self) -> list[Cell]:
        return list(self.cells.values())


@dataclass(frozen=True)
class Dashboard:
    k: int
    levels: tuple[str, ...]
    by_type: list[dict[str, Cell]]  # one row per group (all items, then final types), by level
    by_repository: list[dict[str, Cell]]
    by_week: list[WeekCells]
    labels: int  # non-pilot labels counted

    def rows(self, which: str) -> list[tuple[str, list[Cell]]]:
        table = self.by_type if which == "type" else self.by_repository
        return [(row[self.levels[0]].group, [row[lv] for lv in self.levels]) for row in table]


def _cells_by_group(
    figures: Figures, project: Project, by: str, *, k: int
) -> list[dict[str, Cell]]:
    """All items first, then one row per group (by name), each with a cell per level (a level
    at which none of the group's items is rated gets the cell that says so)."""
    rows = [{lv: agreement_cell(ALL_ITEMS, lv, figures.tally(lv), k=k) for lv in LEVELS}]
    per_level = {lv: figures.groups(lv, by) for lv in LEVELS}
    names = group_names(project, by)
    for group in sorted(set().union(*per_level.values())):
        rows.append(
            {
                lv: group_cell(
                    by, names(group), lv, per_level[lv].get(group, figures.none(lv)), k=k
                )
                for lv in LEVELS
            }
        )
    return rows


def iso_week(monday: dt.date) -> str:
    year, week, _ = monday.isocalendar()
    return f"{year}-W{week:02d}"


def project_dashboard(project: Project) -> Dashboard:
    """Every figure of the agreement dashboard: per final type x level, per repository x level,
    per ISO week x level, from the project's tallies (annotation.figures.tallies)."""
    k = project.overlap_k
    figures = project_figures(project)
    by_week = []
    weeks = {lv: figures.groups(lv, "week") for lv in LEVELS}
    for monday in sorted(weeks[Level.TYPE]):
        week = iso_week(dt.date.fromisoformat(monday))
        cells = {
            lv: agreement_cell(week, lv, weeks[lv].get(monday, figures.none(lv)), k=k)
            for lv in LEVELS
        }
        n_items = weeks[Level.TYPE][monday].n_items  # every label counts at type level
        by_week.append(WeekCells(week, dt.date.fromisoformat(monday), n_items, cells))
    return Dashboard(
        k=k,
        levels=LEVELS,
        by_type=_cells_by_group(figures, project, "type", k=k),
        by_repository=_cells_by_group(figures, project, "repository", k=k),
        by_week=by_week,
        labels=figures.labels,
    )


# ---------------------------------------------------------------- confusion


@dataclass(frozen=True)
class Category:
    code: str
    name: str
    name_zh: str
    items: int  # items with at least one label in this category

    @property
    def shown_name(self) -> str:
        return bilingual_name(self.name, self.name_zh)

    @property
    def chart_name(self) -> str:
        return reader_name(self.name, self.name_zh)


@dataclass(frozen=True)
class Pair:
    a: Category
    b: Category
    items: int  # items labelled both a and b (by different volunteers)


@dataclass(frozen=True)
class Confusion:
    level: str
    categories: list[Category]  # the categories used at this level, by code
    counts: list[list[int]]  # symmetric; [i][i] = items in category i, [i][j] = items in both
    pairs: list[Pair]  # every pair with a shared item, most shared first
    n_items: int  # items with a label at this level
    n_mixed: int  # ... whose labels fall in two categories or more

    def heat_categories(self, limit: int = HEAT_CATEGORIES) -> list[int]:
        """Indices of the categories to draw: those in the most-shared pairs, up to `limit`."""
        order: dict[str, None] = {}
        for pair in self.pairs:
            for category in (pair.a, pair.b):
                if len(order) < limit:
                    order.setdefault(category.code, None)
        index = {c.code: i for i, c in enumerate(self.categories)}
        return sorted(index[code] for code in order)


def project_confusion(project: Project, *, level: str = Level.THEME) -> Confusion:
    """Which categories are mixed up: for every pair of categories at `level`, the number of
    items that carry a label in each (item-level co-occurrence among the item's labels)."""
    lineage = taxonomy_lineage(project.taxonomy)
    depth = Level.depth_of(level)
    rolled = rolled_up(lineage, depth)
    labels = Annotation.objects.filter(item__project=project, is_pilot=False)
    items, nodes = label_arrays(labels)
    codes = sorted({code for code in rolled.values() if code}, key=code_order)
    rated = rated_pairs(items, nodes, rolled, codes)
    from scipy import sparse  # type: ignore[import-untyped]  # lazily: heavy, few pages need it

    # items x categories, 1 where the item has a label in the category: sparse (a 10x project
    # has 387,420 items), its product with itself is the small categories x categories table
    present = sparse.csr_matrix(
        (np.ones(len(rated.row), dtype=np.int64), (rated.row, rated.column)),
        shape=(len(rated.items), len(codes)),
    )
    shared = (present.T @ present).toarray()  # [i, j]: items with a label in i and one in j
    in_use = np.diag(shared) > 0  # every category of the level was passed in
    categories_used = [c for c, kept in zip(codes, in_use, strict=True) if kept]
    together = shared[np.ix_(in_use, in_use)]
    names = names_by_code(project.taxonomy.nodes.all())
    categories = []
    for i, code in enumerate(categories_used):
        name, name_zh = names.get(code, ("", ""))
        categories.append(Category(code, name, name_zh, int(together[i, i])))
    pairs = [
        Pair(categories[i], categories[j], int(together[i, j]))
        for i, j in zip(*np.triu_indices(len(categories), k=1), strict=True)
        if together[i, j]
    ]
    pairs.sort(key=lambda p: (-p.items, p.a.code, p.b.code))
    return Confusion(
        level=level,
        categories=categories,
        counts=together.tolist(),
        pairs=pairs,
        n_items=len(rated.items),
        n_mixed=int((np.bincount(rated.row, minlength=len(rated.items)) > 1).sum()),
    )


def code_order(code: str) -> tuple:
    """Sort key for codes: C.2 before C.10 (numbers as numbers)."""
    return tuple(
        (0, int(part), "") if ascii_digits(part) else (1, 0, part) for part in code.split(".")
    )


class UnknownPair(ValueError):
    """The two codes are not categories of one level of the project's taxonomy."""


def pair_level(project: Project, a: str, b: str) -> str:
    levels = dict(project.taxonomy.nodes.filter(code__in=[a, b]).values_list("code", "level"))
    if a == b or len(levels) != 2 or levels[a] != levels[b]:
        raise UnknownPair(
            f"Pick two different categories of the same level of {project.taxonomy}; "
            f"got {a!r} and {b!r}."
        )
    return levels[a]


def items_with_pair(project: Project, a: str, b: str) -> QuerySet[Item]:
    """Items of the project with a (non-pilot) label under `a` and another under `b`."""
    pair_level(project, a, b)
    lineage = taxonomy_lineage(project.taxonomy)
    items = project.items.select_related("issue", "resolution__node")
    for code in (a, b):
        nodes = [pk for pk, path in lineage.items() if code in path]
        under = Annotation.objects.filter(item=OuterRef("pk"), is_pilot=False, node_id__in=nodes)
        items = items.filter(Exists(under))
    return items.order_by("pk")


def labels_of(items: list[Item]) -> dict[int, list[str]]:
    """item id -> the codes of its labels, sorted (one query for a page of items)."""
    out: dict[int, list[str]] = defaultdict(list)
    rows = Annotation.objects.filter(item__in=items, is_pilot=False).values_list(
        "item_id", "node__code"
    )
    for item, code in rows.order_by("item_id", "node__code"):
        out[item].append(code)
    return out


# ---------------------------------------------------------------- distribution


@dataclass(frozen=True)
class Tally:
    code: str
    name: str
    name_zh: str
    items: int

    @property
    def shown_name(self) -> str:
        return bilingual_name(self.name, self.name_zh)

    @property
    def chart_name(self) -> str:
        return reader_name(self.name, self.name_zh)


@dataclass(frozen=True)
class RepositoryCounts:
    repository: str
    by_type: dict[str, int]  # type code -> final labels
    total: int


@dataclass(frozen=True)
class Distribution:
    total: int
    by_type: list[Tally]  # every type of the taxonomy, in taxonomy order
    by_theme: list[Tally]  # themes with at least one final label, most first
    by_repository: list[RepositoryCounts]  # by name
    merged_repeats: dict[str, int]  # repository -> repeated file rows merged at import


def merged_repeats_by_repository(items: QuerySet[Item]) -> dict[tuple[str, str, str], int]:
    """How many study-file rows that repeated an issue URL were merged into these items at import,
    per (host, owner, repo): one aggregate query."""
    rows = (
        MergedRepeat.objects.filter(item__in=items)
        .values_list("item__issue__host", "item__issue__owner", "item__issue__repo")
        .annotate(n=Count("pk"))
        .order_by()
    )
    return {(host, owner, repo): n for host, owner, repo, n in rows}


def names_by_code(nodes: QuerySet) -> dict[str, tuple[str, str]]:
    """code -> (English name, Chinese name or ""), for tables that show bilingual_name."""
    return {code: (name, zh) for code, name, zh in nodes.values_list("code", "name", "name_zh")}


def project_distribution(project: Project) -> Distribution:
    """Final labels per type, per theme and per repository x type: one aggregate query."""
    lineage = taxonomy_lineage(project.taxonomy)
    rows = fetch_rows(
        Resolution.objects.filter(item__project=project)
        .values_list("item__issue__owner", "item__issue__repo", "node_id")
        .annotate(n=Count("pk"))
        .order_by()
    )
    per_type: dict[str, int] = defaultdict(int)
    per_theme: dict[str, int] = defaultdict(int)
    per_repo: dict[str, dict[str, int]] = defaultdict(lambda: defaultdict(int))
    for owner, repo, node, n in rows:
        path = lineage[node]
        per_type[path[0]] += n
        if len(path) > 1:
            per_theme[path[1]] += n
        per_repo[f"{owner}/{repo}"][path[0]] += n
    nodes = (  # the project's categories: not another project's
        project_nodes(project, live=False)
        .filter(level__in=[Level.TYPE, Level.THEME])
        .order_by("position", "code")
    )
    names = names_by_code(nodes)
    types = [c for c, lv in nodes.values_list("code", "level") if lv == Level.TYPE]
    themes = sorted(per_theme, key=lambda c: (-per_theme[c], c))
    return Distribution(
        total=sum(per_type.values()),
        by_type=[Tally(c, *names[c], per_type.get(c, 0)) for c in types],
        by_theme=[Tally(c, *names.get(c, ("", "")), per_theme[c]) for c in themes],
        by_repository=[
            RepositoryCounts(repo, {c: counts.get(c, 0) for c in types}, sum(counts.values()))
            for repo, counts in sorted(per_repo.items(), key=lambda kv: kv[0].lower())
        ],
        merged_repeats={
            f"{owner}/{repo}": n
            for (_, owner, repo), n in sorted(
                merged_repeats_by_repository(project.items.all()).items(),
                key=lambda kv: (kv[0][1].lower(), kv[0][2].lower()),
            )
        },
    )


# ---------------------------------------------------------------- volunteers


@dataclass(frozen=True)
class Throughput:
    weeks: list[dt.date]  # Mondays, ascending
    volunteers: list[tuple[int, str]]  # (user id, name)
    labels: list[list[int]]  # [volunteer][week]


def volunteer_throughput(project: Project, names: dict[int, str]) -> Throughput:
    """Labels per volunteer per ISO week (of Annotation.created_at, UTC): one aggregate query.
    `names` comes from annotation.reporting.stats.volunteer_stats, which the page shows beside
    it."""
    rows = list(
        Annotation.objects.filter(item__project=project)
        .annotate(week=TruncWeek("created_at", tzinfo=dt.UTC))
        .values_list("volunteer_id", "week")
        .annotate(n=Count("pk"))
        .order_by()
    )
    weeks = sorted({_monday(week) for _, week, _ in rows})
    column = {week: j for j, week in enumerate(weeks)}
    volunteers = sorted({v for v, _, _ in rows}, key=lambda v: (names.get(v, str(v)).lower(), v))
    row = {v: i for i, v in enumerate(volunteers)}
    labels = [[0] * len(weeks) for _ in volunteers]
    for volunteer, week, n in rows:
        labels[row[volunteer]][column[_monday(week)]] += n
    return Throughput(weeks, [(v, names.get(v, str(v))) for v in volunteers], labels)


def _monday(value: dt.date | dt.datetime) -> dt.date:
    return value.date() if isinstance(value, dt.datetime) else value
