"""Reading the study's interview files: the codebook (CSV), the interviewees' background (.xlsx,
with merged cells) and the guideline (Markdown). Parsers only: they return rows with where each
came from, and every problem as a RowError naming file, line (the sheet's row) and column, so
the import can refuse a file whole and say everything that is wrong at once. No database.
"""

from __future__ import annotations

import csv
import io
import re
import zipfile
from dataclasses import dataclass, field

from django.utils.translation import gettext as _

from concord.errors import RowError, utf8_text
from taxonomy.interviews.models import ParticipantKind

# The codebook's columns (the study's header); matched ignoring case and spacing.
PARTICIPANT = "Participant"
TYPE = "Type"
EXPERIENCE = "Experience Level"
FRAMEWORK = "Framework Context"
PROMPT = "Prompt Category"
QUOTE = "Thematic Quote"
NODES = "Linked Taxonomy Node(s)"
INSIGHT = "Research Insight"
REQUIRED = (PARTICIPANT, TYPE, QUOTE, NODES)
OPTIONAL = (EXPERIENCE, FRAMEWORK, PROMPT, INSIGHT)
# Per participant these must read the same on every row that names them.
PER_PARTICIPANT = (TYPE, EXPERIENCE, FRAMEWORK)

LIMITS = {PARTICIPANT: 30, EXPERIENCE: 100, FRAMEWORK: 300, PROMPT: 300}
CODE_MAX = 30
MAX_ROWS = 10_000
# How the study (and people) write the two kinds of interviewee.
KIND_WORDS = {
    "user": ParticipantKind.USER,
    "llm user": ParticipantKind.USER,
    "developer": ParticipantKind.DEVELOPER,
    "framework developer": ParticipantKind.DEVELOPER,
    "dl framework developer": ParticipantKind.DEVELOPER,
}


def _key(header: str) -> str:
    return re.sub(r"\s+", " ", header or "").strip().lower()


def kind_of(text: str) -> str | None:
    """The participant kind `text` names ('User', 'LLM User', 'DL framework Developer'), or
    None."""
    return KIND_WORDS.get(_key(text))


@dataclass(frozen=True)
class CodebookRow:
    line: int
    participant: str
    kind: str
    experience: str
    framework: str
    prompt: str
    quote: str
    codes: tuple[str, ...]  # node codes as written, in order, each once
    insight: str


@dataclass
class Parsed:
    rows: list = field(default_factory=list)
    errors: list[RowError] = field(default_factory=list)


def node_codes(cell: str) -> tuple[str, ...]:
    """'A.1, B.1, C.1' -> ('A.1', 'B.1', 'C.1'); a code written twice counts once."""
    # also the full-width comma and semicolon a Chinese keyboard types
    codes = [c.strip() for c in re.split(r"[,;\uff0c\uff1b]", cell or "")]
    return tuple(dict.fromkeys(c for c in codes if c))


def codebook_parse(data: bytes, name: str) -> Parsed:
    """The codebook's rows, or every problem in it."""
    parsed = Parsed()
    try:
        text = utf8_text(data, name)
    except RowError as exc:
        parsed.errors.append(exc)
        return parsed
    reader = csv.reader(io.StringIO(text, newline=""))
    header = next(reader, None)
    if header is None:
        message = _("the file is empty; expected the header")
        parsed.errors.append(RowError(name, 1, None, message))
        return parsed
    columns = {_key(h): i for i, h in enumerate(header)}
    missing = [c for c in REQUIRED if _key(c) not in columns]
    if missing:
        message = _("missing column(s): %(columns)s; the header is %(header)s")
        found = {"columns": ", ".join(missing), "header": ",".join(header)}
        parsed.errors.append(RowError(name, 1, None, message % found))
        return parsed
    seen: dict[str, tuple[int, dict[str, str]]] = {}
    start = reader.line_num + 1
    for cells in reader:
        line, start = start, reader.line_num + 1
        if not any(c.strip() for c in cells):
            continue
        if len(parsed.rows) >= MAX_ROWS:
            message = _("more than %(most)s rows") % {"most": MAX_ROWS}
            parsed.errors.append(RowError(name, line, None, message))
            break
        row = _codebook_row(cells, columns, name, line, parsed.errors)
        if row is not None:
            _check_same_person(row, cells, columns, seen, name, parsed.errors)
            parsed.rows.append(row)
    return parsed


def _cell(cells: list[str], columns: dict[str, int], column: str) -> str:
    index = columns.get(_key(column))
    return cells[index].strip() if index is not None and index < len(cells) else ""


def _codebook_row(cells, columns, name: str, line: int, errors: list) -> CodebookRow | None:
    values = {c: _cell(cells, columns, c) for c in (*REQUIRED, *OPTIONAL)}
    problems = []
    for column in (PARTICIPANT, TYPE, QUOTE):
        if not values[column]:
            problems.append(RowError(name, line, column, _("empty; every row needs it")))
    for column, limit in LIMITS.items():
        if len(values[column]) > limit:
            message = _("%(length)s characters; at most %(most)s")
            length = {"length": len(values[column]), "most": limit}
            problems.append(RowError(name, line, column, message % length))
    kind = kind_of(values[TYPE])
    if values[TYPE] and kind is None:
        message = _("%(type)s is neither 'User' nor 'Developer'") % {"type": repr(values[TYPE])}
        problems.append(RowError(name, line, TYPE, message))
    codes = node_codes(values[NODES])
    for code in codes:
        if len(code) > CODE_MAX:
            message = _("%(code)s... is no node code") % {"code": repr(code[:40])}
            problems.append(RowError(name, line, NODES, message))
    errors.extend(problems)
    if problems or kind is None:
        return None
    return CodebookRow(
        line=line,
        participant=values[PARTICIPANT],
        kind=kind,
        experience=values[EXPERIENCE],
        framework=values[FRAMEWORK],
        prompt=values[PROMPT],
        quote=values[QUOTE],
        codes=codes,
        insight=values[INSIGHT],
    )


def _check_same_person(row: CodebookRow, cells, columns, seen: dict, name: str, errors) -> None:
    """A participant on several rows (several quotes) must be the same person on each."""
    facts = {c: _cell(cells, columns, c) for c in PER_PARTICIPANT}
    if row.participant not in seen:
        seen[row.participant] = (row.line, facts)
        return
    first_line, first = seen[row.participant]
    for column in PER_PARTICIPANT:
        if _key(facts[column]) != _key(first[column]):
            message = _("%(value)s for %(participant)s, who is %(first)s on line %(line)s")
            said = {
                "value": repr(facts[column]),
                "participant": row.participant,
                "first": repr(first[column]),
                "line": first_line,
            }
            errors.append(RowError(name, row.line, column, message % said))


# ---------------------------------------------------------------- background (.xlsx)

BACKGROUND_COLUMNS = {  # what a header starts with -> the field it fills
    "participant": "participant",
    "role": "role",
    "gender": "gender",
    "experience years": "years",
    "years": "years",
    "responsibilit": "duties",
    "duties": "duties",
}
MAX_SHEET_ROWS = 2_000


@dataclass(frozen=True)
class BackgroundRow:
    line: int  # the sheet's row number
    participant: str  # the code, when the sheet has a Participant column; else ""
    kind: str
    role: str
    gender: str
    years: str
    duties: str


def background_parse(data: bytes, name: str) -> Parsed:
    """The background sheet's rows (its first sheet), a merged cell's value on every row it
    spans. Each row's kind comes from its role ('LLM User-Software Engineer'); the participant
    from a Participant column if the sheet has one."""
    # openpyxl here, not at import: every web and worker process would hold it
    from openpyxl import load_workbook
    from openpyxl.utils.exceptions import InvalidFileException

    parsed = Parsed()
    try:
        book = load_workbook(io.BytesIO(data), data_only=True)
    except (InvalidFileException, zipfile.BadZipFile, KeyError, ValueError, OSError) as exc:
        message = _("not an .xlsx workbook Excel saved (%(reason)s)")
        parsed.errors.append(RowError(name, 1, None, message % {"reason": type(exc).__name__}))
        return parsed
    sheet = book.worksheets[0]
    if sheet.max_row > MAX_SHEET_ROWS:
        message = _("%(rows)s rows; at most %(most)s")
        parsed.errors.append(
            RowError(name, 1, None, message % {"rows": sheet.max_row, "most": MAX_SHEET_ROWS})
        )
        return parsed
    grid = _filled_grid(sheet)
    if not grid:
        message = _("the sheet is empty; expected a header")
        parsed.errors.append(RowError(name, 1, None, message))
        return parsed
    fields = _background_fields(grid[0])
    if "role" not in fields.values():
        message = _("no Roles column; the header needs Roles (User-/Developer-)")
        parsed.errors.append(RowError(name, 1, "A", message))
        return parsed
    for number, cells in enumerate(grid[1:], start=2):
        if not any(str(v or "").strip() for v in cells):
            continue
        values = {f: str(cells[i] or "").strip() for i, f in fields.items() if i < len(cells)}
        role_column = _letter(next(i for i, f in fields.items() if f == "role"))
        kind_word, _dash, role = values.get("role", "").partition("-")
        kind = kind_of(kind_word)
        if kind is None:
            message = _(
                "%(role)s names neither an LLM User nor a DL framework Developer (written"
                " 'LLM User-<role>' or 'DL framework Developer-<role>')"
            ) % {"role": repr(values.get("role", ""))}
            parsed.errors.append(RowError(name, number, role_column, message))
            continue
        parsed.rows.append(
            BackgroundRow(
                line=number,
                participant=values.get("participant", ""),
                kind=kind,
                role=role.strip()[:300],
                gender=values.get("gender", "")[:30],
                years=values.get("years", "")[:50],
                duties=values.get("duties", ""),
            )
        )
    return parsed


def _filled_grid(sheet) -> list[list]:
    """The sheet's values, row by row, with each merged range's value on all its cells (the
    study's sheet merges Responsibilities over the rows of people who share them)."""
    grid = [list(row) for row in sheet.iter_rows(values_only=True)]
    for merged in sheet.merged_cells.ranges:
        value = sheet.cell(merged.min_row, merged.min_col).value
        for r in range(merged.min_row, merged.max_row + 1):
            for c in range(merged.min_col, merged.max_col + 1):
                if r - 1 < len(grid) and c - 1 < len(grid[r - 1]):
                    grid[r - 1][c - 1] = value
    return grid


def _background_fields(header: list) -> dict[int, str]:
    fields: dict[int, str] = {}
    for i, title in enumerate(header):
        key = _key(str(title or ""))
        for start, field_name in BACKGROUND_COLUMNS.items():
            if key.startswith(start) and field_name not in fields.values():
                fields[i] = field_name
                break
    return fields


def _letter(index: int) -> str:
    from openpyxl.utils import get_column_letter

    return get_column_letter(index + 1)


def background_match(
    rows: list[CodebookRow], background: list[BackgroundRow], name: str
) -> tuple[dict[str, BackgroundRow], list[RowError]]:
    """Whose background each sheet row is. By its Participant column when the sheet has one;
    else (the study's sheet) the n-th user row is the codebook's n-th user, the n-th developer
    row its n-th developer, in the order the codebook first names them. Counts that differ are
    an error: guessing would give someone another person's background."""
    people: dict[str, str] = {}  # code -> kind, in codebook order
    for row in rows:
        people.setdefault(row.participant, row.kind)
    if any(b.participant for b in background):
        return _match_by_code(people, background, name)
    matched: dict[str, BackgroundRow] = {}
    errors = []
    for kind in ParticipantKind:
        codes = [code for code, k in people.items() if k == kind]
        sheet = [b for b in background if b.kind == kind]
        if len(codes) != len(sheet):
            where = sheet[0].line if sheet else 1
            message = _(
                "%(rows)s %(kind)s row(s), but the codebook names %(named)s (%(codes)s); add a"
                " Participant column saying whose row is whose"
            ) % {
                "rows": len(sheet),
                "kind": kind.label,
                "named": len(codes),
                "codes": ", ".join(codes) or _("none"),
            }
            errors.append(RowError(name, where, None, message))
            continue
        matched.update(zip(codes, sheet, strict=True))
    return matched, errors


def _match_by_code(people: dict[str, str], background: list[BackgroundRow], name: str):
    matched: dict[str, BackgroundRow] = {}
    errors = []
    for b in background:
        if b.participant not in people:
            message = _("%(participant)s is not in the codebook")
            place = {"participant": repr(b.participant)}
            errors.append(RowError(name, b.line, "Participant", message % place))
        elif people[b.participant] != b.kind:
            message = _("%(participant)s is a %(kind)s in the codebook")
            place = {"participant": b.participant, "kind": people[b.participant]}
            errors.append(RowError(name, b.line, "Roles", message % place))
        else:
            matched[b.participant] = b
    return matched, errors
