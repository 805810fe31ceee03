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

import hashlib
import re
import zipfile
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath

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
CHECKSUM_LINE = re.compile(r"^(?P<hash>[0-9a-fA-F]{64}) [ *](?:\./)?(?P<path>.+)$")


CODEBOOK_HEADER = "Participant,Type"


@dataclass(frozen=True)
class PackageEntry:
    path: str  # '/'-separated, inside the package
    data: bytes
    kind: str  # a PackageKind
    year: int | None = None
    interview: str = ""  # codebook, background or guideline: interview material


def interview_part(path: str, data: bytes) -> str:
    """Which part of the interview material the file at `path` is, or ''."""
    name = PurePosixPath(path).name.lower()
    if name.endswith(".csv") and _header(data).startswith(CODEBOOK_HEADER):
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
    read at all, RowErrors in `errors` for checksums that do not match."""
    if path.is_dir():
        files = _folder_files(path)
    elif zipfile.is_zipfile(path):
        files = _zip_files(path)
    else:
        raise ConcordError(_("%(path)s is neither a folder nor a .zip file.") % {"path": path.name})
    return package_sort(files)


def package_sort(files: dict[str, bytes]) -> PackageContents:
    """Sort `files` (path -> bytes) by what the import does with each."""
    contents = PackageContents()
    _check_sums(files, contents)
    for path in sorted(files):
        data = files[path]
        name = PurePosixPath(path).name
        if path in (README, CHECKSUMS):
            continue
        year = YEAR_LIST.match(name)
        if year:
            contents.entries.append(
                PackageEntry(path, data, PackageKind.YEAR_LIST, int(year["year"]))
            )
        elif name.lower().endswith(".csv") and _header(data).startswith(LABELS_HEADER):
            contents.entries.append(PackageEntry(path, data, PackageKind.LABELS))
        elif name == KEYWORDS or _header(data).startswith(CARRIED_HEADERS):
            contents.entries.append(PackageEntry(path, data, PackageKind.CARRIED))
        elif part := interview_part(path, data):
            contents.entries.append(PackageEntry(path, data, PackageKind.CARRIED, interview=part))
        else:
            why = _("not a file of the study's layout")
            contents.left_out.append({"path": path, "why": why})
    if not contents.of_kind(PackageKind.LABELS):
        raise ConcordError(
            _("No label file (a .csv starting with the header %(header)s) in the package.")
            % {"header": LABELS_HEADER}
        )
    return contents


def _header(data: bytes) -> str:
    first = data.removeprefix(b"\xef\xbb\xbf").split(b"\n", 1)[0]
    return first.decode("utf-8", errors="replace").strip().replace(" ", "")


def _check_sums(files: dict[str, bytes], contents: PackageContents) -> None:
    """Every line of the package's SHA256SUMS must match its file: a package changed on the way
    is refused by file and line."""
    listing = files.get(CHECKSUMS)
    if listing is None:
        return
    text = listing.decode("utf-8", errors="replace")
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        match = CHECKSUM_LINE.match(line.strip())
        if match is None:
            message = _("not a `<sha256>  <path>` line")
        elif match["path"] not in files:
            message = _("lists %(path)s, which the package does not hold") % {"path": match["path"]}
        elif hashlib.sha256(files[match["path"]]).hexdigest() != match["hash"].lower():
            message = _("%(path)s does not match its checksum") % {"path": match["path"]}
        else:
            continue
        contents.errors.append(RowError(CHECKSUMS, number, None, message))


def _folder_files(root: Path) -> dict[str, bytes]:
    files: dict[str, bytes] = {}
    total = 0
    for path in sorted(root.rglob("*")):
        relative = path.relative_to(root)
        if not path.is_file() or any(part.startswith(".") for part in relative.parts):
            continue
        total += path.stat().st_size
        _within_limits(len(files) + 1, total)
        files[relative.as_posix()] = path.read_bytes()
    return files


def _zip_files(path: Path) -> dict[str, bytes]:
    """The zip's files; one folder wrapping everything (a zipped folder) is taken off."""
    files: dict[str, bytes] = {}
    with zipfile.ZipFile(path) as archive:
        members = [m for m in archive.infolist() if not m.is_dir()]
        _within_limits(len(members), sum(m.file_size for m in members))
        for member in members:
            name = PurePosixPath(member.filename)
            if name.is_absolute() or ".." in name.parts:
                raise ConcordError(
                    _("%(name)s points outside the package; refused.") % {"name": member.filename}
                )
            if any(part.startswith(".") or part == "__MACOSX" for part in name.parts):
                continue
            files[name.as_posix()] = archive.read(member)
    tops = {p.split("/", 1)[0] for p in files}
    if len(tops) == 1 and all("/" in p for p in files):
        top = tops.pop() + "/"
        files = {p.removeprefix(top): data for p, data in files.items()}
    return files


def _within_limits(count: int, size: int) -> None:
    if count > MAX_FILES or size > MAX_BYTES:
        raise ConcordError(
            _("The package is too big: at most %(files)d files and %(mb)d MB unpacked.")
            % {"files": MAX_FILES, "mb": MAX_BYTES // (1024 * 1024)}
        )
