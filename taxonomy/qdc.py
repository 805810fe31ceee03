"""A REFI-QDA codebook (.qdc, what NVivo, ATLAS.ti, MAXQDA and others export; or the codebook of
a .qde project) read as a taxonomy: its top codes are types, their codes themes, theirs
sub-themes. A code named "<code> <name>" whose code fits its place (`C`, `C.4`, `C.4.ii`, as
Concord's own export writes them) keeps that code; any other is numbered by its place (types
`A`, `B` ..., themes `A.1`, sub-themes `A.1.i`). A code's Description is its definition.

Everything wrong with the file is an error naming it: not XML (with the line and column), not a
codebook, no codes, a code without a name, codes nested deeper than three levels, or two codes
that come out the same. No database: the rows go to the taxonomy CSV loader (taxonomy.loaders).
"""

from __future__ import annotations

import csv
import io
import re
import string
from dataclasses import dataclass
from xml.etree import ElementTree as ET

from django.utils.translation import gettext as _

from concord.errors import RowError, file_error

CODEBOOK = "urn:QDA-XML:codebook:1.0"
PROJECT = "urn:QDA-XML:project:1.0"
LEVELS = ("type", "theme", "subtheme")
NAMED = re.compile(r"^(\S+)\s+(.+)$", re.S)
ROMAN = ("i", "ii", "iii", "iv", "v", "vi", "vii", "viii", "ix", "x")
DATA_MAX = 5_000_000  # bytes; the study's taxonomy as a codebook is about 20 kB


@dataclass(frozen=True)
class CodeRow:
    code: str
    level: str
    parent: str
    name: str
    description: str


def qdc_rows(data: bytes, name: str) -> list[CodeRow]:
    """The codebook in `data` (a file called `name`) as taxonomy rows, parents first."""
    if len(data) > DATA_MAX:
        raise file_error(name, _("over %(n)d bytes") % {"n": DATA_MAX})
    try:
        # expat refuses entity amplification and ElementTree fetches no external entity
        root = ET.fromstring(data)  # noqa: S314
    except ET.ParseError as exc:
        line, column = exc.position
        raise RowError(
            name, line, str(column + 1), _("not a REFI-QDA codebook: the XML is not well formed")
        ) from exc
    codes = _codes_of(root, name)
    rows: list[CodeRow] = []
    _read(codes, name, parent=None, depth=0, rows=rows, path="")
    if not rows:
        raise file_error(name, _("the codebook has no codes"))
    seen: set[str] = set()
    for row in rows:
        if row.code in seen:
            raise file_error(name, _("two codes come out as %(code)s") % {"code": row.code})
        seen.add(row.code)
    return rows


def _codes_of(root: ET.Element, name: str) -> ET.Element:
    """The <Codes> of a CodeBook, alone (.qdc) or in a project (.qde)."""
    for ns in (CODEBOOK, PROJECT):
        if root.tag == f"{{{ns}}}CodeBook":
            book: ET.Element | None = root
        elif root.tag == f"{{{ns}}}Project":
            book = root.find(f"{{{ns}}}CodeBook")
        else:
            continue
        codes = book.find(f"{{{ns}}}Codes") if book is not None else None
        if codes is not None:
            return codes
        raise file_error(name, _("the codebook has no codes"))
    raise file_error(
        name,
        _("not a REFI-QDA codebook: it has no CodeBook of %(ns)s") % {"ns": CODEBOOK},
    )


def _read(
    element: ET.Element,
    name: str,
    *,
    parent: CodeRow | None,
    depth: int,
    rows: list[CodeRow],
    path: str,
) -> None:
    ns = element.tag[: element.tag.index("}") + 1] if element.tag.startswith("{") else ""
    for place, code in enumerate(element.findall(f"{ns}Code"), start=1):
        label = (code.get("name") or "").strip()
        where = f"{path} > {label}" if path else label
        if not label:
            raise file_error(name, _("a code under %(path)s has no name") % {"path": path or "/"})
        if depth >= len(LEVELS):
            raise file_error(
                name,
                _("%(path)s is nested deeper than three levels (type, theme, sub-theme)")
                % {"path": where},
            )
        description = code.find(f"{ns}Description")
        row = _row(label, parent, depth, place, description)
        rows.append(row)
        _read(code, name, parent=row, depth=depth + 1, rows=rows, path=where)


def _row(
    label: str, parent: CodeRow | None, depth: int, place: int, description: ET.Element | None
) -> CodeRow:
    text = (description.text or "").strip() if description is not None else ""
    named = NAMED.match(label)
    if named and _fits(named.group(1), parent, depth):
        code, title = named.group(1), named.group(2).strip()
    else:
        code, title = _numbered(parent, depth, place), label
    return CodeRow(code, LEVELS[depth], parent.code if parent else "", title, text)


def _fits(code: str, parent: CodeRow | None, depth: int) -> bool:
    """Whether `code` is a code for this place: one letter for a type, the parent's code and a
    number for a theme, and a roman numeral for a sub-theme."""
    if depth == 0:
        return len(code) == 1 and code.isalpha() and code.isupper()
    if parent is None or not code.startswith(parent.code + "."):
        return False
    last = code[len(parent.code) + 1 :]
    return last.isdigit() if depth == 1 else last in ROMAN or last.isdigit()


def _numbered(parent: CodeRow | None, depth: int, place: int) -> str:
    if depth == 0:
        return _letters(place)
    if parent is None:  # a theme or a sub-theme always has its parent
        raise ValueError("a code below the top needs its parent")
    last = ROMAN[place - 1] if depth == 2 and place <= len(ROMAN) else str(place)
    return f"{parent.code}.{last}"


def _letters(place: int) -> str:
    """A, B, ... Z, AA, AB ... for the n-th type."""
    out = ""
    while place:
        place, rest = divmod(place - 1, 26)
        out = string.ascii_uppercase[rest] + out
    return out


def qdc_csv(data: bytes, name: str) -> bytes:
    """The codebook as the taxonomy loader's CSV (`code,level,parent,name,description`)."""
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(["code", "level", "parent", "name", "description"])
    for row in qdc_rows(data, name):
        writer.writerow([row.code, row.level, row.parent, row.name, row.description])
    return out.getvalue().encode("utf-8")
