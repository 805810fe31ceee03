"""A project archive in (annotation.archive): checked whole first (manifest, version, every file's
checksum and row count), then restored in one transaction, so a clash or a bad row found half way
leaves nothing behind. Every id is mapped to the row made here, or to the row this instance
already holds by the same natural identity (a user by username, an issue by host/owner/repo/number,
the taxonomy by name and version, a node by code); a row this instance holds that must not be
shared (a project's slug, a node another project added) refuses the restore, naming what and
where."""

from __future__ import annotations

import functools
import hashlib
import json
import zipfile
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from django.contrib.auth.hashers import make_password
from django.core.exceptions import ValidationError
from django.db import IntegrityError, connection, models, transaction
from django.db.models import Q
from django.utils.translation import gettext as _

from annotation.archive import FORMAT, MANIFEST, VERSION
from annotation.archive.tables import TABLE_NAMES, TABLES, Table, User
from annotation.figures.tallies import figures_rebuilt_after_import
from annotation.models import Item, Project
from concord.db import refresh_planner_statistics_on_commit
from concord.errors import ConcordError, Conflict, RowError, Where
from ingest.models import Issue

BATCH = 2000
# The tables other rows refer to: only their archived ids are mapped to the rows made here. The
# labels and audit rows, which nothing refers to, are most of a project's rows (#31: their ids,
# 2.7 M labels at 10x, took a restore past 700 MB).
REFERENCED = frozenset(target for table in TABLES for target in table.refs.values())


class ArchiveRefused(ConcordError):
    """The file is no archive this Concord reads, or is damaged; nothing was written."""


class ArchiveClash(Conflict):
    """The archive's rows clash with what this instance holds; nothing was written."""


@dataclass
class RestoreReport:
    project: Project
    made: dict[str, int] = field(default_factory=dict)  # table -> rows made here
    found: dict[str, int] = field(default_factory=dict)  # table -> rows this instance held


def archive_check(path: Path) -> dict:
    """The archive's manifest, once every file it lists is there with its checksum and row
    count; ArchiveRefused says what is wrong."""
    name = path.name
    try:
        with zipfile.ZipFile(path) as archive:
            manifest = _manifest(archive, name)
            for entry in manifest["tables"]:
                digest, rows = hashlib.sha256(), 0
                with archive.open(entry["file"]) as data:
                    for line in data:
                        digest.update(line)
                        rows += 1
                if digest.hexdigest() != entry["sha256"] or rows != entry["rows"]:
                    raise ArchiveRefused(
                        _("%(file)s is damaged: its checksum or row count is not the manifest's.")
                        % {"file": entry["file"]},
                        Where(name),
                    )
    except FileNotFoundError as exc:
        raise ArchiveRefused(_("No such file: %(path)s.") % {"path": path}) from exc
    except (zipfile.BadZipFile, EOFError, zipfile.LargeZipFile) as exc:
        raise ArchiveRefused(
            _("%(name)s is not a Concord project archive, or it is damaged (%(why)s).")
            % {"name": name, "why": exc},
            Where(name),
        ) from exc
    return manifest


def _manifest(archive: zipfile.ZipFile, name: str) -> dict:
    foreign = _("%(name)s is not a Concord project archive: it has no %(manifest)s.") % {
        "name": name,
        "manifest": MANIFEST,
    }
    try:
        manifest = json.loads(archive.read(MANIFEST))
    except KeyError as exc:
        raise ArchiveRefused(foreign, Where(name)) from exc
    except ValueError as exc:
        raise ArchiveRefused(
            _("%(manifest)s is not JSON: %(why)s") % {"manifest": MANIFEST, "why": exc},
            Where(f"{name}/{MANIFEST}"),
        ) from exc
    if not isinstance(manifest, dict) or manifest.get("format") != FORMAT:
        raise ArchiveRefused(foreign, Where(name))
    version = manifest.get("version")
    if not isinstance(version, int) or not 1 <= version <= VERSION:
        raise ArchiveRefused(
            _(
                "%(name)s is an archive of version %(version)s; this Concord reads versions 1 "
                "to %(newest)d: restore it with a newer Concord."
            )
            % {"name": name, "version": version, "newest": VERSION},
            Where(f"{name}/{MANIFEST}"),
        )
    listed = manifest.get("tables")
    files = set(archive.namelist())
    if not isinstance(listed, list):
        raise ArchiveRefused(_("The manifest lists no tables."), Where(f"{name}/{MANIFEST}"))
    for entry in listed:
        if not isinstance(entry, dict) or entry.get("name") not in TABLE_NAMES:
            raise ArchiveRefused(
                _("The manifest names a table this Concord does not know: %(entry)s")
                % {"entry": str(entry)[:100]},
                Where(f"{name}/{MANIFEST}"),
            )
        if entry.get("file") not in files:
            raise ArchiveRefused(
                _("%(file)s, listed in the manifest, is missing.") % {"file": entry.get("file")},
                Where(name),
            )
    return manifest


def archive_restore(path: Path, *, slug: str | None = None) -> RestoreReport:
    """Restore the archive at `path` as a new project (named `slug` if given, else the archived
    project's slug): all of it, or nothing and an ArchiveRefused / ArchiveClash."""
    if slug is not None:
        try:
            Project._meta.get_field("slug").run_validators(slug)
        except ValidationError as exc:
            raise ArchiveRefused(f"--slug {slug!r}: {' '.join(exc.messages)}") from exc
    manifest = archive_check(path)
    report = _restored(path, manifest, slug=slug)
    # As the import jobs do: not in the first request. After _restored has returned, so that its
    # id maps (an entry per archived row: millions at 10x) are freed before the rebuild's arrays
    # are made; held through it, the two peaks added up (10x: 423 MB, now 325).
    figures_rebuilt_after_import(report.project)
    return report


def _restored(path: Path, manifest: dict, *, slug: str | None) -> RestoreReport:
    listed = {entry["name"]: entry["file"] for entry in manifest["tables"]}
    restorer = _Restorer(slug=slug)
    with zipfile.ZipFile(path) as archive, transaction.atomic():
        for table in TABLES:
            if table.name in listed:
                with archive.open(listed[table.name]) as data:
                    restorer.restore(table, listed[table.name], data)
        project = Project.objects.get(pk=restorer.project_id())
        for model in (Issue, Item):
            refresh_planner_statistics_on_commit(model)
    return RestoreReport(project=project, made=restorer.made, found=restorer.found)


class _Restorer:
    def __init__(self, *, slug: str | None) -> None:
        self.slug = slug
        self.ids: dict[str, dict[int, int]] = {}  # table -> archived id -> id here
        self.made_ids: dict[str, set[int]] = {}  # table -> archived ids of rows made here
        self.made: dict[str, int] = {}
        self.found: dict[str, int] = {}

    def project_id(self) -> int:
        ids = self.ids.get("project", {})
        if len(ids) != 1:
            raise ArchiveRefused(_("The archive holds no project."))
        return next(iter(ids.values()))

    def restore(self, table: Table, file: str, data) -> None:
        self.ids[table.name], self.made_ids[table.name] = {}, set()
        self.made[table.name] = self.found[table.name] = 0
        fields = _fields(table)
        pending: list[tuple[int, int, dict]] = []  # line, archived id, the row's values
        for line, raw in enumerate(data, start=1):
            try:
                record = json.loads(raw)
                old_id = record.pop("id")
            except (ValueError, KeyError, AttributeError, TypeError) as exc:
                raise RowError(file, line, None, _("Not a row of the archive.")) from exc
            unknown = set(record) - set(fields)
            if unknown:
                raise RowError(
                    file,
                    line,
                    sorted(unknown)[0],
                    _("A column this Concord does not know (an archive of a newer Concord?)."),
                )
            parent = table.with_made_parent
            if parent and record.get(parent) not in self.made_ids.get(table.refs[parent], ()):
                continue  # the row belongs to one this instance already held: its copy stands
            if any(self._unmapped(table, c, record.get(c)) for c in table.refs):
                self._flush(table, file, pending)  # it refers to a row of this batch
                pending = []
            pending.append((line, old_id, self._values(table, fields, record, Where(file, line))))
            if len(pending) >= BATCH:
                self._flush(table, file, pending)
                pending = []
        self._flush(table, file, pending)

    def _unmapped(self, table: Table, column: str, value) -> bool:
        """Whether `value` refers to a row of this table not made yet (a node's parent)."""
        own = table.refs[column] == table.name
        return own and value is not None and value not in self.ids[table.name]

    def _values(
        self, table: Table, fields: dict[str, models.Field], record: dict, where: Where
    ) -> dict:
        """The row's values as Python holds them: ids mapped to this instance's, times and
        bytes read."""
        values = {}
        for column, value in record.items():
            target = table.refs.get(column)
            if target is not None and value is not None:
                mapped = self.ids.get(target, {}).get(value)
                if mapped is None:
                    raise RowError(
                        where.path,
                        where.line or 0,
                        column,
                        _("Refers to row %(id)s of %(table)s, which the archive does not hold.")
                        % {"id": value, "table": target},
                    )
                value = mapped
            elif value is not None and isinstance(fields[column], READ):
                try:
                    value = fields[column].to_python(value)
                except ValidationError as exc:
                    message = "; ".join(exc.messages)
                    raise RowError(where.path, where.line or 0, column, message) from exc
            values[column] = value
        if table.name == "project" and self.slug:
            values["slug"] = self.slug
        return values

    def _flush(self, table: Table, file: str, pending: list[tuple[int, int, dict]]) -> None:
        if not pending:
            return
        held = self._held(table, [row for _line, _old, row in pending])
        new: list[tuple[int, dict]] = []
        for line, old_id, row in pending:
            key = _key(row, table.natural)
            if table.natural and key in held:
                existing = held[key]
                self._agree(table, file, line, row, existing)
                self._remember(table, old_id, existing["pk"], made=False)
                self.found[table.name] += 1
            else:
                self._clash(table, file, line, row)
                new.append((old_id, row))
        try:
            made = _insert(table, [row for _old, row in new])
        except IntegrityError as exc:
            raise ArchiveClash(
                _("The rows of %(file)s clash with what this Concord holds: %(why)s")
                % {"file": file, "why": str(exc).splitlines()[0]},
                Where(file),
            ) from exc
        for (old_id, _row), pk in zip(new, made, strict=True):
            self._remember(table, old_id, pk, made=True)
        self.made[table.name] += len(new)

    def _remember(self, table: Table, old_id: int, pk: int, *, made: bool) -> None:
        """Map an archived id to its row here, if any row may refer to it (REFERENCED)."""
        if table.name not in REFERENCED:
            return
        self.ids[table.name][old_id] = pk
        if made:
            self.made_ids[table.name].add(old_id)

    def _held(self, table: Table, rows: list[dict]) -> dict[tuple, dict]:
        """The rows this instance holds with the natural identity of any of `rows`."""
        if not table.natural:
            return {}
        last = table.natural[-1]
        values = {row.get(last) for row in rows}
        held = table.model._default_manager.filter(**{f"{last}__in": values})
        columns = {*table.natural, *table.agree}
        return {_key(row, table.natural): row for row in held.values("pk", *columns)}

    def _agree(self, table: Table, file: str, line: int, row: dict, existing: dict) -> None:
        for column in table.agree:
            if row.get(column) != existing[column]:
                raise ArchiveClash(
                    _(
                        "This Concord has %(model)s %(what)s with another %(column)s "
                        "(its id %(id)s)."
                    )
                    % {
                        "what": " ".join(
                            str(row.get(c)) for c in table.natural if c not in table.refs
                        ),
                        "column": column,
                        "model": table.model._meta.verbose_name,
                        "id": existing["pk"],
                    },
                    Where(file, line, column),
                )

    def _clash(self, table: Table, file: str, line: int, row: dict) -> None:
        for column in table.unique:
            value = row.get(column)
            if table.model._default_manager.filter(Q(**{column: value})).exists():
                raise ArchiveClash(
                    _(
                        "This Concord already has a %(model)s with %(column)s %(value)s; nothing "
                        "was restored (give the project another slug with --slug)."
                    )
                    % {"model": table.model._meta.verbose_name, "column": column, "value": value},
                    Where(file, line, column),
                )


# Columns whose JSON is read into Python before use (ISO times, base64 bytes); the rest are as
# JSON has them.
READ = (models.DateTimeField, models.DateField, models.BinaryField)


def _fields(table: Table) -> dict[str, models.Field]:
    return {column: table.field_of(column) for column in table.columns()}


def _insert(table: Table, rows: list[dict]) -> list[int]:
    """INSERT `rows` (a batch of at most BATCH) in one statement per parameter limit, the
    columns they lack taking their defaults; returns their new ids in order. Plain SQL, not
    bulk_create: the archived times are kept (no auto_now), and a row costs no model instance
    (instances and bulk_create took half the restore's time)."""
    if not rows:
        return []
    model = table.model
    present = set().union(*rows)
    columns, fixed = [], {}  # fixed: a column every row takes the default of
    for f in model._meta.concrete_fields:
        if f.primary_key:
            continue
        if f.attname in present:
            columns.append(f)
        elif f.db_default is models.NOT_PROVIDED:  # a database default applies if omitted
            columns.append(f)
            fixed[f.attname] = f.get_default()
    if model is User:
        password = next(f for f in columns if f.attname == "password")
        fixed[password.attname] = make_password(None)  # no password until one is given
    quote = connection.ops.quote_name
    limit = connection.features.max_query_params or 65535
    per_statement = max(1, min(len(rows), limit // max(len(columns), 1)))
    head = (
        f"INSERT INTO {quote(model._meta.db_table)} ({', '.join(quote(f.column) for f in columns)})"
    )
    one = f"({', '.join(['%s'] * len(columns))})"
    returning = f" RETURNING {quote(model._meta.pk.column)}"
    converters = [(f.attname, _converter(f)) for f in columns]
    made: list[int] = []
    with connection.cursor() as cursor:
        for start in range(0, len(rows), per_statement):
            chunk = rows[start : start + per_statement]
            params = []
            for row in chunk:
                for name, convert in converters:
                    value = fixed[name] if name in fixed else row.get(name)
                    params.append(value if convert is None or value is None else convert(value))
            values = ", ".join([one] * len(chunk))
            cursor.execute(f"{head} VALUES {values}{returning}", params)
            # ids ascend in the order the rows were inserted (one sequence, one statement)
            made += sorted(pk for (pk,) in cursor.fetchall())
    return made


def _converter(f: models.Field) -> Callable | None:
    """What makes a column's Python value a parameter of this database, if anything does."""
    if isinstance(f, models.DateTimeField):
        return connection.ops.adapt_datetimefield_value
    if isinstance(f, models.DateField):
        return connection.ops.adapt_datefield_value
    if isinstance(f, models.JSONField | models.BinaryField):
        return functools.partial(f.get_db_prep_save, connection=connection)
    return None


def _key(row: dict, natural: tuple[str, ...]) -> tuple:
    return tuple(row.get(column) for column in natural)
