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
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from functools import partial
from itertools import chain, count, islice
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
    (built beside it and renamed). Returns the study rows written. Streamed (#31): rows come from
    the database a page at a time, each file's records wait in a temporary file until the file
    is written, and a file is written, hashed and measured block by block."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=path.parent, prefix=f".{path.name}.spill.") as spill:
        files, rows = package_files(project, options, Path(spill), progress=progress, every=every)
        made = _with_readme(project, options, files)
        if path.suffix.lower() == ".zip":
            _write_zip(made, path)
        else:
            _write_folder(made, path)
    return rows


def package_options(project: Project) -> ExportOptions:
    """The package's rows: the study format at the project's depth, every item."""
    return export_options(project, format=ExportFormat.PACKAGE, bom=False)  # layouts decide


def package_files(
    project: Project,
    options: ExportOptions,
    folder: Path,
    *,
    progress: Callable[[int], object] | None = None,
    every: int = 5000,
) -> tuple[list[_Out], int]:
    """Every file of the package but README and SHA256SUMS (_with_readme), in path order, and
    the number of study rows. The label files and yearly lists spill to `folder` as rows come."""
    header, table = study_table(project, options)
    recorded = _recorded(project)
    named = {item for r in recorded for _, item, _, _, _ in r.lines if item is not None}
    study = _StudyFiles(recorded, header, _places(project, named), folder)
    rows = 0
    while page := list(islice(table, PAGE)):
        places = _places(project, [pk for pk, _ in page])
        for pk, row in page:
            study.add(pk, row, *places[pk])
            rows += 1
            if progress is not None and rows % every == 0:
                progress(rows)
    out = [f.out() for f in study.files()]
    carried = [
        (r.file.path, bytes(r.file.content)) for r in recorded if r.file.kind == PackageKind.CARRIED
    ]
    out += [_Out(path, partial(_whole, data)) for path, data in carried]
    interviews = interview_files(project, carried=[data for _path, data in carried])
    out += [_Out(path, partial(_whole, data)) for path, data in interviews]
    out.sort(key=lambda entry: entry.path)
    return out, rows


def _whole(data: bytes) -> Iterator[bytes]:
    yield data


def _places(project: Project, item_ids: Iterable[int]) -> dict[int, tuple[Repository, str, int]]:
    """Repository, issue URL and year (None if unknown) of each item, PAGE ids per query."""
    ids = list(item_ids)
    places = {}
    for start in range(0, len(ids), PAGE):
        items = Item.objects.filter(project=project, pk__in=ids[start : start + PAGE]).order_by()
        columns = ("pk", "issue__host", "issue__owner", "issue__repo", "issue__url")
        for pk, host, owner, repo, url, year in items.values_list(
            *columns, ExtractYear("issue__created_at")
        ):
            places[pk] = ((host, owner, repo), url, year)
    return places


def _with_readme(
    project: Project, options: ExportOptions, files: list[_Out]
) -> Iterator[tuple[str, Iterable[bytes]]]:
    """Each file's path and blocks, then README (naming each file and its size) and SHA256SUMS,
    from what was measured while the files were written: the writer consumes each file's
    blocks before asking for the next file."""
    measured: list[tuple[str, int, str]] = []  # path, size, SHA-256
    for f in files:
        yield f.path, _measured(f.path, f.blocks(), measured)
    readme = package_readme(project, options, [(path, size) for path, size, _ in measured])
    data = readme.encode("utf-8")
    yield README, _measured(README, [data], measured)
    yield CHECKSUMS, [checksums([(path, digest) for path, _, digest in measured]).encode("utf-8")]


def _measured(
    path: str, blocks: Iterable[bytes], measured: list[tuple[str, int, str]]
) -> Iterator[bytes]:
    digest, size = hashlib.sha256(), 0
    for block in blocks:
        digest.update(block)
        size += len(block)
        yield block
    measured.append((path, size, digest.hexdigest()))


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


PAGE = 5000  # study rows placed (repository, URL, year) per query


@dataclass
class _Out:
    """One file of the package: its path and its bytes, made block by block as it is written,
    so no file is held whole (#31)."""

    path: str
    blocks: Callable[[], Iterable[bytes]]


class _Spill:
    """Records (each with its line ending) in a temporary file, in the order they come, read
    back in that order: a file's rows arrive between other files' (items come in id order, the
    package is written a file at a time)."""

    def __init__(self, path: Path) -> None:
        self._path = path
        self._file = path.open("wb")

    def add(self, record: str) -> None:
        data = record.encode("utf-8")
        self._file.write(len(data).to_bytes(4, "little") + data)

    def records(self) -> Iterator[str]:
        self._file.close()
        with self._path.open("rb") as spilled:
            while size := spilled.read(4):
                yield spilled.read(int.from_bytes(size, "little")).decode("utf-8")


@dataclass
class _File:
    """A label file or yearly list: the records a package brought (`recorded`, made when the
    file is written), then those added to it since, spilled as they come."""

    path: str
    layout: Layout
    spill_to: Path
    recorded: Callable[[], Iterable[str]] = lambda: ()
    spill: _Spill | None = None

    def add(self, record: str) -> None:
        if self.spill is None:
            self.spill = _Spill(self.spill_to)
        self.spill.add(record)

    def out(self) -> _Out:
        def blocks() -> Iterator[bytes]:
            added = self.spill.records() if self.spill is not None else ()
            return _blocks(laid_out(chain(self.recorded(), added), self.layout))

        return _Out(self.path, blocks)


def _blocks(texts: Iterable[str], size: int = 1 << 16) -> Iterator[bytes]:
    """`texts` as UTF-8, joined into blocks of about `size` characters."""
    held: list[str] = []
    length = 0
    for text in texts:
        held.append(text)
        length += len(text)
        if length >= size:
            yield "".join(held).encode("utf-8")
            held, length = [], 0
    if held:
        yield "".join(held).encode("utf-8")


class _StudyFiles:
    """The label files and yearly lists, made from the study rows as they come in item id
    order: the files a package brought (recorded) first, each with the records it came with;
    an item they do not hold goes to its repository's file (the first recorded file holding
    one of the repository's items, else a new one), and its URL to the list of its repository
    and year (exports.study_years' rule; an issue of unknown year is in no list). Only the rows
    of items the recorded files name are held (they are written in the files' own order)."""

    def __init__(
        self, recorded: list[_Recorded], header: list[str], place: dict, folder: Path
    ) -> None:
        self.header, self.place, self.folder = header, place, folder
        self._numbers = count()  # each file's spill
        self.row_of: dict[int, list[str]] = {}  # rows of the items recorded label files name
        self.labels: list[_File] = []
        self.home: dict[Repository, _File] = {}  # where a repository's added rows go
        self.written: set[int] = set()
        for r in (r for r in recorded if r.file.kind == PackageKind.LABELS):
            f = self._file(r.file.path, _layout(r.file), partial(self._label_records, r))
            for position, item, repeat, _raw, _cells in r.lines:
                if position and item is not None and not repeat:
                    self.written.add(item)
                    self.home.setdefault(place[item][0], f)
            self.labels.append(f)
        self.label_taken = {f.path for f in self.labels}
        self.years: dict[str, _File] = {}
        self.listed: set[int] = set()
        for r in (r for r in recorded if r.file.kind == PackageKind.YEAR_LIST):
            f = self._file(r.file.path, _layout(r.file), partial(self._year_records, r))
            self.listed.update(item for _, item, _, _, _ in r.lines if item is not None)
            self.years[f.path] = f
        self.year_taken = self.label_taken | set(self.years)

    def add(self, pk: int, row: list[str], repository: Repository, url: str, year) -> None:
        """One study row, in item id order."""
        if pk in self.written:
            self.row_of[pk] = row
        else:
            target = self._label_file(repository)
            target.add(csv_record(row, target.layout.newline))
        if pk not in self.listed and year is not None:
            target = self._year_list(repository, year)
            target.add(url + target.layout.newline)

    def files(self) -> list[_File]:
        return [*self.labels, *self.years.values()]

    def _label_file(self, repository: Repository) -> _File:
        if repository not in self.home:
            path = _free(f"{LABELS_FOLDER}/{repository[2]}.csv", repository, self.label_taken)
            self.year_taken.add(path)
            self.home[repository] = self._file(path, Layout())
            self.home[repository].add(csv_record(self.header, "\n"))
            self.labels.append(self.home[repository])
        return self.home[repository]

    def _year_list(self, repository: Repository, year: int) -> _File:
        path = f"{LABELS_FOLDER}/{repository[2]}_{year}.txt"
        if path not in self.years:
            self.years[path] = self._file(_free(path, repository, self.year_taken), Layout())
        return self.years[path]

    def _file(self, path: str, layout: Layout, recorded=lambda: ()) -> _File:
        return _File(path, layout, self.folder / f"{next(self._numbers)}.records", recorded)

    def _label_records(self, r: _Recorded) -> Iterator[str]:
        newline = r.file.newline
        for position, item, repeat, raw, cells in r.lines:
            if position == 0:
                yield _kept(raw, cells, self.header, newline)
            elif item is None or repeat:
                yield raw
            else:
                now = package_row(self.row_of, item, self.place[item][1], self.header)
                yield _kept(raw, cells, now, newline)

    def _year_records(self, r: _Recorded) -> Iterator[str]:
        for _, item, _, raw, cells in r.lines:
            if item is None:
                yield raw
            else:
                yield _kept(raw, cells, [self.place[item][1]], r.file.newline)


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


def checksums(digests: list[tuple[str, str]]) -> str:
    """One `<sha256>  <path>` line per (path, SHA-256), as `sha256sum -c SHA256SUMS` checks
    them."""
    return "".join(f"{digest}  {path}\n" for path, digest in digests)


# ---------------------------------------------------------------- the README's figures


def package_readme(project: Project, options: ExportOptions, files: list[tuple[str, int]]) -> str:
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
        "".join(f"- `{path}` ({size:,} bytes)\n" for path, size in files),
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


def _write_zip(files: Iterable[tuple[str, Iterable[bytes]]], path: Path) -> None:
    fd, temporary = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".part")
    try:
        with os.fdopen(fd, "wb") as handle:
            with zipfile.ZipFile(handle, "w", zipfile.ZIP_DEFLATED) as archive:
                for name, blocks in files:
                    info = zipfile.ZipInfo(name, date_time=ZIP_TIME)
                    info.compress_type = zipfile.ZIP_DEFLATED
                    info.external_attr = 0o644 << 16
                    with archive.open(info, "w") as member:
                        for block in blocks:
                            member.write(block)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(temporary, path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise


def _write_folder(files: Iterable[tuple[str, Iterable[bytes]]], path: Path) -> None:
    if path.exists() and (not path.is_dir() or any(path.iterdir())):
        raise ConcordError(f"{path} exists and is not an empty folder; name a new one.")
    temporary = Path(tempfile.mkdtemp(dir=path.parent, prefix=f".{path.name}.", suffix=".part"))
    try:
        for name, blocks in files:
            target = temporary / name
            target.parent.mkdir(parents=True, exist_ok=True)
            with target.open("wb") as out:
                out.writelines(blocks)
        if path.exists():
            path.rmdir()
        os.replace(temporary, path)
    except BaseException:
        shutil.rmtree(temporary, ignore_errors=True)
        raise
