"""Issues with their text from a file a script already holds: JSON (an array of objects) or JSONL
(one object per line), each object an issue:

    {"url": "https://github.com/NVIDIA/Megatron-LM/issues/1", "title": "...", "body": "...",
     "author": "...", "state": "open", "labels": ["bug"], "created_at": "2024-05-01T10:00:00Z",
     "updated_at": "...", "closed_at": null,
     "comments": [{"author": "...", "body": "...", "created_at": "...", "id": 123}]}

Only `url` is required. A file is checked whole before anything is written, and every problem
comes back as a RowError naming the file, the line the object starts on and the field
(`comments[2].created_at`). A file is read as a stream, a block at a time, twice: once to check
it (issue_file_check), once to store it in chunks (issue_file_chunks); neither holds the file,
so memory does not grow with its size (issue 25; tests.bench.item_imports measures it).

Stored as the harvest stores issues (ingest.harvest.issue_row and the same upsert): an issue
already held with a later `updated_at` keeps its text, and comments are unique by host + id. A
comment without the host's `id` gets a stable negative id from the issue's URL and its place in
the list, so importing the same file again changes nothing.

Issues and comments are shared by every project that holds them, and their text is their
tracker's: the caller names the issues whose text a file may not change (those other projects
hold, see issue_file_store), and a comment id Concord holds under another issue is a problem of
the file (issue_file_stored_clashes), since a comment never moves between issues.
"""

from __future__ import annotations

import codecs
import hashlib
import io
import json
import re
import sqlite3
import sys
from collections.abc import Callable, Collection, Iterable, Iterator, Sequence
from contextlib import closing
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from itertools import islice
from typing import BinaryIO, TextIO, TypeVar

from django.db import transaction
from django.db.models import Max
from django.utils import timezone
from django.utils.dateparse import parse_datetime
from django.utils.translation import gettext as _

from concord.db import upsert
from concord.errors import RowError, not_utf8
from concord.input_checks import text_problem
from ingest.clients.base import CommentRecord, IssueRecord
from ingest.harvest import ISSUE_UPDATE_FIELDS, comment_row, comments_upsert, issue_row
from ingest.issue_refs import BadIssueUrl, IssueRef, parse_issue_url
from ingest.models import Comment, Issue
from ingest.services import issues_ensure

ISSUE_FIELDS = {
    "url",
    "title",
    "body",
    "author",
    "state",
    "labels",
    "created_at",
    "updated_at",
    "closed_at",
    "comments",
}
COMMENT_FIELDS = {"id", "author", "body", "created_at", "updated_at"}
# A record is at most three levels deep (comments[2].body); the decoder recurses per level, and
# fails past about a thousand with no word of where. Deeper than this is reported by field.
MAX_DEPTH = 32
_STRING = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"', re.S)  # a JSON string, escapes and all
_NUMBER = re.compile(r"[-+0-9.eE]+")
# What a file would change of an issue Concord holds: its text, and its comments' (updated_at
# decides whether the file's copy is newer, as in the upsert).
TEXT_FIELDS = ("title", "body", "author", "state", "labels", "created_at", "closed_at")
COMMENT_TEXT_FIELDS = ("author", "body", "created_at")
# Records stored at a time inside the file's one transaction: what bounds memory while writing.
CHUNK = 2000
BLOCK = 1024 * 1024  # characters read (or bytes copied) at a time
_T = TypeVar("_T")


@dataclass(frozen=True)
class IssueFileRecord:
    line: int
    ref: IssueRef
    issue: IssueRecord
    comments: tuple[CommentRecord, ...]


@dataclass(frozen=True)
class StoredIssues:
    issue_ids: list[int]
    created: int
    kept: list[IssueFileRecord]  # whose different text was not applied (see issue_file_store)


class _Bad(ValueError):
    """One field of one record that cannot be taken; `field` names it."""

    def __init__(self, field: str | None, message: str) -> None:
        self.field = field
        super().__init__(message)


def issue_file_check(
    stream: TextIO, name: str, progress: Callable[[int], object] | None = None
) -> tuple[int, list[RowError]]:
    """Read the file once for its problems, all of them, each with its line (those of what
    Concord holds included, issue_file_stored_clashes); return how many records it has. Only
    where each issue and comment id was seen is kept (on disk: _Seen), not the records."""
    errors: list[RowError] = []
    count = 0
    for chunk in _batched(_checked(stream, name, errors), CHUNK):
        errors += issue_file_stored_clashes(chunk, name)
        count += len(chunk)
        if progress is not None:
            progress(count)
    if not count and not errors:
        errors.append(RowError(name, 1, None, _("no issues in the file")))
    return count, errors


def issue_file_chunks(stream: TextIO, name: str) -> Iterator[tuple[IssueFileRecord, ...]]:
    """The records of a file issue_file_check found no problem in, CHUNK at a time."""
    errors: list[RowError] = []
    for chunk in _batched(_records(stream, name, errors), CHUNK):
        if errors:
            raise errors[0]  # the file changed after it was checked
        yield chunk
    if errors:
        raise errors[0]


def issue_file_parse(*, text: str, name: str) -> tuple[list[IssueFileRecord], list[RowError]]:
    """Every record of a file held as text, or the problems found in the file itself (all of
    them, each with its line)."""
    errors: list[RowError] = []
    records = list(_checked(io.StringIO(text, newline=""), name, errors))
    if not records and not errors:
        errors.append(RowError(name, 1, None, _("no issues in the file")))
    return records, errors


def issue_file_save(blocks: Iterable[bytes], name: str, out: BinaryIO) -> None:
    """Copy a file arriving in blocks (an upload's chunks) to `out`, checking as it goes that it
    is UTF-8 text PostgreSQL can store (no NUL); else a RowError names the line of the first
    byte that is not, as utf8_text does for a file held whole."""
    place = _Place()
    pending = b""
    for block in blocks:
        data = pending + block
        whole = len(data) - _cut_sequence(data)
        _check_block(data[:whole], name, place)
        out.write(data[:whole])
        pending = data[whole:]
    _check_block(pending, name, place)  # a sequence the end of the file cut off
    out.write(pending)


@transaction.atomic
def issue_file_store(
    records: Sequence[IssueFileRecord],
    *,
    keep_text: Callable[[Collection[int]], Collection[int]] = lambda ids: (),
) -> StoredIssues:
    """Create or update the records' issues and comments; their ids in the file's order.

    `keep_text` picks, from the records' issue ids, the issues whose text (comments included)
    the file may not change; the caller decides (ingest knows nothing of projects). Those are
    left as they are, and the records that would have changed them come back in `kept`."""
    # Issues made here take ids past the largest there was: read from the index, where a count
    # of the table per chunk made a file's import time grow with its square (issue 31).
    before = Issue.objects.aggregate(last=Max("pk"))["last"] or 0
    ids = issues_ensure(r.ref for r in records)
    created = sum(1 for pk in ids.values() if pk > before)
    # From here on each record names its issue as Concord spells it (the names' case may differ).
    spelled = {ref: ref for ref in ids}
    records = [_respelled(r, spelled[r.ref]) for r in records]
    frozen = set(keep_text(list(ids.values())))
    writable = [r for r in records if ids[r.ref] not in frozen]
    kept = _would_change([r for r in records if ids[r.ref] in frozen], ids)
    now = timezone.now()
    rows = []
    for r in writable:
        row = issue_row(r.ref.host, r.ref.owner, r.ref.repo, r.issue, now)
        del row["source"]  # a file is no harvest: an issue's source stays as it was
        rows.append(row)
    upsert(
        Issue,
        rows,
        unique=("host", "owner", "repo", "number"),
        update=ISSUE_UPDATE_FIELDS,
        newer="updated_at",
    )
    comments_upsert([comment_row(r.ref.host, c, ids[r.ref]) for r in writable for c in r.comments])
    return StoredIssues(issue_ids=[ids[r.ref] for r in records], created=created, kept=kept)


def issue_file_stored_clashes(records: Sequence[IssueFileRecord], name: str) -> list[RowError]:
    """A RowError for each record with a comment whose id Concord holds under another issue: a
    comment never moves between issues, so the file cannot be right about both."""
    keys = {(r.ref.host, c.comment_id) for r in records for c in r.comments}
    found = Comment.objects.filter(
        host__in={host for host, _ in keys}, comment_id__in={cid for _, cid in keys}
    ).values_list("host", "comment_id", "issue__owner", "issue__repo", "issue__number")
    under = {(host, cid): IssueRef(host, *issue) for host, cid, *issue in found}
    errors = []
    for r in records:
        for n, c in enumerate(r.comments):
            issue = under.get((r.ref.host, c.comment_id))
            if issue is not None and issue != r.ref:  # names compared without case
                message = _("the id of a comment Concord holds on another issue")
                errors.append(RowError(name, r.line, f"comments[{n}].id", message))
                break
    return errors


@dataclass
class _Place:
    """Where the next block of a file being copied starts: its line, and how many bytes and
    characters of that line came before it."""

    line: int = 1
    bytes: int = 0
    chars: int = 0
    at_start: bool = True


def _check_block(data: bytes, name: str, place: _Place) -> None:
    bom = len(codecs.BOM_UTF8) if place.at_start and data.startswith(codecs.BOM_UTF8) else 0
    try:
        text = data[bom:].decode("utf-8")
    except UnicodeDecodeError as exc:
        at = bom + exc.start
        raise not_utf8(name, data, at, exc.reason, line=place.line, column=place.bytes) from exc
    nul = text.find("\x00")  # the one character UTF-8 text can hold and PostgreSQL cannot
    if nul >= 0:
        line_start = text.rfind("\n", 0, nul) + 1
        before = place.chars if line_start == 0 else 0
        problem = text_problem(text[line_start : nul + 1], before=before)
        raise RowError(name, place.line + text.count("\n", 0, nul), None, str(problem))
    place.line += text.count("\n")
    place.bytes = _after_last_newline(data, place.bytes)
    place.chars = _after_last_newline(text, place.chars)
    place.at_start = place.at_start and not data


def _after_last_newline(data: str | bytes, before: int) -> int:
    """How much of the last line of `data` there is, `before` (of the line, before `data`)
    counted when `data` has no newline."""
    newline = data.rfind(b"\n") if isinstance(data, bytes) else data.rfind("\n")
    return len(data) - newline - 1 if newline >= 0 else before + len(data)


def _cut_sequence(data: bytes) -> int:
    """How many bytes at the end of `data` start a UTF-8 sequence that the next block ends."""
    for back in range(1, min(4, len(data)) + 1):
        byte = data[-back]
        if byte & 0xC0 != 0x80:  # not a continuation byte: the last sequence starts here
            size = 4 if byte >= 0xF0 else 3 if byte >= 0xE0 else 2 if byte >= 0xC0 else 1
            return back if size > back else 0
    return 0


# ---------------------------------------------------------------- reading the file


def _batched(items: Iterable[_T], size: int) -> Iterator[tuple[_T, ...]]:
    """itertools.batched, which Python 3.12 brings."""
    iterator = iter(items)
    while chunk := tuple(islice(iterator, size)):
        yield chunk


def _checked(stream: TextIO, name: str, errors: list[RowError]) -> Iterator[IssueFileRecord]:
    """The records of the file with no problem, in the file or with the records before them (a
    repeated issue or comment id); the problems go to `errors`, in the file's order."""
    with closing(_Seen()) as seen:
        for chunk in _batched(_placed(_records(stream, name, errors), errors), CHUNK):
            records = [record for record, _ in chunk]
            problems = seen.problems(records, name)
            # Each problem goes where it was found, among those of the records around it:
            # backwards, so an insertion does not move the places still to fill.
            for (_record, at), problem in reversed(list(zip(chunk, problems, strict=True))):
                if problem is not None:
                    errors.insert(at, problem)
            yield from (r for r, p in zip(records, problems, strict=True) if p is None)


def _placed(
    records: Iterator[IssueFileRecord], errors: list[RowError]
) -> Iterator[tuple[IssueFileRecord, int]]:
    """Each record with the place its own problem would take in `errors` (their number then)."""
    for record in records:
        yield record, len(errors)


def _records(stream: TextIO, name: str, errors: list[RowError]) -> Iterator[IssueFileRecord]:
    """The records of the file that are right by themselves; the problems go to `errors`."""
    for line, value in _objects(_Window(stream), name, errors):
        try:
            yield _record(value, line)
        except _Bad as exc:
            errors.append(RowError(name, line, exc.field, str(exc)))


class _Seen:
    """Where each issue and comment id of the file was first seen: all a check keeps of the
    records it has read. Kept in a private SQLite database on disk (sqlite3 deletes it on close),
    not in memory: at ten times the study (387,420 issues) a dict of them took a worker past
    300 MB, and a file can be larger still (issue 31)."""

    def __init__(self) -> None:
        self.db = sqlite3.connect("")  # "": a temporary database on disk, not ":memory:"
        self.db.execute("CREATE TABLE seen (key TEXT PRIMARY KEY, line INTEGER) WITHOUT ROWID")
        self.db.execute("CREATE TABLE wanted (key TEXT PRIMARY KEY) WITHOUT ROWID")

    def problems(self, records: Sequence[IssueFileRecord], name: str) -> list[RowError | None]:
        """Per record (in order), its problem with a record before it, or None; each id of a
        record without one is noted where it is first seen. A record whose issue was seen
        before notes nothing; one with a repeated comment id notes the comments before it."""
        lines = self._lines({k for r in records for k in (_issue_key(r), *_comment_keys(r))})
        new: dict[str, int] = {}
        problems: list[RowError | None] = []
        for record in records:
            first = lines.get(_issue_key(record))
            if first is not None:
                message = _("duplicate of line %(line)s") % {"line": first}
                problems.append(RowError(name, record.line, "url", message))
                continue
            new[_issue_key(record)] = lines[_issue_key(record)] = record.line
            clash = _comment_clash(record, lines, new)
            problems.append(None if clash is None else RowError(name, record.line, *clash))
        self.db.executemany("INSERT INTO seen VALUES (?, ?)", new.items())
        return problems

    def close(self) -> None:
        self.db.close()

    def _lines(self, keys: set[str]) -> dict[str, int]:
        """The line each of `keys` was first seen on, of those seen in earlier chunks."""
        self.db.execute("DELETE FROM wanted")
        self.db.executemany("INSERT INTO wanted VALUES (?)", ((k,) for k in keys))
        return dict(self.db.execute("SELECT key, line FROM seen JOIN wanted USING (key)"))


def _issue_key(record: IssueFileRecord) -> str:
    return "\t".join(("issue", *record.ref.key))  # no name or number holds a tab


def _comment_keys(record: IssueFileRecord) -> Iterator[str]:
    return (f"comment\t{record.ref.host}\t{c.comment_id}" for c in record.comments)


class _Window:
    """The part of a text stream being read: blocks are added at the end as a record needs them
    and what was read is dropped from the front, so a record and a block or two are held, not
    the file. Positions are in `text`; lines and columns are the file's."""

    def __init__(self, stream: TextIO) -> None:
        self.stream, self.text, self.ended = stream, "", False
        self.first_line, self.first_column = 1, 0  # where text[0] is in the file
        self.position, self.line = 0, 1  # the line of text[position], counted forward

    def more(self) -> bool:
        """Read another block (or as much as is held, for a record larger than a block); False
        at the end of the file."""
        block = "" if self.ended else self.stream.read(max(BLOCK, len(self.text)))
        self.ended = not block
        self.text += block
        return not self.ended

    def line_at(self, position: int) -> int:
        """The file's line of `position`, for positions that only move forward: each call counts
        only the newlines since the last one."""
        self.line += self.text.count("\n", self.position, position)
        self.position = position
        return self.line

    def column(self, exc: json.JSONDecodeError) -> int:
        """The column in the file of a decoding error in `text`."""
        return exc.colno + (self.first_column if exc.lineno == 1 else 0)

    def forget(self, position: int) -> int:
        """Drop the text before `position`, once a block of it has been read; its new place."""
        if position < BLOCK:
            return position
        self.first_line = self.line_at(position)
        self.first_column = _after_last_newline(self.text[:position], self.first_column)
        self.text, self.position = self.text[position:], 0
        return 0

    def skip_space(self, position: int) -> int:
        """The first position from `position` on that is not white space, reading on as needed
        (at the end of the file: the length of `text`)."""
        while True:
            position = self.forget(_skip_space(self.text, position))
            if position < len(self.text) or not self.more():
                return position

    def line_end(self, position: int) -> int:
        """Where the line at `position` ends: its newline, or the end of the file."""
        start = position
        while (found := self.text.find("\n", start)) < 0:
            start = len(self.text)
            if not self.more():
                return start
        return found


def _objects(window: _Window, name: str, errors: list[RowError]) -> Iterator[tuple[int, object]]:
    """(line, value) of each record: the elements of a JSON array, else one per JSONL line."""
    start = window.skip_space(0)
    if window.text[start : start + 1] == "[":
        yield from _array_elements(window, name, start, errors)
        return
    # Split on newlines only: str.splitlines would also split at U+2028 and other separators,
    # which JSON allows unescaped inside a string.
    position = window.forget(0)
    while position < len(window.text) or window.more():
        end = window.line_end(position)
        line, number = window.text[position:end], window.line_at(position)
        position = window.forget(end + 1)
        if not line.strip():
            continue
        try:
            yield number, json.loads(line)
        except json.JSONDecodeError as exc:
            message = _not_json(exc.msg, exc.colno)
            errors.append(RowError(name, number, None, message))
        except (RecursionError, ValueError):  # too deep, or an integer too long to read
            field, message, _end = _unreadable(line, _skip_space(line, 0))
            errors.append(RowError(name, number, field, message))


def _array_elements(
    window: _Window, name: str, at: int, errors: list[RowError]
) -> Iterator[tuple[int, object]]:
    """Each element of the array at `at`, with the line it starts on (json.loads would give the
    values but not where they are)."""
    decoder = json.JSONDecoder()
    at = window.skip_space(at + 1)
    if window.text[at : at + 1] == "]":
        return
    while True:
        decoded = _element(window, decoder, name, at, errors)
        if decoded is None:
            return  # the rest of the array cannot be found reliably
        line, value, end = decoded
        if line is not None:
            yield line, value
        at = window.skip_space(end)
        following = window.text[at : at + 1]
        if following == "]":
            line = window.line_at(at)
            if window.skip_space(at + 1) < len(window.text):
                errors.append(RowError(name, line, None, _("text after the array")))
            return
        if following != ",":
            found = f"{following!r}" if following else _("the end of the file")
            message = _("expected ',' or ']', found %(found)s") % {"found": found}
            errors.append(RowError(name, window.line_at(at), None, message))
            return
        at = window.skip_space(at + 1)


def _element(
    window: _Window, decoder: json.JSONDecoder, name: str, at: int, errors: list[RowError]
) -> tuple[int | None, object, int] | None:
    """(its line, None if it cannot be read; the value; where it ends) of the array element at
    `at`, reading on while the element may go on past what is held; None, its problem in
    `errors`, when where it ends cannot be found."""
    while True:
        try:
            value, end = decoder.raw_decode(window.text, at)
        except json.JSONDecodeError as exc:
            if _cut_short(exc, window.text) and window.more():
                continue
            line = window.first_line + exc.lineno - 1
            message = _not_json(exc.msg, window.column(exc))
            errors.append(RowError(name, line, None, message))
            return None
        except (RecursionError, ValueError):  # too deep, or an integer too long to read
            field, message, found_end = _unreadable(window.text, at)
            if found_end is None and window.more():
                continue
            errors.append(RowError(name, window.line_at(at), field, message))
            return None if found_end is None else (None, None, found_end)
        if end == len(window.text) and window.more():
            continue  # a number may go on in the next block
        return window.line_at(at), value, end


def _not_json(reason: str, column: int) -> str:
    """A decoding error's message; `reason` is the decoder's own (English) words."""
    return _("not JSON: %(reason)s at character %(column)s") % {"reason": reason, "column": column}


def _cut_short(exc: json.JSONDecodeError, text: str) -> bool:
    """Whether a decoding error may only be the end of what is held cutting a value short: a
    string not closed yet, or an error in the last few characters (a \\uXXXX escape's)."""
    return exc.msg.startswith("Unterminated string") or exc.pos >= len(text) - 6


def _skip_space(text: str, at: int) -> int:
    while at < len(text) and text[at] in " \t\r\n\ufeff":
        at += 1
    return at


def _unreadable(text: str, at: int) -> tuple[str | None, str, int | None]:
    """Why the JSON value at `at`, which the decoder gave up on without a JSONDecodeError, cannot
    be read: (the field, named as `comments[2].body`; the message; where the value ends, None if
    it does not). Two things do that: nesting past the decoder's recursion limit, and an integer
    of more digits than Python converts (sys.get_int_max_str_digits). The value is walked by hand,
    its strings skipped whole."""
    frames: list[list] = []  # per open object or array: [bracket, key or index, expecting a key]
    field: str | None = None
    message = _("not a JSON value Concord can read")
    found = False
    position = at
    while position < len(text):
        char = text[position]
        if char == '"':
            end = _string_end(text, position)
            if end is None:
                break
            if frames and frames[-1][0] == "{" and frames[-1][2]:
                frames[-1][1] = _key(text[position : end + 1])
            position = end + 1
        elif char in "-0123456789":
            number = _NUMBER.match(text, position)
            end = number.end() if number else position + 1
            digits = sum(map(str.isdigit, text[position:end]))
            if not found and digits > sys.get_int_max_str_digits():
                message = _("a number of %(digits)s digits") % {"digits": f"{digits:,}"}
                field, found = _field(frames), True
            position = end
        else:
            position += 1
            if char in "{[":
                frames.append([char, None if char == "{" else 0, char == "{"])
                if not found and len(frames) > MAX_DEPTH:
                    message = _("nested deeper than %(levels)s levels") % {"levels": MAX_DEPTH}
                    field = _field(frames)
                    found = True
            elif char in "}]" and frames:
                frames.pop()
            elif char == "," and frames:
                if frames[-1][0] == "[":
                    frames[-1][1] += 1
                else:
                    frames[-1][2] = True
            elif char == ":" and frames:
                frames[-1][2] = False
            elif not char.isspace() and not char.isalpha():
                break  # the value ended before this (a separator of an enclosing array)
            else:
                continue  # white space, or a letter of true, false or null
        if not frames:
            return field, message, position  # the value is complete
    return field, message, None


def _string_end(text: str, start: int) -> int | None:
    """Where the JSON string opening at `start` closes (its quote), None if it does not."""
    match = _STRING.match(text, start)
    return match.end() - 1 if match else None


def _key(quoted: str) -> str:
    try:
        return str(json.loads(quoted))
    except ValueError:
        return quoted[1:-1]


def _field(frames: list[list]) -> str | None:
    """The field of a record that the open objects and arrays are in, named as other problems
    name fields: `title`, `labels`, `comments[2]`, `comments[2].body`."""
    if not frames or frames[0][0] != "{" or frames[0][1] is None:
        return None  # the record itself is not an object
    field = str(frames[0][1])
    if field == "comments" and len(frames) >= 2 and frames[1][0] == "[":
        field += f"[{frames[1][1]}]"
        if len(frames) >= 3 and frames[2][0] == "{" and frames[2][1] is not None:
            field += f".{frames[2][1]}"
    return field


# ---------------------------------------------------------------- one record


def _record(value: object, line: int) -> IssueFileRecord:
    data = _object(value, "", ISSUE_FIELDS)
    url = data.get("url")
    if not isinstance(url, str) or not url.strip():
        raise _Bad("url", _("required: the issue's GitHub or Gitee URL"))
    try:
        ref = parse_issue_url(url)
    except BadIssueUrl as exc:
        raise _Bad("url", str(exc)) from exc
    comments = data.get("comments") or []
    if not isinstance(comments, list):
        raise _Bad("comments", _("expected a list of comments"))
    created = _moment(data, "created_at")
    issue = IssueRecord(
        number=ref.number,
        host_id=None,
        url=ref.url,
        title=_text(data, "title", limit=1000),  # the columns' lengths
        body=_text(data, "body"),
        author=_text(data, "author", limit=100),
        state=_text(data, "state", limit=20),
        labels=_labels(data),
        # Issue.created_at may be empty; IssueRecord's type is for the forges, which always say.
        created_at=created,  # type: ignore[arg-type]
        updated_at=_moment(data, "updated_at"),
        closed_at=_moment(data, "closed_at"),
        comment_count=len(comments),
        is_pull_request=False,
    )
    return IssueFileRecord(
        line=line,
        ref=ref,
        issue=issue,
        comments=tuple(_comment(c, ref, n) for n, c in enumerate(comments)),
    )


def _comment(value: object, ref: IssueRef, n: int) -> CommentRecord:
    where = f"comments[{n}]."
    data = _object(value, where, COMMENT_FIELDS)
    given = data.get("id")
    if given is None:
        comment_id = _stable_id(ref, n)
    elif isinstance(given, int) and not isinstance(given, bool) and 0 < given < 2**63:
        comment_id = given
    else:
        raise _Bad(where + "id", _("expected the host's comment id, a positive whole number"))
    return CommentRecord(
        comment_id=comment_id,
        issue_number=ref.number,
        author=_text(data, "author", where, limit=100),
        body=_text(data, "body", where),
        created_at=_moment(data, "created_at", where),
        updated_at=_moment(data, "updated_at", where),
    )


def _object(value: object, where: str, allowed: set[str]) -> dict:
    if not isinstance(value, dict):
        message = _("expected an object, not %(type)s") % {"type": type(value).__name__}
        raise _Bad(where.rstrip(".") or None, message)
    unknown = sorted(set(value) - allowed)
    if unknown:
        known = ", ".join(sorted(allowed))
        message = _("unknown field; the fields are %(fields)s") % {"fields": known}
        raise _Bad(where + str(unknown[0]), message)
    return value


def _text(data: dict, key: str, where: str = "", *, limit: int | None = None) -> str:
    value = data.get(key)
    if value is None:
        return ""
    if not isinstance(value, str):
        raise _Bad(where + key, _("expected text, not %(type)s") % {"type": type(value).__name__})
    problem = text_problem(value)
    if problem is not None:
        raise _Bad(where + key, problem)
    if limit is not None and len(value) > limit:
        message = _("%(length)s characters; the most is %(limit)s")
        raise _Bad(where + key, message % {"length": len(value), "limit": limit})
    return value


def _labels(data: dict) -> list[str]:
    labels = data.get("labels") or []
    if not isinstance(labels, list) or not all(isinstance(x, str) for x in labels):
        raise _Bad("labels", _("expected a list of label names"))
    for label in labels:
        problem = text_problem(label)
        if problem is not None:
            raise _Bad("labels", problem)
    return labels


def _moment(data: dict, key: str, where: str = "") -> datetime | None:
    value = data.get(key)
    if value is None or value == "":
        return None
    if not isinstance(value, str):
        raise _Bad(where + key, _("expected a date and time such as 2024-05-01T10:00:00Z"))
    try:
        moment = parse_datetime(value)
    except ValueError:
        moment = None
    if moment is None:
        message = _("%(value)s is not a date and time such as 2024-05-01T10:00:00Z")
        raise _Bad(where + key, message % {"value": repr(value[:40])})
    return moment if moment.tzinfo else moment.replace(tzinfo=UTC)


def _comment_clash(
    record: IssueFileRecord, lines: dict[str, int], new: dict[str, int]
) -> tuple[str, str] | None:
    """(field, message) when a comment repeats the id of another in the file (comments are
    unique by host and id; `lines` has where each id was first seen); else note where each id
    is, in `lines` and in `new`."""
    for n, key in enumerate(_comment_keys(record)):
        first = lines.get(key)
        if first is not None:
            return f"comments[{n}].id", _("the id of a comment on line %(line)s again") % {
                "line": first
            }
        new[key] = lines[key] = record.line
    return None


def _stable_id(ref: IssueRef, n: int) -> int:
    """A negative comment id for the n-th comment of `ref` (hosts' ids are positive)."""
    digest = hashlib.sha256(f"{ref.url}\n{n}".encode()).digest()
    return -(int.from_bytes(digest[:8], "big") >> 1) - 1


def _respelled(record: IssueFileRecord, stored: IssueRef) -> IssueFileRecord:
    """`record` under its issue's names as Concord spells them (`stored`, equal to record.ref
    but for case): its URL, and the stable ids of its comments without one, which come from the
    URL, so the same comments from a file spelling the names otherwise are the same comments."""
    if (stored.owner, stored.repo) == (record.ref.owner, record.ref.repo):
        return record
    comments = tuple(
        replace(c, comment_id=_stable_id(stored, n)) if c.comment_id < 0 else c
        for n, c in enumerate(record.comments)
    )
    issue = replace(record.issue, url=stored.url)
    return replace(record, ref=stored, issue=issue, comments=comments)


# ---------------------------------------------------------------- text that is kept


def _would_change(
    records: list[IssueFileRecord], ids: dict[IssueRef, int]
) -> list[IssueFileRecord]:
    """The records that are a newer copy of their issue (by updated_at, as the upsert decides)
    with different text or comments: what the file would have written over what is stored."""
    stored = Issue.objects.in_bulk([ids[r.ref] for r in records])
    newer = [r for r in records if _newer(r.issue.updated_at, stored[ids[r.ref]].updated_at)]
    notes = {
        (c.host, c.comment_id): c
        for c in Comment.objects.filter(issue_id__in=[ids[r.ref] for r in newer]).only(
            "host", "comment_id", "updated_at", *COMMENT_TEXT_FIELDS
        )
    }
    return [r for r in newer if _differs(r, stored[ids[r.ref]], notes)]


def _differs(record: IssueFileRecord, issue: Issue, notes: dict[tuple[str, int], Comment]) -> bool:
    """Whether `record` says something else than `issue` and its comments (`notes`)."""
    row = issue_row(issue.host, issue.owner, issue.repo, record.issue, None)
    if any(row[f] != getattr(issue, f) for f in TEXT_FIELDS):
        return True
    for comment in record.comments:
        note = notes.get((issue.host, comment.comment_id))
        if note is None:
            return True  # a comment the issue does not have
        if _newer(comment.updated_at, note.updated_at) and any(
            getattr(comment, f) != getattr(note, f) for f in COMMENT_TEXT_FIELDS
        ):
            return True
    return False


def _newer(incoming: datetime | None, stored: datetime | None) -> bool:
    """Whether upsert(newer="updated_at") takes the incoming copy."""
    return stored is None or (incoming is not None and incoming > stored)
