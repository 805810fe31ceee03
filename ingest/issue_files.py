"""Issues with their text from a file a script already holds: JSON (an array of objects) or JSONL
(one object per line), each object an issue:

    {"url": "https://github.com/NVIDIA/Megatron-LM/issues/1", "title": "...", "body": "...",
     "author": "...", "state": "open", "labels": ["bug"], "created_at": "2024-05-01T10:00:00Z",
     "updated_at": "...", "closed_at": null,
     "comments": [{"author": "...", "body": "...", "created_at": "...", "id": 123}]}

Only `url` is required. A file is checked whole before anything is written, and every problem
comes back as a RowError naming the file, the line the object starts on and the field
(`comments[2].created_at`). Stored as the harvest stores issues (ingest.harvest.issue_row and
the same upsert): an issue already held with a later `updated_at` keeps its text, and comments
are unique by host + id. A comment without the host's `id` gets a stable negative id from the
issue's URL and its place in the list, so importing the same file again changes nothing.

Issues and comments are shared by every project that holds them, and their text is their
tracker's: the caller names the issues whose text a file may not change (those other projects
hold, see issue_file_store), and a comment id Concord holds under another issue is a problem of
the file (issue_file_stored_clashes), since a comment never moves between issues.
"""

from __future__ import annotations

import hashlib
import json
import re
import sys
from collections.abc import Callable, Collection, Iterator
from dataclasses import dataclass, replace
from datetime import UTC, datetime

from django.db import transaction
from django.utils import timezone
from django.utils.dateparse import parse_datetime

from concord.db import upsert
from concord.errors import RowError
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
PROGRESS_EVERY = 500  # records


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


def issue_file_parse(
    *, text: str, name: str, progress: Callable[[int], object] | None = None
) -> tuple[list[IssueFileRecord], list[RowError]]:
    """Every record of the file, or the problems found (all of them, each with its line)."""
    records: list[IssueFileRecord] = []
    errors: list[RowError] = []
    seen: dict[IssueRef, int] = {}
    comment_lines: dict[tuple[str, int], int] = {}
    for line, value in _objects(text, name, errors):
        try:
            record = _record(value, line)
        except _Bad as exc:
            errors.append(RowError(name, line, exc.field, str(exc)))
            continue
        if record.ref in seen:
            errors.append(RowError(name, line, "url", f"duplicate of line {seen[record.ref]}"))
            continue
        seen[record.ref] = line
        clash = _comment_clash(record, comment_lines)
        if clash is not None:
            errors.append(RowError(name, line, clash[0], clash[1]))
            continue
        records.append(record)
        if progress is not None and len(records) % PROGRESS_EVERY == 0:
            progress(len(records))
    if not records and not errors:
        errors.append(RowError(name, 1, None, "no issues in the file"))
    return records, errors


@transaction.atomic
def issue_file_store(
    records: list[IssueFileRecord],
    *,
    keep_text: Callable[[Collection[int]], Collection[int]] = lambda ids: (),
) -> StoredIssues:
    """Create or update the records' issues and comments; their ids in the file's order.

    `keep_text` picks, from the records' issue ids, the issues whose text (comments included)
    the file may not change; the caller decides (ingest knows nothing of projects). Those are
    left as they are, and the records that would have changed them come back in `kept`."""
    before = Issue.objects.count()
    ids = issues_ensure(r.ref for r in records)
    created = Issue.objects.count() - before
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


def issue_file_stored_clashes(records: list[IssueFileRecord], name: str) -> list[RowError]:
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
                message = "the id of a comment Concord holds on another issue"
                errors.append(RowError(name, r.line, f"comments[{n}].id", message))
                break
    return errors


def issue_file_text_check(text: str, name: str) -> None:
    """A RowError naming the first line with text PostgreSQL cannot hold (a raw NUL byte, a lone
    surrogate), which the job row could not even store."""
    if text_problem(text) is None:
        return
    for number, line in enumerate(text.splitlines(), start=1):
        problem = text_problem(line)
        if problem is not None:
            raise RowError(name, number, None, problem)


# ---------------------------------------------------------------- reading the file


def _objects(text: str, name: str, errors: list[RowError]) -> Iterator[tuple[int, object]]:
    """(line, value) of each record: the elements of a JSON array, else one per JSONL line."""
    start = _skip_space(text, 0)
    if text[start : start + 1] == "[":
        yield from _array_elements(text, name, start, errors)
        return
    # Split on newlines only: str.splitlines would also split at U+2028 and other separators,
    # which JSON allows unescaped inside a string.
    for number, line in enumerate(text.split("\n"), start=1):
        if not line.strip():
            continue
        try:
            yield number, json.loads(line)
        except json.JSONDecodeError as exc:
            message = f"not JSON: {exc.msg} at character {exc.colno}"
            errors.append(RowError(name, number, None, message))
        except (RecursionError, ValueError):  # too deep, or an integer too long to read
            field, message, _ = _unreadable(line, _skip_space(line, 0))
            errors.append(RowError(name, number, field, message))


def _array_elements(
    text: str, name: str, at: int, errors: list[RowError]
) -> Iterator[tuple[int, object]]:
    """Each element of the array at `at`, with the line it starts on (json.loads would give the
    values but not where they are)."""
    decoder = json.JSONDecoder()
    lines = _LineCounter(text)
    at = _skip_space(text, at + 1)
    if text[at : at + 1] == "]":
        return
    while True:
        try:
            value, end = decoder.raw_decode(text, at)
        except json.JSONDecodeError as exc:
            message = f"not JSON: {exc.msg} at character {exc.colno}"
            errors.append(RowError(name, exc.lineno, None, message))
            return  # the rest of the array cannot be found reliably
        except (RecursionError, ValueError):  # too deep, or an integer too long to read
            field, message, found_end = _unreadable(text, at)
            errors.append(RowError(name, lines.at(at), field, message))
            if found_end is None:
                return
            end = found_end
        else:
            yield lines.at(at), value
        at = _skip_space(text, end)
        following = text[at : at + 1]
        if following == "]":
            if text[_skip_space(text, at + 1) :]:
                errors.append(RowError(name, lines.at(at), None, "text after the array"))
            return
        if following != ",":
            found = f"{following!r}" if following else "the end of the file"
            message = f"expected ',' or ']', found {found}"
            errors.append(RowError(name, lines.at(at), None, message))
            return
        at = _skip_space(text, at + 1)


class _LineCounter:
    """The line of a position in `text`, for positions that only move forward: each call counts
    only the newlines since the last one, so a large file is read once, not once per record."""

    def __init__(self, text: str) -> None:
        self.text, self.position, self.line = text, 0, 1

    def at(self, position: int) -> int:
        self.line += self.text.count("\n", self.position, position)
        self.position = position
        return self.line


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
    message = "not a JSON value Concord can read"
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
                field, message, found = _field(frames), f"a number of {digits:,} digits", True
            position = end
        else:
            position += 1
            if char in "{[":
                frames.append([char, None if char == "{" else 0, char == "{"])
                if not found and len(frames) > MAX_DEPTH:
                    field, message = _field(frames), f"nested deeper than {MAX_DEPTH} levels"
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
        raise _Bad("url", "required: the issue's GitHub or Gitee URL")
    try:
        ref = parse_issue_url(url)
    except BadIssueUrl as exc:
        raise _Bad("url", str(exc)) from exc
    comments = data.get("comments") or []
    if not isinstance(comments, list):
        raise _Bad("comments", "expected a list of comments")
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
        raise _Bad(where + "id", "expected the host's comment id, a positive whole number")
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
        raise _Bad(where.rstrip(".") or None, f"expected an object, not {type(value).__name__}")
    unknown = sorted(set(value) - allowed)
    if unknown:
        known = ", ".join(sorted(allowed))
        raise _Bad(where + str(unknown[0]), f"unknown field; the fields are {known}")
    return value


def _text(data: dict, key: str, where: str = "", *, limit: int | None = None) -> str:
    value = data.get(key)
    if value is None:
        return ""
    if not isinstance(value, str):
        raise _Bad(where + key, f"expected text, not {type(value).__name__}")
    problem = text_problem(value)
    if problem is not None:
        raise _Bad(where + key, problem)
    if limit is not None and len(value) > limit:
        raise _Bad(where + key, f"{len(value)} characters; the most is {limit}")
    return value


def _labels(data: dict) -> list[str]:
    labels = data.get("labels") or []
    if not isinstance(labels, list) or not all(isinstance(x, str) for x in labels):
        raise _Bad("labels", "expected a list of label names")
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
        raise _Bad(where + key, "expected a date and time such as 2024-05-01T10:00:00Z")
    try:
        moment = parse_datetime(value)
    except ValueError:
        moment = None
    if moment is None:
        raise _Bad(
            where + key, f"{value[:40]!r} is not a date and time such as 2024-05-01T10:00:00Z"
        )
    return moment if moment.tzinfo else moment.replace(tzinfo=UTC)


def _comment_clash(
    record: IssueFileRecord, lines: dict[tuple[str, int], int]
) -> tuple[str, str] | None:
    """(field, message) when a comment repeats the id of another in the file (comments are
    unique by host and id); else note where each id is."""
    for n, comment in enumerate(record.comments):
        key = (record.ref.host, comment.comment_id)
        if key in lines:
            return f"comments[{n}].id", f"the id of a comment on line {lines[key]} again"
        lines[key] = record.line
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
