"""A replication package as files: a folder or a .zip read into (path, bytes), each file sorted
into what the import does with it, and the package's own SHA256SUMS checked.

Which file is what, by name and first line (the study's layout, wherever its files sit):
- `*.csv` whose header starts with `Issue_URL`: a label file (the study format);
- `<repo>_<year>.txt`: a yearly list of issue URLs;
- `filter_keywords`, and the CSVs with the taxonomy's header (`code,level,...`) or the detail
  files' (`rootcause,subcategory,symptoms`): carried, kept as they came;
- the interview material: the codebook (a CSV whose header starts `Participant,Type`), the
  background sheet (an `.xlsx` named for the background) and the guideline (a `.md` named for
  the guideline): carried, kept as they came, and read into the project's interviews;
- `README.md` and `SHA256SUMS` at the top: written anew by the export (the checksums are checked
  first); anything else is left out and reported.
"""

from __future__ import annotations

import functools
import hashlib
import re
import zipfile
import zlib
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import IO

from django.utils.translation import gettext as _

from annotation.models import PackageKind
from concord.errors import ConcordError, RowError

MAX_FILES = 5000
MAX_BYTES = 200 * 1024 * 1024  # unpacked; the study's package is about 4 MB
YEAR_LIST = re.compile(r"^(?P<stem>.+)_(?P<year>(?:19|20)[0-9]{2})\.txt$")
LABELS_HEADER = "Issue_URL"
CARRIED_HEADERS = ("rootcause,subcategory,symptoms", "code,level,parent,name")
KEYWORDS = "filter_keywords"
README, CHECKSUMS = "README.md", "SHA256SUMS"
HEAD_BYTES = 64 * 1024  # a first line longer than this is no header the sorting looks for
CHECKSUM_LINE = re.compile(r"^(?P<hash>[0-9a-fA-F]{64}) [ *](?:\./)?(?P<path>.+)$")


CODEBOOK_HEADER = "Participant,Type"


@dataclass(frozen=True)
class Stored:
    """One file of the package where it lies (the folder, or the zip the job keeps on disk), read
    each time it is asked for and never kept: the import holds one file at a time, not the
    package (a 10x package's 65 MB were held through its whole import; issue 31)."""

    path: str  # '/'-separated, inside the package
    opened: Callable[[], AbstractContextManager[IO[bytes]]]

    def read(self) -> bytes:
        with self._reading() as stream:
            return stream.read()

    def first_line(self) -> bytes:
        with self._reading() as stream:
            return stream.readline(HEAD_BYTES)

    def sha256(self) -> str:
        digest = hashlib.sha256()
        with self._reading() as stream:
            while chunk := stream.read(1024 * 1024):
                digest.update(chunk)
        return digest.hexdigest()

    @contextmanager
    def _reading(self) -> Iterator[IO[bytes]]:
        """The file's stream; a zip member whose bytes no longer inflate or match the zip's
        checksum is named (a package damaged on the way), not an unexpected error."""
        try:
            with self.opened() as stream:
                yield stream
        except (zipfile.BadZipFile, zlib.error, EOFError) as exc:
            raise ConcordError(
                _("%(path)s in the package is damaged (%(why)s); export it again.")
                % {"path": self.path, "why": exc}
            ) from exc


@dataclass(frozen=True)
class PackageEntry:
    stored: Stored
    kind: str  # a PackageKind
    year: int | None = None
    interview: str = ""  # codebook, background or guideline: interview material

    @property
    def path(self) -> str:
        return self.stored.path

    @property
    def data(self) -> bytes:
        """The file's bytes, read from the package again at each call."""
        return self.stored.read()


def interview_part(path: str, first_line: bytes) -> str:
    """Which part of the interview material the file at `path` is, or ''."""
    name = PurePosixPath(path).name.lower()
    if name.endswith(".csv") and _header(first_line).startswith(CODEBOOK_HEADER):
        return "codebook"
    if name.endswith(".xlsx") and "background" in name:
        return "background"
    if name.endswith(".md") and "guide" in name:
        return "guideline"
    return ""


@dataclass
class PackageContents:
    entries: list[PackageEntry] = field(default_factory=list)
    left_out: list[dict] = field(default_factory=list)  # {path, why}
    errors: list[RowError] = field(default_factory=list)

    def of_kind(self, kind: str) -> list[PackageEntry]:
        return [e for e in self.entries if e.kind == kind]


def package_read(path: Path) -> PackageContents:
    """The package at `path` (a folder or a .zip), sorted; a ConcordError when it cannot be
    read at all, RowErrors in `errors` for checksums that do not match. Its files are read when
    the import asks for each: `path` must stay until the import ends."""
    if path.is_dir():
        files = _folder_files(path)
    elif zipfile.is_zipfile(path):
        files = _zip_files(path)
    else:
        raise ConcordError(_("%(path)s is neither a folder nor a .zip file.") % {"path": path.name})
    return package_sort(files)


def package_sort(files: dict[str, Stored]) -> PackageContents:
    """Sort `files` (path in the package -> where it lies) by what the import does with each,
    from its name and first line."""
    contents = PackageContents()
    _check_sums(files, contents)
    for path in sorted(files):
        stored = files[path]
        name = PurePosixPath(path).name
        if path in (README, CHECKSUMS):
            continue
        first_line = stored.first_line()
        year = YEAR_LIST.match(name)
        if year:
            contents.entries.append(PackageEntry(stored, PackageKind.YEAR_LIST, int(year["year"])))
        elif name.lower().endswith(".csv") and _header(first_line).startswith(LABELS_HEADER):
            contents.entries.append(PackageEntry(stored, PackageKind.LABELS))
        elif name == KEYWORDS or _header(first_line).startswith(CARRIED_HEADERS):
            contents.entries.append(PackageEntry(stored, PackageKind.CARRIED))
        elif part := interview_part(path, first_line):
            contents.entries.append(PackageEntry(stored, PackageKind.CARRIED, interview=part))
        else:
            why = _("not a file of the study's layout")
            contents.left_out.append({"path": path, "why": why})
    if not contents.of_kind(PackageKind.LABELS):
        raise ConcordError(
            _("No label file (a .csv starting with the header %(header)s) in the package.")
            % {"header": LABELS_HEADER}
        )
    return contents


def _header(first_line: bytes) -> str:
    first = first_line.removeprefix(b"\xef\xbb\xbf").split(b"\n", 1)[0]
    return first.decode("utf-8", errors="replace").strip().replace(" ", "")


def _check_sums(files: dict[str, Stored], contents: PackageContents) -> None:
    """Every line of the package's SHA256SUMS must match its file: a package changed on the way
    is refused by file and line."""
    listing = files.get(CHECKSUMS)
    if listing is None:
        return
    text = listing.read().decode("utf-8", errors="replace")
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        match = CHECKSUM_LINE.match(line.strip())
        if match is None:
            message = _("not a `<sha256>  <path>` line")
        elif match["path"] not in files:
            message = _("lists %(path)s, which the package does not hold") % {"path": match["path"]}
        elif files[match["path"]].sha256() != match["hash"].lower():
            message = _("%(path)s does not match its checksum") % {"path": match["path"]}
        else:
            continue
        contents.errors.append(RowError(CHECKSUMS, number, None, message))


def _folder_files(root: Path) -> dict[str, Stored]:
    files: dict[str, Stored] = {}
    total = 0
    for path in sorted(root.rglob("*")):
        relative = path.relative_to(root)
        if not path.is_file() or any(part.startswith(".") for part in relative.parts):
            continue
        total += path.stat().st_size
        _within_limits(len(files) + 1, total)
        name = relative.as_posix()
        files[name] = Stored(name, functools.partial(_folder_file, path))
    return files


def _zip_files(path: Path) -> dict[str, Stored]:
    """The zip's files; one folder wrapping everything (a zipped folder) is taken off. A member
    inflates to at most the size the zip gives it (zipfile stops there), which the limits
    count."""
    members: dict[str, str] = {}  # path in the package -> the member's name in the zip
    with zipfile.ZipFile(path) as archive:
        infos = [m for m in archive.infolist() if not m.is_dir()]
        _within_limits(len(infos), sum(m.file_size for m in infos))
        for member in infos:
            name = PurePosixPath(member.filename)
            if name.is_absolute() or ".." in name.parts:
                raise ConcordError(
                    _("%(name)s points outside the package; refused.") % {"name": member.filename}
                )
            if any(part.startswith(".") or part == "__MACOSX" for part in name.parts):
                continue
            members[name.as_posix()] = member.filename
    tops = {p.split("/", 1)[0] for p in members}
    if len(tops) == 1 and all("/" in p for p in members):
        top = tops.pop() + "/"
        members = {p.removeprefix(top): member for p, member in members.items()}
    return {
        inside: Stored(inside, functools.partial(_zip_member, path, member))
        for inside, member in members.items()
    }


def _folder_file(path: Path) -> IO[bytes]:
    return path.open("rb")


@contextmanager
def _zip_member(path: Path, member: str) -> Iterator[IO[bytes]]:
    with zipfile.ZipFile(path) as archive, archive.open(member) as stream:
        yield stream


def _within_limits(count: int, size: int) -> None:
    if count > MAX_FILES or size > MAX_BYTES:
        raise ConcordError(
            _("The package is too big: at most %(files)d files and %(mb)d MB unpacked.")
            % {"files": MAX_FILES, "mb": MAX_BYTES // (1024 * 1024)}
        )
