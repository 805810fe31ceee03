"""The replication package out: the study's published layout, as a folder or a .zip.

    Issue Report/<repo>.csv         Issue_URL,Label1..LabelK,Final_Label (the study format)
    Issue Report/<repo>_<year>.txt  the issue URLs of each year, one a line
    bug_symptoms.csv ...            files carried as they came (taxonomy details, filter_keywords)
    README.md                       the figures: Fleiss' kappa per type, the repositories table
    SHA256SUMS                      a checksum per file, as `sha256sum -c` reads it

A file that came in a package (annotation.package) goes out under its own path, byte for byte:
its records in their order (repeated rows with their own labels), its line ending, byte-order
mark and last line as recorded (PackageFile, PackageLine). Its rows are the project's data: a row
is written as it came while the item still renders as it did at import; a changed item is
written in the file's dialect from what the project holds now; an item labelled since is added to
its repository's file. A project that never imported a package gets the layout above, with the
study's \\n line endings.

Cells are written as they are: no formula guard here (the CSV exports' guard would break the
round trip), since the package is data to read back, not a sheet to open.
"""

from __future__ import annotations

import hashlib
import os
import re
import shutil
import tempfile
import zipfile
from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath

from django.db.models.functions import ExtractYear

from annotation.models import ExportFormat, Item, PackageFile, PackageKind, PackageLine, Project
from annotation.reporting.agreement import project_agreement
from annotation.reporting.exports import (
    ExportOptions,
    export_options,
    repository_rows,
    study_table,
)
from concord.errors import ConcordError
from concord.file_layout import Layout, csv_record, laid_out
from taxonomy.interviews.models import InterviewGuide, ParticipantKind, Quote

LABELS_FOLDER = "Issue Report"
README, CHECKSUMS = "README.md", "SHA256SUMS"
ZIP_TIME = (1980, 1, 1, 0, 0, 0)  # a fixed time: the same project gives the same zip
Repository = tuple[str, str, str]  # host, owner, repo


@dataclass
class _File:
    path: str
    layout: Layout = field(default_factory=Layout)
    records: list[str] = field(default_factory=list)

    def data(self) -> bytes:
        return "".join(laid_out(self.records, self.layout)).encode("utf-8")


@dataclass(frozen=True)
class _Recorded:
    file: PackageFile
    lines: list[
        tuple[int, int | None, bool, str, list | None]
    ]  # position, item, repeat, raw, cells


def package_write(
    project: Project,
    options: ExportOptions,
    path: Path,
    *,
    progress: Callable[[int], object] | None = None,
    every: int = 5000,
) -> int:
    """Write the package to `path`: a .zip, or else a new folder, each complete or not at all
    (built beside it and renamed). Returns the study rows written."""
    files, rows = package_files(project, options, progress=progress, every=every)
    path.parent.mkdir(parents=True, exist_ok=True)
    if path.suffix.lower() == ".zip":
        _write_zip(files, path)
    else:
        _write_folder(files, path)
    return rows


def package_options(project: Project) -> ExportOptions:
    """The package's rows: the study format at the project's depth, every item."""
    return export_options(project, format=ExportFormat.PACKAGE, bom=False)  # layouts decide


def package_files(
    project: Project,
    options: ExportOptions,
    *,
    progress: Callable[[int], object] | None = None,
    every: int = 5000,
) -> tuple[list[tuple[str, bytes]], int]:
    """(path, bytes) of every file of the package, README and SHA256SUMS last; and the number of
    study rows."""
    header, table = study_table(project, options)
    row_of: dict[int, list[str]] = {}
    for n, (pk, row) in enumerate(table, start=1):
        row_of[pk] = row
        if progress is not None and n % every == 0:
            progress(n)
    items = Item.objects.filter(project=project).order_by()
    place = {
        pk: ((host, owner, repo), url)
        for pk, host, owner, repo, url in items.values_list(
            "pk", "issue__host", "issue__owner", "issue__repo", "issue__url"
        )
    }
    recorded = _recorded(project)
    out = _label_files(recorded, header, row_of, place)
    out += _year_lists(project, recorded, row_of, place, taken={f.path for f in out})
    data = [(f.path, f.data()) for f in out]
    data += [
        (r.file.path, bytes(r.file.content)) for r in recorded if r.file.kind == PackageKind.CARRIED
    ]
    data += interview_files(project, carried=[c for _path, c in data])
    data.sort(key=lambda entry: entry[0])
    data.append((README, package_readme(project, options, data).encode("utf-8")))
    data.append((CHECKSUMS, checksums(data).encode("utf-8")))
    return data, len(row_of)


def _recorded(project: Project) -> list[_Recorded]:
    lines: dict[int, list] = defaultdict(list)
    rows = PackageLine.objects.filter(file__project=project).order_by("file_id", "position")
    for file_id, *line in rows.values_list(
        "file_id", "position", "item_id", "repeat", "raw", "cells"
    ).iterator(chunk_size=10000):
        lines[file_id].append(tuple(line))
    files = PackageFile.objects.filter(project=project).order_by("pk")
    return [_Recorded(f, lines[f.pk]) for f in files]


def package_row(row_of: dict[int, list[str]], item: int, url: str, header: list[str]) -> list[str]:
    """The item's study row; an item without labels or a final label (a row of only its URL)
    has blank cells."""
    return row_of.get(item) or [url, *[""] * (len(header) - 1)]


def _kept(raw: str, cells: list | None, now: list[str], newline: str) -> str:
    """The record as it came while the item renders as it did then; else as it renders now."""
    return raw if raw and cells == now else csv_record(now, newline)


def _layout(file: PackageFile) -> Layout:
    return Layout(bom=file.bom, newline=file.newline, final_newline=file.final_newline)


def _label_files(
    recorded: list[_Recorded],
    header: list[str],
    row_of: dict[int, list[str]],
    place: dict[int, tuple[Repository, str]],
) -> list[_File]:
    """The recorded label files, then one new file per repository none of them holds."""
    out: list[_File] = []
    home: dict[Repository, _File] = {}  # where a repository's added rows go
    written: set[int] = set()
    for r in (r for r in recorded if r.file.kind == PackageKind.LABELS):
        f = _File(r.file.path, _layout(r.file))
        for position, item, repeat, raw, cells in r.lines:
            if position == 0:
                f.records.append(_kept(raw, cells, header, f.layout.newline))
            elif item is None or repeat:
                f.records.append(raw)
            else:
                repository, url = place[item]
                now = package_row(row_of, item, url, header)
                f.records.append(_kept(raw, cells, now, f.layout.newline))
                written.add(item)
                home.setdefault(repository, f)
        out.append(f)
    taken = {f.path for f in out}
    for pk, row in row_of.items():  # id order: the order items were added
        if pk in written:
            continue
        repository = place[pk][0]
        if repository not in home:
            path = _free(f"{LABELS_FOLDER}/{repository[2]}.csv", repository, taken)
            home[repository] = _File(path, records=[csv_record(header, "\n")])
            out.append(home[repository])
        target = home[repository]
        target.records.append(csv_record(row, target.layout.newline))
    return out


def _year_lists(
    project: Project,
    recorded: list[_Recorded],
    row_of: dict[int, list[str]],
    place: dict[int, tuple[Repository, str]],
    *,
    taken: set[str],
) -> list[_File]:
    """The recorded yearly lists, then the issues of the study rows no list holds, by
    repository and the year their tracker gives; an issue of unknown year is in no list."""
    out: list[_File] = []
    by_path: dict[str, _File] = {}
    listed: set[int] = set()
    for r in (r for r in recorded if r.file.kind == PackageKind.YEAR_LIST):
        f = _File(r.file.path, _layout(r.file))
        for _, item, _, raw, cells in r.lines:
            if item is None:
                f.records.append(raw)
                continue
            f.records.append(_kept(raw, cells, [place[item][1]], f.layout.newline))
            listed.add(item)
        out.append(f)
        by_path[f.path] = f
    missing = [pk for pk in row_of if pk not in listed]
    # no list holds them: the year their tracker gives (exports.study_years' rule)
    dated = Item.objects.filter(project=project, issue__created_at__isnull=False)
    years = dict(dated.values_list("pk", ExtractYear("issue__created_at")))
    taken = taken | set(by_path)
    for pk in missing:
        if years.get(pk) is None:
            continue
        repository, url = place[pk]
        path = f"{LABELS_FOLDER}/{repository[2]}_{years[pk]}.txt"
        if path not in by_path:
            by_path[path] = _File(_free(path, repository, taken))
            out.append(by_path[path])
        target = by_path[path]
        target.records.append(url + target.layout.newline)
    return out


def _free(path: str, repository: Repository, taken: set[str]) -> str:
    """`path`, or with the owner before the repository's name when another file has it."""
    if path in taken:
        folder, name = path.rsplit("/", 1)
        path = f"{folder}/{repository[1]}_{name}"
    taken.add(path)
    return path


# ---------------------------------------------------------------- the interview material

INTERVIEWS_FOLDER = "interviews"
CODEBOOK_COLUMNS = [
    "Participant",
    "Type",
    "Experience Level",
    "Framework Context",
    "Prompt Category",
    "Thematic Quote",
    "Linked Taxonomy Node(s)",
    "Research Insight",
]
KIND_WORDS: dict[str, str] = {ParticipantKind.USER: "User", ParticipantKind.DEVELOPER: "Developer"}


def interview_files(project: Project, *, carried: list[bytes]) -> list[tuple[str, bytes]]:
    """The project's interviews as the study published them, when it holds any and no package
    brought its own codebook (which goes out as it came): `interviews/CodeBook.csv` (a quote a
    row, in the order they were imported, with the codes it was linked under) and the guideline.
    The interviewees' background sheet goes out only as a package brought it."""
    if any(_is_codebook(data) for data in carried):
        return []
    quotes = (
        Quote.objects.filter(participant__project=project)
        .select_related("participant")
        .prefetch_related("links")
        .order_by("pk")
    )
    rows = [
        [
            q.participant.code,
            KIND_WORDS.get(q.participant.kind, q.participant.kind),
            q.participant.experience,
            q.participant.framework,
            q.prompt_category,
            q.text,
            ", ".join(link.code for link in q.links.all()),
            q.insight,
        ]
        for q in quotes
    ]
    if not rows:
        return []
    layout = Layout(newline="\n")
    codebook = [csv_record(CODEBOOK_COLUMNS, "\n"), *(csv_record(r, "\n") for r in rows)]
    out = [(f"{INTERVIEWS_FOLDER}/CodeBook.csv", "".join(laid_out(codebook, layout)).encode())]
    guide = InterviewGuide.objects.filter(project=project).first()
    if guide is not None:
        name = PurePosixPath(guide.name).name or "Interview GuideLine.md"
        out.append((f"{INTERVIEWS_FOLDER}/{name}", guide.text.encode("utf-8")))
    return out


def _is_codebook(data: bytes) -> bool:
    first = data.removeprefix(b"\xef\xbb\xbf").split(b"\n", 1)[0].replace(b" ", b"")
    return first.startswith(b"Participant,Type")


def checksums(files: list[tuple[str, bytes]]) -> str:
    """One `<sha256>  <path>` line per file, as `sha256sum -c SHA256SUMS` checks them."""
    return "".join(f"{hashlib.sha256(data).hexdigest()}  {path}\n" for path, data in files)


# ---------------------------------------------------------------- the README's figures


def package_readme(project: Project, options: ExportOptions, files: list[tuple[str, bytes]]) -> str:
    """What the package holds and its figures: Fleiss' kappa per issue type with its 95%
    interval (project_agreement, the one kappa every page shows), and the per-repository table
    (the repositories export: issues per year, per type, false-positive rate)."""
    taxonomy = project.taxonomy
    parts = [
        f"# {project.name}: replication package\n",
        f"Exported by Concord from the project `{project.slug}`: {taxonomy.name} "
        f"(version {taxonomy.version}), labels at the {project.label_depth} level, "
        f"k = {project.overlap_k} labels per issue.\n",
        "## Inter-annotator agreement (Fleiss' kappa, by final issue type)\n",
        _kappa_table(project, options.level),
        "## Issues per repository\n",
        _markdown(list(repository_rows(project, _repositories(project)))),
        "## Files\n",
        "".join(f"- `{path}` ({len(data):,} bytes)\n" for path, data in files),
        f"\n`{CHECKSUMS}` holds each file's SHA-256: `sha256sum -c {CHECKSUMS}` checks them.\n",
    ]
    return "\n".join(parts)


def _repositories(project: Project) -> ExportOptions:
    return export_options(project, format=ExportFormat.REPOSITORIES)


def _kappa_table(project: Project, level: str) -> str:
    rows = [["Issues", "Items rated", "Fleiss' kappa", "95% interval", "Agreement"]]
    for cell in project_agreement(project, level=level, by="type").groups:
        if cell.fleiss is None:
            rows.append([cell.group, str(cell.n_items), "", "", cell.problem or ""])
            continue
        rows.append(
            [
                cell.group,
                str(cell.fleiss_items),
                f"{cell.fleiss.kappa:.3f}",
                f"{cell.fleiss.ci_low:.3f} to {cell.fleiss.ci_high:.3f}",
                cell.fleiss.band,
            ]
        )
    return _markdown(rows)


_PIPE = re.compile(r"\|")


def _markdown(rows: list[list[str]]) -> str:
    def line(cells: list[str]) -> str:
        return "| " + " | ".join(_PIPE.sub(r"\\|", str(c)) for c in cells) + " |\n"

    if not rows:
        return ""
    return line(rows[0]) + line(["---"] * len(rows[0])) + "".join(map(line, rows[1:]))


# ---------------------------------------------------------------- writing


def _write_zip(files: list[tuple[str, bytes]], path: Path) -> None:
    fd, temporary = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".part")
    try:
        with os.fdopen(fd, "wb") as handle:
            with zipfile.ZipFile(handle, "w", zipfile.ZIP_DEFLATED) as archive:
                for name, data in files:
                    info = zipfile.ZipInfo(name, date_time=ZIP_TIME)
                    info.compress_type = zipfile.ZIP_DEFLATED
                    info.external_attr = 0o644 << 16
                    archive.writestr(info, data)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(temporary, path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise


def _write_folder(files: list[tuple[str, bytes]], path: Path) -> None:
    if path.exists() and (not path.is_dir() or any(path.iterdir())):
        raise ConcordError(f"{path} exists and is not an empty folder; name a new one.")
    temporary = Path(tempfile.mkdtemp(dir=path.parent, prefix=f".{path.name}.", suffix=".part"))
    try:
        for name, data in files:
            target = temporary / name
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(data)
        if path.exists():
            path.rmdir()
        os.replace(temporary, path)
    except BaseException:
        shutil.rmtree(temporary, ignore_errors=True)
        raise
