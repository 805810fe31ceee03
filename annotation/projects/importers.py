"""Import labels in the study format: `Issue_URL,Label1..LabelN,Final_Label`.

N comes from the header (any N >= 1); a file of the `Issue_URL` column alone lists issues to
label, each an item without labels. Each LabelJ column is one volunteer of the project: the
member mapped to it, else a placeholder account that cannot sign in (placeholder_username); a
blank cell means that volunteer gave no label. Labels are node codes at any level; Final_Label
becomes the resolution, its method derived from the votes. A file is checked completely before
anything is written, then written in one transaction: a bad file changes nothing, and importing
the same file again changes nothing either. It is read once, as a stream: the check keeps the
rows it parsed in a temporary file, which the write reads back CHUNK rows at a time inside that
transaction, so what is held is a chunk, not the file (#31: the 10x study's 2.7 M labels took
an import to 1.4 GB).

A later row repeating an earlier row's issue URL (the study's own files have such rows) is
skipped: the first row is kept, and the repeat is reported with its line, the line it repeats and
whether its labels differ, and recorded (MergedRepeat) so Reports and the repositories export can
say how many source rows were merged. With refuse_repeats the file is refused instead.
"""

from __future__ import annotations

import codecs
import csv
import io
import pickle
import re
import tempfile
from collections import defaultdict
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import BinaryIO

from django.conf import settings
from django.contrib.auth import get_user_model
from django.contrib.auth.hashers import make_password
from django.db import transaction
from django.utils.translation import gettext as _

from annotation.figures.tallies import figures_marked_stale
from annotation.gate import OPERATOR, Write, gate
from annotation.lifecycle import Move, Outcome, item_outcome, items_move, resolution_method
from annotation.models import (
    Action,
    Annotation,
    Item,
    Membership,
    MergedRepeat,
    Method,
    Project,
    Resolution,
    Role,
)
from annotation.project_nodes import project_nodes
from annotation.projects.services import entry_stage
from concord.db import refresh_planner_statistics_as_it_grows
from concord.errors import ConcordError, RowError, not_utf8
from ingest.details import details_request
from ingest.issue_refs import BadIssueUrl, IssueRef, parse_issue_url
from ingest.models import Issue
from ingest.services import insert_rows, issues_ensure, issues_found

URL_COLUMN = "Issue_URL"
FINAL_COLUMN = "Final_Label"
LABEL_COLUMN = re.compile(r"^Label([1-9][0-9]*)$")
MAX_REPORTED = 20
BATCH = 5000
# Rows written at a time: what the import holds, not the file. At the 10x study, 10,000 took
# 162 s at 154 MB peak, 40,000 131 s (the whole file at once: 131 s, 1.4 GB) at 240 MB.
CHUNK = 40000
# A line ends at \n, \r\n or a lone \r, as io.StringIO(text, newline="") splits it for csv.
_LINES = re.compile(r"[^\r\n]*(?:\r\n|\r|\n)|[^\r\n]+")


class ImportFailed(ConcordError):
    """Every problem found in a file, each with its line and column; nothing was written."""

    def __init__(self, errors: list[RowError]) -> None:
        self.errors = errors
        shown = "\n".join(f"  {e}" for e in errors[:MAX_REPORTED])
        more = ""
        if len(errors) > MAX_REPORTED:
            more = "\n  " + _("... and %(more)s more") % {"more": len(errors) - MAX_REPORTED}
        message = _("%(count)s problem(s); nothing was imported:") % {"count": len(errors)}
        super().__init__(f"{message}\n{shown}{more}")


@dataclass(frozen=True)
class StudyRow:
    line: int
    ref: IssueRef
    labels: tuple[int | None, ...]  # node id per LabelJ column, None for a blank cell
    final: int | None


@dataclass(frozen=True)
class Repeat:
    """A row skipped because an earlier row of the same file has its issue URL."""

    line: int
    first_line: int
    ref: IssueRef
    labels_differ: bool  # any LabelJ or Final_Label cell differs from the kept row

    def __str__(self) -> str:
        if self.labels_differ:
            message = _("line %(line)s: skipped, repeats line %(first)s with different labels")
        else:
            message = _("line %(line)s: skipped, repeats line %(first)s with the same labels")
        return message % {"line": self.line, "first": self.first_line}


@dataclass(frozen=True)
class ImportReport:
    rows: int
    items_created: int
    annotations_created: int
    resolutions_created: int
    repeats: tuple[Repeat, ...] = ()


def placeholder_username(project: Project, column: int) -> str:
    """The name of the account that holds column LabelJ's labels until an admin maps a member to
    it. The ':' is outside what Django's username validator accepts (letters, digits, @.+-_), so
    no sign-up or bulk add can make an account a person holds with this name; the project's id,
    not its slug, keeps the name when the slug changes."""
    return f"label:{project.pk}:{column}"


def is_placeholder(user, project: Project, column: int) -> bool:
    """The one test for "this account is the import's stand-in for LabelJ": exactly that name
    and no usable password. An account that can sign in is a person's (or one staff gave a
    password): never taken for a column, demoted or locked out."""
    return user.username == placeholder_username(project, column) and not user.has_usable_password()


def study_labels_import(
    *, project: Project, path: Path, refuse_repeats: bool = False, actor=OPERATOR
) -> ImportReport:
    """Import a file from disk (commands: the operator's, by default), read as a stream."""
    with path.open("rb") as stream:
        return _import(
            project=project,
            actor=actor,
            stream=stream,
            name=str(path),
            refuse_repeats=refuse_repeats,
        )


def study_labels_import_bytes(
    *, project: Project, actor, data: bytes, name: str, refuse_repeats: bool = False
) -> ImportReport:
    """Import one file's content; `name` is what errors and the repeat records call it."""
    return _import(
        project=project,
        actor=actor,
        stream=io.BytesIO(data),  # shares `data`'s buffer: no copy
        name=name,
        refuse_repeats=refuse_repeats,
    )


def _import(
    *, project: Project, actor, stream: BinaryIO, name: str, refuse_repeats: bool
) -> ImportReport:
    gate(actor, project, Write.LABELS_IMPORT)
    codes = dict(project_nodes(project).values_list("code", "pk"))  # not another project's
    checked = study_csv_check(stream=stream, codes=codes, name=name, refuse_repeats=refuse_repeats)
    with checked.rows:
        return _write(project=project, checked=checked, name=name)


@dataclass(frozen=True)
class Checked:
    """A file that passed its check: its LabelJ numbers, its rows (parsed, on disk) and the
    repeated rows among them."""

    columns: list[int]
    rows: _Spool
    repeats: _Repeats


def study_csv_check(
    *, stream: BinaryIO, codes: dict[str, int], name: str, refuse_repeats: bool = False
) -> Checked:
    """Check the whole file; return it checked, its repeated rows to be skipped (each an error
    instead when `refuse_repeats`), or raise ImportFailed. Read as a stream: what is held is a
    line number per issue (to find the repeats), not the rows."""
    first_line: dict[str, int] = {}
    repeat_of: dict[int, int] = {}
    spool = _Spool()
    try:
        read = _StudyReader(stream, name, codes)
        for row in read.rows():
            spool.add(row)
            first = first_line.setdefault("\n".join(row.ref.key), row.line)
            if first != row.line:
                repeat_of[row.line] = first
        del first_line
        errors, repeats = read.errors, _Repeats(repeat_of)
        if refuse_repeats and repeat_of:
            # stable: a row's own problems come before its being a duplicate, as they are read
            refused = _refused_repeats(spool, repeats, name)
            errors = sorted([*errors, *refused], key=lambda e: e.where.line or 0)
        if errors:
            raise ImportFailed(errors)
    except BaseException:
        spool.close()
        raise
    return Checked(read.columns, spool, repeats)


class _Spool:
    """The rows as the check parsed them, in a temporary file CHUNK at a time: the write reads
    them back a chunk at a time instead of holding them, or parsing the file again (#31)."""

    def __init__(self) -> None:
        self._file = tempfile.TemporaryFile()  # noqa: SIM115 - closed with the spool
        self._pending: list[tuple] = []

    def add(self, row: StudyRow) -> None:
        ref = row.ref
        self._pending.append(
            (row.line, ref.host, ref.owner, ref.repo, ref.number, row.labels, row.final)
        )
        if len(self._pending) == CHUNK:
            self._flush()

    def chunks(self) -> Iterator[list[StudyRow]]:
        self._flush()
        self._file.seek(0)
        while True:
            try:
                rows = pickle.load(self._file)  # noqa: S301 - written above, by this process
            except EOFError:
                return
            yield [
                StudyRow(line, IssueRef(host, owner, repo, number), labels, final)
                for line, host, owner, repo, number, labels, final in rows
            ]

    def _flush(self) -> None:
        if self._pending:
            pickle.dump(self._pending, self._file, protocol=pickle.HIGHEST_PROTOCOL)
            self._pending = []

    def close(self) -> None:
        self._file.close()

    def __enter__(self) -> _Spool:
        return self

    def __exit__(self, *exc_info) -> None:
        self.close()


class _StudyReader:
    """One read of a study file from a binary stream: its header (checked at once), then its
    rows; a problem in a row is added to `errors` (the row is dropped, or kept without the
    unknown code: _parse_row)."""

    def __init__(self, stream: BinaryIO, name: str, codes: dict[str, int]) -> None:
        self.name, self.codes = name, codes
        self.errors: list[RowError] = []
        self._reader = csv.reader(_text_lines(stream, name))
        try:
            self.header = next(self._reader, [])
        except csv.Error as exc:
            raise ImportFailed([RowError(name, 1, None, _unreadable(exc))]) from exc
        except RowError as exc:  # not UTF-8: that alone is reported, as for the whole file
            raise ImportFailed([exc]) from exc
        self.columns = _label_columns(self.header, name)

    def rows(self) -> Iterator[StudyRow]:
        reader = self._reader
        try:
            for record in reader:
                line = reader.line_num
                if not any(cell.strip() for cell in record):
                    continue
                row = _parse_row(record, self.header, self.codes, self.name, line, self.errors)
                if row is not None:
                    yield row
        except csv.Error as exc:
            self.errors.append(RowError(self.name, reader.line_num, None, _unreadable(exc)))
        except RowError as exc:
            raise ImportFailed([exc]) from exc


def _text_lines(stream: BinaryIO, name: str) -> Iterator[str]:
    """The file's lines as text, as io.StringIO(text, newline="") splits them, decoded one at a
    time (a UTF-8 sequence never holds a b"\\n"). A byte-order mark is dropped; a byte that is
    not UTF-8 is a RowError naming its line and place, as utf8_text says it for a whole file."""
    number = 1
    for raw in stream:
        bom = len(codecs.BOM_UTF8) if number == 1 and raw.startswith(codecs.BOM_UTF8) else 0
        try:
            text = raw[bom:].decode("utf-8")
        except UnicodeDecodeError as exc:
            raise not_utf8(name, raw, bom + exc.start, exc.reason, line=number) from exc
        number += 1
        if "\r" in text[:-2]:  # a lone \r ends a line too
            yield from _LINES.findall(text)
        else:
            yield text


class _Repeats:
    """A file's repeated rows as the check found them (line -> line of the row it repeats).
    The next pass over the checked rows (see) compares each one's labels with those of the row
    it repeats, so the check need not hold every row's labels."""

    def __init__(self, repeat_of: dict[int, int]) -> None:
        self._repeat_of = repeat_of
        self._kept: dict[int, tuple | None] = dict.fromkeys(repeat_of.values())
        self.found: list[Repeat] = []

    def see(self, row: StudyRow) -> bool:
        """Whether `row` repeats an earlier row and is skipped."""
        first = self._repeat_of.get(row.line)
        if first is None:
            if row.line in self._kept:
                self._kept[row.line] = (row.labels, row.final)
            return False
        differ = (row.labels, row.final) != self._kept[first]
        self.found.append(Repeat(row.line, first, row.ref, differ))
        return True


def _refused_repeats(spool: _Spool, repeats: _Repeats, name: str) -> list[RowError]:
    """With refuse_repeats, each repeated row is an error saying whether its labels differ."""
    for rows in spool.chunks():
        for row in rows:
            repeats.see(row)
    errors = []
    for repeat in repeats.found:
        if repeat.labels_differ:
            message = _("duplicate of line %(line)s with different labels")
        else:
            message = _("duplicate of line %(line)s")
        where = {"line": repeat.first_line}
        errors.append(RowError(name, repeat.line, URL_COLUMN, message % where))
    return errors


def _unreadable(exc: csv.Error) -> str:
    """The csv module's own (English) words, inside the reader's language."""
    return _("unreadable CSV: %(reason)s") % {"reason": exc}


def _label_columns(header: list[str], name: str) -> list[int]:
    header = [h.strip() for h in header]
    if header == [URL_COLUMN]:
        return []  # issues to label, no labels yet
    if len(header) < 3 or header[0] != URL_COLUMN or header[-1] != FINAL_COLUMN:
        message = _(
            "header must be %(url)s,Label1..LabelN,%(final)s (or %(url)s alone); found %(found)s"
        )
        found = {"url": URL_COLUMN, "final": FINAL_COLUMN, "found": repr(",".join(header))}
        raise ImportFailed([RowError(name, 1, None, message % found)])
    numbers = []
    for position, title in enumerate(header[1:-1], start=1):
        match = LABEL_COLUMN.match(title)
        if match is None or int(match[1]) != position:
            message = _("expected %(column)s here") % {"column": f"Label{position}"}
            raise ImportFailed([RowError(name, 1, title, message)])
        numbers.append(position)
    return numbers


def _parse_row(record, header, codes, name, line, errors) -> StudyRow | None:
    if len(record) != len(header):
        message = _("%(cells)s cells, header has %(columns)s")
        errors.append(
            RowError(name, line, None, message % {"cells": len(record), "columns": len(header)})
        )
        return None
    try:
        ref = parse_issue_url(record[0])
    except BadIssueUrl as exc:
        errors.append(RowError(name, line, URL_COLUMN, str(exc)))
        return None
    if len(header) == 1:
        return StudyRow(line, ref, (), None)
    nodes: list[int | None] = []
    for title, cell in zip(header[1:], record[1:], strict=True):
        code = cell.strip()
        if code and code not in codes:
            message = _("unknown taxonomy code %(code)s") % {"code": repr(code)}
            errors.append(RowError(name, line, title.strip(), message))
        nodes.append(codes.get(code) if code else None)
    return StudyRow(line, ref, tuple(nodes[:-1]), nodes[-1])


@dataclass
class _Written:
    """What the chunks written so far made, and the rows that contradict what is stored."""

    rows: int = 0
    items: int = 0
    annotations: int = 0
    resolutions: int = 0
    errors: list[RowError] = field(default_factory=list)
    issue_ids: list[int] = field(default_factory=list)  # a file of URLs alone: to fetch


@transaction.atomic
def _write(*, project: Project, checked: Checked, name: str) -> ImportReport:
    """Write the checked file in one transaction, CHUNK rows at a time (each issue's first row;
    the repeats are skipped). A row that contradicts a stored label or resolution is found here
    and, after every chunk, rolls all of it back."""
    columns, repeats = checked.columns, checked.repeats
    volunteers = _column_volunteers(project, columns, name)
    written = _Written()
    with figures_marked_stale(project):
        for rows in checked.rows.chunks():
            kept = [row for row in rows if not repeats.see(row)]
            if kept:
                _write_chunk(project, kept, columns, volunteers, name, written)
            refresh_planner_statistics_as_it_grows(Issue, Item, Annotation, Resolution)
    if written.errors:
        raise ImportFailed(written.errors)
    # A file of URLs alone (no label columns) makes items with nothing but their URL: their text
    # comes from the tracker in the background (as for a URL list; not in-process, where
    # thousands of fetches would hold the import). A labeled study file does not queue them:
    # tens of thousands of fetches would spend hours of the tracker's rate limit on text its
    # labels do not need; its items say on the labeling page that Concord has only the address.
    if not columns and not settings.CELERY_TASK_ALWAYS_EAGER:
        fetch = sorted(written.issue_ids)
        transaction.on_commit(lambda: details_request(fetch))
    _record_repeats(project, repeats.found, name)
    return ImportReport(
        rows=written.rows,
        items_created=written.items,
        annotations_created=written.annotations,
        resolutions_created=written.resolutions,
        repeats=tuple(repeats.found),
    )


def _write_chunk(
    project: Project,
    rows: list[StudyRow],
    columns: list[int],
    volunteers: dict[int, int],
    name: str,
    written: _Written,
) -> None:
    """Write one chunk of rows, one row per issue, and add what it made to `written`; a chunk
    with a row that contradicts what is stored adds its errors instead (nothing after it is
    kept: the caller rolls back)."""
    issue_ids = issues_ensure(row.ref for row in rows)
    issue_of_row = [issue_ids[row.ref] for row in rows]
    if not columns:
        written.issue_ids += issue_of_row
    # only the chunk's own items: files imported one after another (a replication package's
    # dozens) would otherwise read the whole project's labels again for each file
    old_items = dict(
        project.items.filter(issue_id__any_of=issue_of_row).values_list("issue_id", "pk")
    )
    created = _create_items(project, rows, issue_of_row, old_items, name)
    item_of_row = [old_items.get(i) or created.by_issue[i] for i in issue_of_row]
    existing = _existing_labels(list(old_items.values()))
    resolved = dict(
        Resolution.objects.filter(item_id__any_of=old_items.values()).values_list(
            "item_id", "node_id"
        )
    )
    new = _new_rows(rows, item_of_row, columns, volunteers, existing, resolved, name)
    new.resolutions[:0] = created.unanimous
    if new.errors:
        written.errors += new.errors
        return

    insert_rows(Annotation, ("item_id", "volunteer_id", "node_id"), new.annotations)
    old_touched = [item for item in dict.fromkeys(item_of_row) if item not in created.ids]
    moves = _settle(
        project=project,
        item_ids=old_touched,
        labels_of=_labels_by_item(existing, new.annotations, old_touched),
        resolved=resolved.keys() | {item_id for item_id, _, _ in new.resolutions},
        name=name,
    )
    insert_rows(Resolution, ("item_id", "node_id", "method"), [*new.resolutions, *moves.unanimous])
    items_move(project=project, moves=[*created.moves, *moves.moves], action=Action.IMPORT)
    written.rows += len(rows)
    written.items += len(created.ids)
    written.annotations += len(new.annotations)
    written.resolutions += len(new.resolutions) + len(moves.unanimous)


@dataclass(frozen=True)
class _NewRows:
    annotations: list[tuple[int, int, int]]  # item, volunteer, node
    resolutions: list[tuple[int, int, str]]  # item, node, method
    errors: list[RowError]


def _new_rows(
    rows: list[StudyRow],
    item_of_row: list[int],
    columns: list[int],
    volunteers: dict[int, int],
    existing: dict[tuple[int, int], int],
    resolved: dict[int, int],
    name: str,
) -> _NewRows:
    """The labels and resolutions the rows add to their items, and a RowError for each cell
    that contradicts one stored (a re-import of the same file adds nothing and finds none)."""
    new = _NewRows([], [], [])
    for row, item_id in zip(rows, item_of_row, strict=True):
        for column, node_id in zip(columns, row.labels, strict=True):
            if node_id is None:
                continue
            key = (item_id, volunteers[column])
            if key not in existing:
                new.annotations.append((item_id, key[1], node_id))
            elif existing[key] != node_id:
                message = _("differs from the label already stored")
                new.errors.append(RowError(name, row.line, f"Label{column}", message))
        if row.final is None:
            continue
        if item_id not in resolved:
            labels = [n for n in row.labels if n is not None]
            new.resolutions.append((item_id, row.final, resolution_method(labels, row.final)))
        elif resolved[item_id] != row.final:
            message = _("differs from the resolution already stored")
            new.errors.append(RowError(name, row.line, FINAL_COLUMN, message))
    return new


def _record_repeats(project: Project, repeats: list[Repeat], name: str) -> None:
    """One MergedRepeat per skipped row, on the item of the row it repeats, keyed by file name
    (without its folder) and line, so a re-import of the same file records nothing new."""
    if not repeats:
        return
    issue_ids = issues_found(r.ref for r in repeats)  # stored by now
    items = project.items.filter(issue_id__in=issue_ids.values()).values_list("issue_id", "pk")
    item_of_issue = dict(items)
    file = Path(name).name
    MergedRepeat.objects.bulk_create(
        [
            MergedRepeat(
                project=project,
                item_id=item_of_issue[issue_ids[r.ref]],
                file=file,
                line=r.line,
                first_line=r.first_line,
                labels_differ=r.labels_differ,
            )
            for r in repeats
        ],
        update_conflicts=True,
        unique_fields=["project", "file", "line"],
        update_fields=["item", "first_line", "labels_differ"],
    )


@dataclass(frozen=True)
class _Settled:
    """What the file's rows make of some items: their stage moves (one audit row each) and the
    unanimous resolutions to create."""

    moves: list[Move]
    unanimous: list[tuple[int, int, str]]  # item, node, method


@dataclass(frozen=True)
class _Created(_Settled):
    by_issue: dict[int, int]  # item id by issue id
    ids: frozenset[int]


def _create_items(
    project: Project,
    rows: list[StudyRow],
    issue_of_row: list[int],
    old_items: dict[int, int],
    name: str,
) -> _Created:
    """Insert the items the file adds, each already with the count, stage and agreement its row
    gives it by the rule live labeling uses (lifecycle.item_outcome): k unanimous labels without a
    Final_Label are final through a unanimous resolution, as the k-th live label would make
    them. One INSERT at study scale instead of an insert and an update per item."""
    initial = entry_stage(project)  # rows without labels: open when the project does not screen
    outcomes: dict[int, tuple[int, Outcome]] = {}
    for row, issue_id in zip(rows, issue_of_row, strict=True):
        if issue_id in old_items or issue_id in outcomes:
            continue
        labels = [n for n in row.labels if n is not None]
        outcome = item_outcome(
            stage=initial, labels=labels, resolved=row.final is not None, k=project.overlap_k
        )
        outcomes[issue_id] = (len(labels), outcome)
    insert_rows(
        Item,
        ("project_id", "issue_id", "label_count", "stage", "agreement"),
        [(project.pk, issue, n, o.stage, o.agreement) for issue, (n, o) in outcomes.items()],
    )
    by_issue = dict(project.items.filter(issue_id__any_of=outcomes).values_list("issue_id", "pk"))
    return _Created(
        moves=[
            Move(by_issue[issue], initial, o.stage, {"file": name}, inserted=True)
            for issue, (_, o) in outcomes.items()
            if o.stage != initial
        ],
        unanimous=[
            (by_issue[issue], o.unanimous_node, Method.UNANIMOUS)
            for issue, (_, o) in outcomes.items()
            if o.unanimous_node is not None
        ],
        by_issue=by_issue,
        ids=frozenset(by_issue.values()),
    )


def _labels_by_item(
    existing: dict[tuple[int, int], int],
    new: list[tuple[int, int, int]],
    item_ids: list[int],
) -> dict[int, list[int]]:
    wanted = set(item_ids)
    labels: dict[int, list[int]] = defaultdict(list)
    for (item_id, _volunteer), node_id in existing.items():
        if item_id in wanted:
            labels[item_id].append(node_id)
    for item_id, _volunteer, node_id in new:
        if item_id in wanted:
            labels[item_id].append(node_id)
    return labels


def _settle(
    *,
    project: Project,
    item_ids: list[int],
    labels_of: dict[int, list[int]],
    resolved: set[int],
    name: str,
) -> _Settled:
    """Bring items that existed before the file in line with the rows they now have, by
    lifecycle.item_outcome as for new items: count and agreement are written here (only where
    they change, so a re-import writes nothing); the stage moves and unanimous resolutions are
    returned for the caller to write."""
    k = project.overlap_k
    moves: list[Move] = []
    unanimous: list[tuple[int, int, str]] = []
    recounted: list[Item] = []
    for start in range(0, len(item_ids), BATCH):
        rows = Item.objects.filter(pk__in=item_ids[start : start + BATCH]).values_list(
            "pk", "stage", "label_count", "agreement"
        )
        for pk, stage, count, agreement in rows:
            labels = labels_of.get(pk, [])
            outcome = item_outcome(stage=stage, labels=labels, resolved=pk in resolved, k=k)
            if outcome.unanimous_node is not None:
                unanimous.append((pk, outcome.unanimous_node, Method.UNANIMOUS))
            if (count, agreement) != (len(labels), outcome.agreement):
                recounted.append(Item(pk=pk, label_count=len(labels), agreement=outcome.agreement))
            if outcome.stage != stage:
                moves.append(Move(pk, stage, outcome.stage, {"file": name}))
    Item.objects.bulk_update(recounted, ["label_count", "agreement"], batch_size=BATCH)
    return _Settled(moves=moves, unanimous=unanimous)


def _column_volunteers(project: Project, columns: list[int], name: str) -> dict[int, int]:
    """The user id behind each LabelJ column: the member mapped to it, else its placeholder
    account (created once, without a usable password, and made a member for that column)."""
    memberships = project.memberships.filter(column__in=columns).values_list("column", "user_id")
    by_column = {column: user_id for column, user_id in memberships if column is not None}
    for column in columns:
        if column not in by_column:
            by_column[column] = _placeholder(project, column, name).pk
    return by_column


def _placeholder(project: Project, column: int, name: str):
    user, _created = get_user_model().objects.get_or_create(
        username=placeholder_username(project, column),
        defaults={
            "password": make_password(None),  # unusable: nobody signs in as a column
            "first_name": f"Label{column}",
            "last_name": f"({project.slug})",
        },
    )
    if not is_placeholder(user, project, column):  # only staff can give it a password
        message = _("the account %(account)s can sign in; map a member to %(column)s instead") % {
            "account": user.username,
            "column": f"Label{column}",
        }
        raise ImportFailed([RowError(name, 1, f"Label{column}", message)])
    Membership.objects.update_or_create(
        project=project, user=user, defaults={"role": Role.VOLUNTEER, "column": column}
    )
    return user


def _existing_labels(item_ids: list[int]) -> dict[tuple[int, int], int]:
    """(item, volunteer) -> node of the labels the items hold already."""
    rows = Annotation.objects.filter(item_id__any_of=item_ids).values_list(
        "item_id", "volunteer_id", "node_id"
    )
    return {(i, v): n for i, v, n in rows.iterator(chunk_size=BATCH)}
