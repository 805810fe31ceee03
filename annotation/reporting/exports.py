"""CSV exports of a project: the study format, one row per label (long), final labels, and
per-repository statistics (the study's Table I).

Every writer is a generator of rows (lists of cells). Items are read in id order, CHUNK at a
time (keyset pages: `pk > last`), with their labels fetched per page, so memory stays flat
however big the project is and no cursor or transaction stays open while a client reads a
stream. `csv_lines` turns rows into lines: UTF-8, `\\r\\n` line ends (the csv module's default,
RFC 4180), and optionally a byte-order mark first, which spreadsheet programs need to read
UTF-8.

Formula injection: a spreadsheet runs a cell that starts with `=`, `+`, `-` or `@` (or with a
tab or carriage return that some programs skip before one) as a formula. Every such cell is
written with a leading `'`, which spreadsheets show as text. The guard applies to every cell
alike; Concord's own values (codes like `C.1`, URLs, dates, counts, rates) never start with
those characters, so in practice it changes free text only: summaries, reasons, names.

Rows come in item-id order, which is import order: a study file exported after an import lists
its issues in the file's order, and importing an export into an empty project and exporting
again gives the same bytes.
"""

from __future__ import annotations

import csv
import os
import re
import tempfile
from collections import Counter, defaultdict
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, fields
from datetime import UTC, date, datetime, time, timedelta
from pathlib import Path

from django.contrib.auth import get_user_model
from django.db.models import Count, Exists, Max, Min, OuterRef, Q, QuerySet
from django.db.models.functions import ExtractYear

from annotation.archive.writing import archive_rows
from annotation.models import (
    Annotation,
    ExportFormat,
    Item,
    Membership,
    PackageKind,
    PackageLine,
    Project,
    ScreeningVote,
    Stage,
)
from annotation.project_nodes import project_nodes
from annotation.reporting.reports import merged_repeats_by_repository
from concord.errors import ConcordError
from taxonomy.models import Level
from taxonomy.selectors import taxonomy_lineage

CHUNK = 2000  # items per page: a few thousand labels per query, a few MB at most
BOM = "\ufeff"
FORMULA_TRIGGERS = frozenset("=+-@\t\r")
URL_COLUMN, FINAL_COLUMN = "Issue_URL", "Final_Label"
REPOSITORY = re.compile(r"^[^/\s]+/[^/\s]+$")

# The issue, then its label's type, theme and sub-theme (codes and names): in both row formats.
ISSUE_COLUMNS = ["Issue_URL", "Repository", "Issue_Created"]
PATH_COLUMNS = [
    f"{level}_{part}" for level in ("Type", "Theme", "Subtheme") for part in ("Code", "Name")
]
LONG_HEADER = [
    *ISSUE_COLUMNS,
    "Volunteer",
    *PATH_COLUMNS,
    "Summary",
    "Labeled_At",
    "Taxonomy_Version",
]
FINAL_HEADER = [
    *ISSUE_COLUMNS,
    *PATH_COLUMNS,
    "Method",
    "Resolver",
    "Reason",
    "Labels",
    "Summaries",
]
SUMMARY_SEPARATOR = " | "


@dataclass(frozen=True)
class ExportOptions:
    """What to export. `level` matters for the study format only (the other formats show each
    label's whole path); the filters apply to every format."""

    format: str
    level: str
    repository: str = ""  # owner/repo
    type: str = ""  # code of the final label's type, e.g. "C"
    stage: str = ""
    created_from: date | None = None  # the issue's creation date on the tracker, UTC, inclusive
    created_until: date | None = None
    bom: bool = False

    def as_json(self) -> dict:
        data = {f.name: getattr(self, f.name) for f in fields(self)}
        for key in ("created_from", "created_until"):
            data[key] = data[key].isoformat() if data[key] else None
        return data

    @property
    def file_name_part(self) -> str:
        return f"{self.format}-{self.level}" if self.format == ExportFormat.STUDY else self.format


def export_options(
    project: Project,
    *,
    format: str,
    level: str | None = None,
    repository: str | None = "",
    type: str | None = "",
    stage: str | None = "",
    created_from: date | str | None = None,
    created_until: date | str | None = None,
    bom: bool | None = None,
) -> ExportOptions:
    """Checked options for `project`; a ConcordError says what is wrong. Pages, the API, the
    command and the background job all come through here."""
    if format not in ExportFormat.values:
        raise ConcordError(f"Unknown export format {format!r}; use one of {ExportFormat.values}.")
    level = level or project.label_depth
    if level not in Level.values:
        raise ConcordError(f"Unknown level {level!r}; use one of {Level.values}.")
    repository = (repository or "").strip()
    if repository and not REPOSITORY.match(repository):
        raise ConcordError(f"Write the repository as owner/repo, not {repository!r}.")
    type = (type or "").strip()
    types = project_nodes(project, live=False).filter(level=Level.TYPE)  # not another project's
    if type and not types.filter(code=type).exists():
        codes = list(types.order_by("position", "code").values_list("code", flat=True))
        raise ConcordError(f"{type!r} is not a type of {project.taxonomy}; use one of {codes}.")
    stage = stage or ""
    if stage and stage not in Stage.values:
        raise ConcordError(f"Unknown stage {stage!r}; use one of {Stage.values}.")
    start, end = _date(created_from, "from"), _date(created_until, "until")
    if start and end and start > end:
        raise ConcordError(f"The date window is empty: {start} is after {end}.")
    return ExportOptions(
        format=format,
        level=level,
        repository=repository,
        type=type,
        stage=stage,
        created_from=start,
        created_until=end,
        bom=bom_by_default(format) if bom is None else bool(bom),
    )


def bom_by_default(format: str) -> bool:
    """Excel reads a CSV as UTF-8 only after a byte-order mark, so a file of people's words
    (titles, summaries, Chinese names) starts with one unless asked not to; the study format,
    URLs and codes only, goes without, byte for byte like the study's own files."""
    return format != ExportFormat.STUDY


def _date(value: date | str | None, name: str) -> date | None:
    if value is None or value == "":
        return None
    if isinstance(value, date):
        return value
    try:
        return date.fromisoformat(value)
    except ValueError as exc:
        raise ConcordError(f"The {name} date must be YYYY-MM-DD, not {value!r}.") from exc


# ---------------------------------------------------------------- entry points


def export_rows(project: Project, options: ExportOptions) -> Iterator[list]:
    """The header, then the data rows, of `options.format`."""
    writer = {
        ExportFormat.STUDY: study_rows,
        ExportFormat.LONG: long_rows,
        ExportFormat.FINAL: final_rows,
        ExportFormat.REPOSITORIES: repository_rows,
    }[ExportFormat(options.format)]
    return writer(project, options)


def export_lines(project: Project, options: ExportOptions) -> Iterator[str]:
    """CSV text, one record per string (a record may span lines inside quotes)."""
    return csv_lines(export_rows(project, options), bom=options.bom)


# The formats that are one CSV (and may be streamed); the replication package and the project
# archive are zips of files, written by an export job.
ZIP_FORMATS = (ExportFormat.PACKAGE, ExportFormat.ARCHIVE)
CSV_FORMATS = tuple(f for f in ExportFormat.values if f not in ZIP_FORMATS)


def export_count(project: Project, options: ExportOptions) -> int:
    """How many data rows the export will have (one count query; the progress bar's total)."""
    if options.format == ExportFormat.ARCHIVE:
        return archive_rows(project)
    items = filtered_items(project, options)
    if options.format in (ExportFormat.STUDY, ExportFormat.PACKAGE):
        return _study_items(items).count()
    if options.format == ExportFormat.LONG:
        return Annotation.objects.filter(item__in=items).count()
    if options.format == ExportFormat.FINAL:
        return items.filter(resolution__isnull=False).count()
    repositories = items.values("issue__host", "issue__owner", "issue__repo").distinct()
    return repositories.count() + 1  # and the totals row


def export_to_file(
    project: Project,
    options: ExportOptions,
    path: Path,
    *,
    progress: Callable[[int], object] | None = None,
    every: int = 5000,
) -> int:
    """Write the export to `path` atomically: into a temporary file beside it, renamed over
    `path` only once complete, so a failure or a kill never leaves a half file under that name.
    Returns the number of data rows; `progress(rows)` is called every `every` rows."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, temporary = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".part")
    rows = -1  # the header is no data row
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="") as handle:
            for line in export_lines(project, options):
                handle.write(line)
                rows += 1
                if progress is not None and rows and rows % every == 0:
                    progress(rows)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(temporary, path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise
    return rows


class _Line:
    """A file-like object whose write() hands the csv module's text straight back."""

    def write(self, text: str) -> str:
        return text


def csv_lines(rows: Iterable[list[str]], *, bom: bool = False) -> Iterator[str]:
    """CSV records of `rows`, whose cells are all str (the writers see to it)."""
    writer = csv.writer(_Line())
    prefix = BOM if bom else ""
    for row in rows:
        # the formula guard; cells are str already (this line runs for every cell of the export)
        cells = ["'" + cell if cell[:1] in FORMULA_TRIGGERS else cell for cell in row]
        yield prefix + writer.writerow(cells)
        prefix = ""


# ---------------------------------------------------------------- shared reads


def filtered_items(project: Project, options: ExportOptions) -> QuerySet[Item]:
    items = Item.objects.filter(project=project)
    if options.repository:
        owner, repo = options.repository.split("/", 1)
        items = items.filter(issue__owner__iexact=owner, issue__repo__iexact=repo)
    if options.type:
        lineage = taxonomy_lineage(project.taxonomy)
        of_type = [pk for pk, path in lineage.items() if path[0] == options.type]
        items = items.filter(resolution__node_id__in=of_type)
    if options.stage:
        items = items.filter(stage=options.stage)
    if options.created_from:
        items = items.filter(issue__created_at__gte=_midnight(options.created_from))
    if options.created_until:
        items = items.filter(issue__created_at__lt=_midnight(options.created_until, days=1))
    return items


def _midnight(day: date, days: int = 0) -> datetime:
    return datetime.combine(day + timedelta(days=days), time.min, tzinfo=UTC)


def _pages(items: QuerySet[Item], *columns: str) -> Iterator[list[tuple]]:
    """(pk, *columns) of `items` in id order, CHUNK rows per query."""
    last = 0
    while True:
        page = list(items.filter(pk__gt=last).order_by("pk").values_list("pk", *columns)[:CHUNK])
        if not page:
            return
        yield page
        last = page[-1][0]


def _labelled_pages(items: QuerySet[Item], *columns: str) -> Iterator[list[tuple]]:
    """_pages of only the items with a label. Early in a large project most items have none,
    and reading them all cost 1.8 s for 1,000 labels in a 38,742-item project (issue 17). The
    labelled ids come from range scans of the label table's item index over the items' id
    range, CHUNK distinct ids a scan; asked as a join, the planner expects half of the items
    labelled and reads every label of every project (tests.bench.exports, "long, sparse")."""
    bounds = items.aggregate(low=Min("pk"), high=Max("pk"))
    if bounds["low"] is None:
        return
    labelled = (
        Annotation.objects.filter(item_id__lte=bounds["high"])
        .order_by("item_id")
        .values_list("item_id", flat=True)
        .distinct()
    )
    last = bounds["low"] - 1
    # CHUNK ids at a time, each page after the last: memory stays flat at any size (all the ids
    # at once, 387,420 of them at 10x, added 36 MB to the export's peak).
    while chunk := list(labelled.filter(item_id__gt=last)[:CHUNK]):
        last = chunk[-1]
        # Ids of other projects' items in the range drop out here, by the items' own filters.
        page = list(items.filter(pk__in=chunk).order_by("pk").values_list("pk", *columns))
        if page:
            yield page


def _page_labels(page: list[tuple], *columns: str) -> Iterator[tuple]:
    """(item id, *columns) of the labels on a page's items: one range scan of the label table's
    item index instead of an IN list of CHUNK ids, whose parameters cost more to prepare than
    the scan. Labels of other items in the id range (filtered out, or of another project) are
    skipped; pages do not overlap, so each label is read at most once per export."""
    wanted = {row[0] for row in page}
    labels = Annotation.objects.filter(item_id__gte=page[0][0], item_id__lte=page[-1][0])
    for row in labels.values_list("item_id", *columns).order_by():
        if row[0] in wanted:
            yield row


def export_volunteers(project: Project) -> list[tuple[int, str]]:
    """(user id, username) of everyone with a study column or a label in the project: study
    columns first in their order, then the others by username. The LabelJ order of the study
    format, and the order of labels within an item in the other formats."""
    with_column = list(
        Membership.objects.filter(project=project, column__isnull=False)
        .order_by("column")
        .values_list("user_id", "user__username")
    )
    placed = {user for user, _ in with_column}
    labellers = Annotation.objects.filter(item__project=project).values("volunteer_id")
    others = (
        get_user_model()
        .objects.filter(pk__in=labellers)
        .exclude(pk__in=placed)
        .order_by("username")
        .values_list("pk", "username")
    )
    return with_column + list(others)


def study_columns(project: Project) -> list[tuple[str, str]]:
    """The study format's sidecar: (`LabelJ`, username) for every label column."""
    return [(f"Label{j}", name) for j, (_, name) in enumerate(export_volunteers(project), 1)]


class _Tree:
    """The taxonomy as the writers need it: each node's codes from its type down, and names."""

    def __init__(self, project: Project) -> None:
        self.lineage = taxonomy_lineage(project.taxonomy)
        self.names = dict(project.taxonomy.nodes.values_list("code", "name"))
        self.version = project.taxonomy.version
        self._path_cells: dict[int, list[str]] = {}

    def rolled_up(self, depth: int) -> dict[int | None, str]:
        """Node id -> its code rolled up to `depth`; blank if the node is coarser (or none)."""
        rolled: dict[int | None, str] = {
            node: path[depth - 1] if len(path) >= depth else ""
            for node, path in self.lineage.items()
        }
        rolled[None] = ""
        return rolled

    def path_cells(self, node: int | None) -> list[str]:
        """Type, theme and sub-theme as code, name pairs; blank below the node's own level."""
        if node is None:
            return [""] * 6
        cells = self._path_cells.get(node)
        if cells is None:
            path = self.lineage[node]
            cells = []
            for depth in range(3):
                code = path[depth] if len(path) > depth else ""
                cells += [code, self.names[code] if code else ""]
            self._path_cells[node] = cells
        return cells


def _issue_cells(url: str, owner: str, repo: str, created: datetime | None) -> list[str]:
    """The ISSUE_COLUMNS of a row."""
    return [url, f"{owner}/{repo}", _day(created)]


def _day(moment: datetime | None) -> str:
    return moment.astimezone(UTC).date().isoformat() if moment else ""


def _instant(moment: datetime | None) -> str:
    if moment is None:
        return ""
    # isoformat is several times faster than strftime, which shows at 271k labels
    return moment.astimezone(UTC).isoformat(timespec="seconds")[:-6] + "Z"


def study_years(items: QuerySet[Item]) -> Iterator[tuple]:
    """How many of `items` each repository has per year (host, owner, repo, year, n): an item's
    year is that of the first yearly list of a replication package listing it (the study's own
    filing: a Gitee issue opened on 31 December in UTC may be filed under the next year, in
    Beijing time), else the year its tracker says it was created (None if unknown). Two
    aggregate queries: the first listings (one per item, PackageLine.repeat false), and the
    items no list holds."""
    repo = ("issue__host", "issue__owner", "issue__repo")
    first = PackageLine.objects.filter(file__kind=PackageKind.YEAR_LIST, repeat=False)
    listed = first.filter(item__in=items).values_list(*(f"item__{r}" for r in repo), "file__year")
    unlisted = items.exclude(Exists(first.filter(item=OuterRef("pk"))))
    created = unlisted.annotate(year=ExtractYear("issue__created_at")).values_list(*repo, "year")
    yield from listed.annotate(n=Count("pk")).order_by()
    yield from created.annotate(n=Count("pk")).order_by()


def _study_items(items: QuerySet[Item]) -> QuerySet[Item]:
    """Items with a label or a final label: the rows of a study file."""
    labelled = Exists(Annotation.objects.filter(item=OuterRef("pk")))
    return items.filter(Q(labelled) | Q(resolution__isnull=False))


# ---------------------------------------------------------------- the four formats


def study_rows(project: Project, options: ExportOptions) -> Iterator[list]:
    """`Issue_URL,Label1..LabelK,Final_Label` at `options.level`: a label deeper than the level
    counts as its ancestor there, a coarser one is blank (as the importer reads blanks: no
    label). Columns follow `export_volunteers`; items without any label or final label are
    left out."""
    header, rows = study_table(project, options)
    yield header
    for _, row in rows:
        yield row


def study_table(
    project: Project, options: ExportOptions, *, ids: tuple[int, int] | None = None
) -> tuple[list[str], Iterator[tuple[int, list[str]]]]:
    """The study format's header, and its data rows with their item ids (the replication
    package places each row by its item); `ids` (first, last): only the items in that range
    (the package import reads one label file's rows at a time)."""
    volunteers = export_volunteers(project)
    width = len(volunteers)
    header = [URL_COLUMN, *(f"Label{j}" for j in range(1, width + 1)), FINAL_COLUMN]
    return header, _study_item_rows(project, options, volunteers, ids)


def _study_item_rows(
    project: Project,
    options: ExportOptions,
    volunteers: list[tuple[int, str]],
    ids: tuple[int, int] | None,
) -> Iterator[tuple[int, list[str]]]:
    column_of = {user: j for j, (user, _) in enumerate(volunteers)}
    width = len(volunteers)
    rolled = _Tree(project).rolled_up(Level.depth_of(options.level))
    items = _study_items(filtered_items(project, options))
    if ids is not None:
        items = items.filter(pk__range=ids)
    for page in _pages(items, "issue__url", "resolution__node_id"):
        labels: dict[int, list[str]] = {pk: [""] * width for pk, _, _ in page}
        for item, volunteer, node in _page_labels(page, "volunteer_id", "node_id"):
            labels[item][column_of[volunteer]] = rolled[node]
        for pk, url, final in page:
            yield pk, [url, *labels[pk], rolled[final]]


def long_rows(project: Project, options: ExportOptions) -> Iterator[list]:
    """One row per label: the issue, the volunteer, the label's type, theme and sub-theme (code
    and name each; blank below the level the volunteer chose), summary and time."""
    volunteers = export_volunteers(project)
    name_of = dict(volunteers)
    order = {user: j for j, (user, _) in enumerate(volunteers)}
    tree = _Tree(project)
    yield LONG_HEADER
    items = filtered_items(project, options)
    columns = ("issue__url", "issue__owner", "issue__repo", "issue__created_at")
    for page in _labelled_pages(items, *columns):
        by_item = defaultdict(list)
        for item, *label in _page_labels(page, "volunteer_id", "node_id", "summary", "created_at"):
            by_item[item].append(label)
        for pk, url, owner, repo, created in page:
            issue = _issue_cells(url, owner, repo, created)
            for volunteer, node, summary, at in sorted(by_item[pk], key=lambda v: order[v[0]]):
                yield [
                    *issue,
                    name_of[volunteer],
                    *tree.path_cells(node),
                    summary,
                    _instant(at),
                    tree.version,
                ]


def final_rows(project: Project, options: ExportOptions) -> Iterator[list]:
    """One row per item with a final label: the final type, theme and sub-theme, how it was
    reached and by whom, how many labels the item has, and the volunteers' summaries."""
    order = {user: j for j, (user, _) in enumerate(export_volunteers(project))}
    tree = _Tree(project)
    yield FINAL_HEADER
    items = filtered_items(project, options).filter(resolution__isnull=False)
    columns = (
        "issue__url",
        "issue__owner",
        "issue__repo",
        "issue__created_at",
        "resolution__node_id",
        "resolution__method",
        "resolution__resolver__username",
        "resolution__reason",
    )
    for page in _pages(items, *columns):
        labels: dict[int, list[tuple[int, str]]] = defaultdict(list)
        for item, volunteer, summary in _page_labels(page, "volunteer_id", "summary"):
            labels[item].append((order[volunteer], summary))
        for pk, url, owner, repo, created, node, method, resolver, reason in page:
            summaries = [text.strip() for _, text in sorted(labels[pk]) if text.strip()]
            yield [
                *_issue_cells(url, owner, repo, created),
                *tree.path_cells(node),
                method,
                resolver or "",
                reason,
                str(len(labels[pk])),
                SUMMARY_SEPARATOR.join(summaries),
            ]


@dataclass
class _RepositoryCounts:
    by_year: Counter
    by_type: Counter
    issues: int = 0
    screened: int = 0
    excluded: int = 0
    merged_repeats: int = 0

    def __add__(self, other: _RepositoryCounts) -> _RepositoryCounts:
        return _RepositoryCounts(
            self.by_year + other.by_year,
            self.by_type + other.by_type,
            self.issues + other.issues,
            self.screened + other.screened,
            self.excluded + other.excluded,
            self.merged_repeats + other.merged_repeats,
        )


UNKNOWN_YEAR = "Year_Unknown"


def repository_rows(project: Project, options: ExportOptions) -> Iterator[list]:
    """Per repository, like the study's Table I: issues (items not excluded in screening) by
    year (study_years: a package's yearly list, else the tracker's date), one column per
    year present (plus Year_Unknown for issues imported without either); final labels by type
    (one column per type of the taxonomy, headed by its name); how many items were screened (a
    screening vote, or excluded), how many excluded, the false-positive rate excluded /
    screened, and how many rows of imported study files repeated an issue URL and were merged
    into the first (so the counts can be matched to the files). A totals row ends the table.
    Four aggregate queries, whatever the project's size."""
    items = filtered_items(project, options)
    kept = items.exclude(stage=Stage.EXCLUDED)
    repo = ("issue__host", "issue__owner", "issue__repo")
    counts: dict[tuple[str, str, str], _RepositoryCounts] = defaultdict(
        lambda: _RepositoryCounts(Counter(), Counter())
    )

    for *repository, year, n in study_years(kept):
        counts[tuple(repository)].by_year[UNKNOWN_YEAR if year is None else str(year)] += n
        counts[tuple(repository)].issues += n

    types = project_nodes(project, live=False).filter(level=Level.TYPE).order_by("position", "code")
    type_names = dict(types.values_list("code", "name"))
    lineage = taxonomy_lineage(project.taxonomy)
    finals = kept.filter(resolution__isnull=False).values_list(*repo, "resolution__node_id")
    for *key, node, n in finals.annotate(n=Count("pk")).order_by():
        counts[tuple(key)].by_type[lineage[node][0]] += n

    voted = Exists(ScreeningVote.objects.filter(item=OuterRef("pk")))
    screening = (
        items.alias(voted=voted)
        .values_list(*repo)
        .annotate(
            screened=Count("pk", filter=Q(voted=True) | Q(stage=Stage.EXCLUDED)),
            excluded=Count("pk", filter=Q(stage=Stage.EXCLUDED)),
        )
        .order_by()
    )
    for *key, screened, excluded in screening:
        counts[tuple(key)].screened += screened
        counts[tuple(key)].excluded += excluded
    for key, merged in merged_repeats_by_repository(items).items():
        counts[key].merged_repeats += merged

    year_columns = sorted(
        {year for c in counts.values() for year in c.by_year},
        key=lambda y: (y == UNKNOWN_YEAR, y),
    )
    yield [
        "Repository",
        "Host",
        *year_columns,
        "Issues",
        *type_names.values(),
        "Screened",
        "Excluded",
        "False_Positive_Rate",
        "Merged_Repeated_Rows",
    ]

    def row(repository: str, host: str, c: _RepositoryCounts) -> list:
        rate = f"{c.excluded / c.screened:.4f}" if c.screened else ""
        counts = [
            *(c.by_year[year] for year in year_columns),
            c.issues,
            *(c.by_type[code] for code in type_names),
            c.screened,
            c.excluded,
        ]
        return [repository, host, *map(str, counts), rate, str(c.merged_repeats)]

    total = _RepositoryCounts(Counter(), Counter())
    for (host, owner, name), c in sorted(
        counts.items(), key=lambda kv: (kv[0][1].lower(), kv[0][2].lower(), kv[0][0])
    ):
        total = total + c
        yield row(f"{owner}/{name}", host, c)
    yield row("Total", "", total)
