"""The replication package in: a published package (annotation.package.reading) read into a new
or empty project, all or nothing, with a report by file and line.

- Label files go through the study-format importer (annotation.projects.importers), each as
  `manage.py import_labels` takes it: repeated rows are kept as the importer keeps them (the
  first row makes the item; the others are recorded and reported).
- Yearly lists set each issue's year in the study (reporting.exports.with_study_year); an issue
  listed again (in the same or another list) is recorded and reported, never dropped.
- Carried files (taxonomy, its details, filter_keywords) are kept as they came; the keyword lists
  are checked and each list Concord does not hold yet becomes a keyword set.

Every record of a label file or yearly list is stored in order (PackageLine) with what its bytes
need beyond the project's data (file layout: byte-order mark, line ending; a record's own text
where the export would write it differently, as for a repeated row with its own labels), so the
package export writes the same bytes back. A problem anywhere refuses the whole package:
nothing is written, and every problem found is named by file, line and column.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Iterable
from dataclasses import dataclass, field
from itertools import islice

from django.db import transaction
from django.db.models import QuerySet
from django.utils.translation import gettext as _

from annotation.gate import Write, gate
from annotation.interviews.services import InterviewFile, interviews_import
from annotation.models import (
    Annotation,
    Item,
    PackageFile,
    PackageKind,
    PackageLine,
    Project,
    Resolution,
)
from annotation.package.reading import PackageContents, PackageEntry
from annotation.projects.importers import MAX_REPORTED, ImportFailed, study_labels_import_bytes
from annotation.projects.settings import project_create, project_update
from annotation.reporting.exports import ExportOptions, study_table
from annotation.reporting.package import package_options, package_row
from concord.db import refresh_planner_statistics_on_commit
from concord.errors import ConcordError, Conflict, RowError, utf8_text
from concord.file_layout import Layout, csv_record, csv_records, decoded, physical_lines
from ingest.issue_refs import BadIssueUrl, parse_issue_url
from ingest.keywords import parse_filter_keywords
from ingest.models import Issue, KeywordSet
from ingest.services import insert_rows, issues_found
from taxonomy.models import Level, Taxonomy

BATCH = 5000


class PackageFailed(ConcordError):
    """Every problem found in the package, each with its file, line and column; nothing was
    imported."""

    def __init__(self, errors: list[RowError]) -> None:
        self.errors = errors
        shown = "\n".join(f"  {e}" for e in errors[:MAX_REPORTED])
        more = len(errors) - MAX_REPORTED
        tail = "\n  " + _("... and %(n)d more") % {"n": more} if more > 0 else ""
        message = _("%(n)d problem(s); nothing was imported:") % {"n": len(errors)}
        super().__init__(f"{message}\n{shown}{tail}")


@dataclass
class PackageReport:
    files: list[dict] = field(default_factory=list)  # per file: path, kind and what it added
    left_out: list[dict] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    def as_json(self) -> dict:
        return {"files": self.files, "left_out": self.left_out, "notes": self.notes}


def package_import(*, project: Project, actor, contents: PackageContents) -> PackageReport:
    """Import `contents` into `project`, which must hold no item yet; raises PackageFailed (or a
    gate refusal) and writes nothing if anything is wrong."""
    gate(actor, project, Write.PACKAGE_IMPORT)
    errors = list(contents.errors)
    report = PackageReport(left_out=contents.left_out)
    with transaction.atomic():
        project = Project.objects.select_for_update().get(pk=project.pk)
        if project.items.exists() or project.package_files.exists():
            raise Conflict(
                _("%(project)s already holds items: a package goes into a new or empty project.")
                % {"project": project.slug}
            )
        _match_k(project, actor, contents.of_kind(PackageKind.LABELS), report, errors)
        for entry in contents.of_kind(PackageKind.LABELS):
            try:
                labels = study_labels_import_bytes(
                    project=project, actor=actor, data=entry.data, name=entry.path
                )
            except ImportFailed as exc:
                errors.extend(exc.errors)
                continue
            repeats = [
                {"line": r.line, "first_line": r.first_line, "labels_differ": r.labels_differ}
                for r in labels.repeats
            ]
            report.files.append(
                {
                    "path": entry.path,
                    "kind": entry.kind,
                    "rows": labels.rows + len(repeats),
                    "items_created": labels.items_created,
                    "annotations_created": labels.annotations_created,
                    "resolutions_created": labels.resolutions_created,
                    "repeats": repeats,
                }
            )
        if not errors:
            _record_label_files(project, contents.of_kind(PackageKind.LABELS))
            years = contents.of_kind(PackageKind.YEAR_LIST)
            _record_year_lists(project, years, report, errors)
            _keep_carried(project, contents.of_kind(PackageKind.CARRIED), report, errors)
            _read_interviews(project, actor, contents.of_kind(PackageKind.CARRIED), report, errors)
        if errors:
            raise PackageFailed(errors)
        for model in (Issue, Item, Annotation, Resolution, PackageLine):  # thousands of new rows
            refresh_planner_statistics_on_commit(model)
    return report


def _match_k(project: Project, actor, entries: list[PackageEntry], report, errors) -> None:
    """The project wants as many labels per issue as the files have Label columns (the study:
    7), so the imported items settle as they did in the study. The headers themselves are
    checked by the label importer."""
    widths = set()
    for entry in entries:
        try:
            first_line = utf8_text(entry.stored.first_line(), entry.path)
            header = next(csv.reader(io.StringIO(first_line)), [])
        except (RowError, csv.Error):
            continue  # the importer names the problem
        if len(header) >= 3:  # a file of the Issue_URL column alone lists issues: no labels
            widths.add(len(header) - 2)
    if len(widths) == 1 and project.overlap_k != (k := widths.pop()):
        project_update(project=project, actor=actor, overlap_k=k)
        report.notes.append(_("k set to %(k)d, the label files' Label columns.") % {"k": k})


@dataclass(frozen=True)
class _FileItems:
    """The project's items that one file's URLs name: by each URL as the file writes it, and
    each item's issue URL as Concord spells it."""

    of_url: dict[str, int]
    url_of: dict[int, str]


def _file_items(project: Project, urls: list[str]) -> _FileItems:
    """The items of `urls` (unreadable URLs, and those of issues the project does not hold, left
    out), looked up for one file at a time: maps of the whole project's 387,420 URLs, held
    through every file, were a quarter of a 10x package's import job (issue 31). A URL spelled
    as Concord spells it is found by itself; another spelling goes through its issue.

    Each query reads one table. Joined to the issues, the items of a project whose statistics
    were taken before the import's own rows were planned as one row, with a scan of every issue
    for each item the import had just made: 5 s for each 5,000 URLs of the study's package."""
    wanted = list(dict.fromkeys(urls))
    exact = _by_key(Issue.objects.filter(url__any_of=wanted).values_list("url", "pk"))
    item_of_issue = _items_of_issues(project, exact.values())
    issue_of_url = {url: issue for url, issue in exact.items() if issue in item_of_issue}
    refs = {}
    for url in wanted:
        if url in issue_of_url:
            continue
        try:
            refs[url] = parse_issue_url(url)
        except BadIssueUrl:
            continue
    found = issues_found(refs.values())  # a lookup: a URL of no stored issue makes none
    item_of_issue.update(_items_of_issues(project, found.values()))
    issue_of_url.update(
        (url, found[ref]) for url, ref in refs.items() if found.get(ref) in item_of_issue
    )
    url_of_issue = _by_key(Issue.objects.filter(pk__any_of=item_of_issue).values_list("pk", "url"))
    return _FileItems(
        of_url={url: item_of_issue[issue] for url, issue in issue_of_url.items()},
        url_of={item: url_of_issue[issue] for issue, item in item_of_issue.items()},
    )


def _items_of_issues(project: Project, issue_ids: Iterable[int]) -> dict[int, int]:
    """item id by issue id, for those of the issues the project holds."""
    items = project.items.filter(issue_id__any_of=issue_ids)  # any_of takes any iterable
    return _by_key(items.values_list("issue_id", "pk"))


def _by_key(pairs: QuerySet) -> dict:
    """A values_list of (key, value) pairs as a dict, read BATCH rows at a time."""
    return dict(pairs.iterator(chunk_size=BATCH))


LINE_FIELDS = ("file_id", "position", "item_id", "repeat", "raw", "cells")


def _line(file: PackageFile, position: int, item=None, repeat=False, raw="", cells=None) -> tuple:
    return (file.pk, position, item, repeat, raw, cells)


def _new_file(project: Project, entry: PackageEntry, layout: Layout, **extra) -> PackageFile:
    return PackageFile.objects.create(
        project=project,
        path=entry.path,
        kind=entry.kind,
        bom=layout.bom,
        newline=layout.newline,
        final_newline=layout.final_newline,
        **extra,
    )


def _ended(raw: str, newline: str) -> str:
    """A record as stored: the file's last one may lack its line ending (Layout says so)."""
    return raw if raw.endswith(("\n", "\r")) else raw + newline


def _record_label_files(project: Project, entries: list[PackageEntry]) -> None:
    """A PackageLine per record, in order; its text is kept where the export would write the
    item otherwise (compared with the export's own rendering, study_table). The files were read
    by the label importer already: they decode and parse.

    One file at a time, its records read twice rather than held, and only its items' study
    rows: the whole project's rows and a file's records at once took a 10x package's import
    job to 592 MB."""
    options = package_options(project)
    header, _ = study_table(project, options)
    for entry in entries:
        layout, text = decoded(entry.data, entry.path)
        records = islice(csv_records(text), 1, None)  # the first read: the file's URLs
        items = _file_items(project, [cells[0].strip() for _, cells in records if cells])
        row_of = _study_rows_of(project, options, set(items.of_url.values()))
        file = _new_file(project, entry, layout)
        lines: list[tuple] = []
        seen: set[int] = set()
        for position, (raw, cells) in enumerate(csv_records(text)):
            raw = _ended(raw, layout.newline)
            item = items.of_url.get(cells[0].strip()) if position and cells else None
            if position == 0:
                now = header
            elif item is None:
                lines.append(_line(file, position, raw=raw))
                continue
            else:
                now = package_row(row_of, item, items.url_of[item], header)
            repeat = item is not None and item in seen
            if item is not None:
                seen.add(item)
            kept = repeat or raw != csv_record(now, layout.newline)
            if kept:
                lines.append(_line(file, position, item, repeat, raw, now))
            else:
                lines.append(_line(file, position, item))
        insert_rows(PackageLine, LINE_FIELDS, lines)


def _study_rows_of(
    project: Project, options: ExportOptions, wanted: set[int]
) -> dict[int, list[str]]:
    """The study rows of the items in `wanted` (study_table over their id range: one file's)."""
    if not wanted:
        return {}
    _, table = study_table(project, options, ids=(min(wanted), max(wanted)))
    return {pk: row for pk, row in table if pk in wanted}


def _record_year_lists(project: Project, entries, report: PackageReport, errors) -> None:
    """A PackageLine per line: the issue's year is the list's; an issue listed again (here or
    in an earlier list) is recorded as a repeat and reported, with where it was first listed
    (looked up for the repeats alone: "path:line" held for every item took tens of MB)."""
    listed: set[int] = set()
    for entry in entries:
        try:
            layout, text = decoded(entry.data, entry.path)
        except RowError as exc:
            errors.append(exc)
            continue
        lines = [_ended(line, layout.newline) for line in physical_lines(text)]
        items = _file_items(project, [line.strip() for line in lines])
        file = _new_file(project, entry, layout, year=entry.year)
        records: list[tuple] = []
        repeated: list[tuple[int, int]] = []  # line, item
        for number, line in enumerate(lines, start=1):
            url = line.strip()
            if not url:
                records.append(_line(file, number, raw=line))
                continue
            item = items.of_url.get(url)
            if item is None:
                errors.append(RowError(entry.path, number, None, _year_list_problem(url)))
                continue
            repeat = item in listed
            if repeat:
                repeated.append((number, item))
            listed.add(item)
            url_now = items.url_of[item]
            if line != url_now + layout.newline:
                records.append(_line(file, number, item, repeat, line, [url_now]))
            else:
                records.append(_line(file, number, item, repeat))
        insert_rows(PackageLine, LINE_FIELDS, records)
        first = _listed_first(project, [item for _, item in repeated]) if repeated else {}
        repeats = [{"line": number, "first": first[item]} for number, item in repeated]
        report.files.append(
            {
                "path": entry.path,
                "kind": entry.kind,
                "year": entry.year,
                "rows": len(records),
                "repeats": repeats,
            }
        )


def _listed_first(project: Project, item_ids: Iterable[int]) -> dict[int, str]:
    """Where the year lists recorded so far first list each of `item_ids` ("path:line")."""
    lines = PackageLine.objects.filter(
        file__project=project,
        file__kind=PackageKind.YEAR_LIST,
        repeat=False,
        item_id__any_of=item_ids,
    )
    rows = lines.values_list("item_id", "file__path", "position").iterator(chunk_size=BATCH)
    return {item: f"{path}:{position}" for item, path, position in rows}


def _year_list_problem(url: str) -> str:
    try:
        parse_issue_url(url)
    except BadIssueUrl as exc:
        return str(exc)
    return _("%(url)s is in no label file of the package") % {"url": url}


def _keep_carried(project: Project, entries, report: PackageReport, errors) -> None:
    """Keep each carried file's bytes; a keyword file must read as one, and its lists Concord
    does not hold yet become keyword sets (an existing set of that name is left as it is)."""
    for entry in entries:
        data = entry.data
        try:
            if entry.interview != "background":  # a spreadsheet: its reader checks it
                text = utf8_text(data, entry.path)
                if entry.path.rsplit("/", 1)[-1] == "filter_keywords":
                    report.notes.extend(_keyword_sets(parse_filter_keywords(text, entry.path)))
        except ConcordError as exc:
            errors.append(exc)
            continue
        _new_file(project, entry, Layout(), content=data)
        report.files.append({"path": entry.path, "kind": entry.kind, "bytes": len(data)})


def _read_interviews(project: Project, actor, entries, report: PackageReport, errors) -> None:
    """The interview material (kept as it came by _keep_carried) read into the project's
    interviews, as the Interviews page imports it; a package without a codebook has none."""
    parts = {e.interview: InterviewFile(e.path, e.data) for e in entries if e.interview}
    if "codebook" not in parts:
        if parts:
            report.notes.append(_("Interview material without a codebook is kept, not read."))
        return
    try:
        read = interviews_import(
            project=project,
            actor=actor,
            codebook=parts["codebook"],
            background=parts.get("background"),
            guideline=parts.get("guideline"),
        )
    except ImportFailed as exc:
        errors.extend(exc.errors)
        return
    except ConcordError as exc:
        errors.append(exc)
        return
    report.notes.append(
        _("Interviews: %(participants)d participants, %(quotes)d quotes, %(links)d links.")
        % {"participants": read.participants, "quotes": read.quotes, "links": read.links}
    )


def _keyword_sets(lists: dict[str, list[str]]) -> list[str]:
    notes = []
    held = dict(KeywordSet.objects.filter(name__in=lists).values_list("name", "keywords"))
    for name, keywords in lists.items():
        if name not in held:
            KeywordSet.objects.create(name=name, keywords=keywords)
            notes.append(_("Keyword set %(name)s added.") % {"name": name})
        elif held[name] != keywords:
            notes.append(
                _("Keyword set %(name)s exists with other keywords; it was left as it is.")
                % {"name": name}
            )
    return notes


def package_project(*, slug: str, name: str, taxonomy: Taxonomy) -> Project:
    """A new project for a package (the command's --project naming none yet): the study's
    shape, labels at theme depth without screening (its issues were screened already); k
    follows the label files."""
    return project_create(
        creator=None,
        name=name,
        slug=slug,
        taxonomy=taxonomy,
        label_depth=Level.THEME,
        screening_enabled=False,
    )
