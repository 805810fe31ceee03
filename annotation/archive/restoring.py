"""A project archive in (annotation.archive): checked whole first (manifest, version, every file's
checksum and row count), then restored in one transaction, so a clash or a bad row found half way
leaves nothing behind. Every id is mapped to the row made here, or to the row this instance
already holds by the same natural identity (a user by username, an issue by host/owner/repo/number,
the taxonomy by name and version, a node by code); a row this instance holds that must not be
shared (a project's slug, a node another project added) refuses the restore, naming what and
where."""

from __future__ import annotations

import hashlib
import json
import zipfile
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

from django.core.exceptions import ValidationError
from django.db import IntegrityError, models, transaction
from django.db.models import Q
from django.utils.translation import gettext as _

from annotation.archive import FORMAT, MANIFEST, VERSION
from annotation.archive.tables import TABLE_NAMES, TABLES, Table
from annotation.models import Item, Project
from concord.db import refresh_planner_statistics_on_commit
from concord.errors import ConcordError, Conflict, RowError, Where
from ingest.models import Issue

BATCH = 2000


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
    manifest = archive_check(path)
    listed = {entry["name"]: entry["file"] for entry in manifest["tables"]}
    restorer = _Restorer(slug=slug)
    with zipfile.ZipFile(path) as archive, transaction.atomic(), _times_as_archived():
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
        columns = set(table.columns())
        pending: list[tuple[int, int, models.Model]] = []  # line, archived id, unsaved row
        for line, raw in enumerate(data, start=1):
            where = Where(file, line)
            try:
                record = json.loads(raw)
                old_id = record.pop("id")
            except (ValueError, KeyError, AttributeError, TypeError) as exc:
                raise RowError(file, line, None, _("Not a row of the archive.")) from exc
            unknown = set(record) - columns
            if unknown:
                raise RowError(
                    file,
                    line,
                    sorted(unknown)[0],
                    _("A column this Concord does not know (an archive of a newer Concord?)."),
                )
            if table.with_made_parent and record[table.with_made_parent] not in self.made_ids.get(
                table.refs[table.with_made_parent], set()
            ):
                continue  # the row belongs to one this instance already held: its copy stands
            if any(self._unmapped(table, c, record.get(c)) for c in table.refs if c in record):
                self._flush(table, file, pending)  # it refers to a row of this batch
                pending = []
            values = self._values(table, record, where)
            pending.append((line, old_id, table.model(**values)))
            if len(pending) >= BATCH:
                self._flush(table, file, pending)
                pending = []
        self._flush(table, file, pending)

    def _unmapped(self, table: Table, column: str, value) -> bool:
        """Whether `value` refers to a row of this table not made yet (a node's parent)."""
        own = table.refs[column] == table.name
        return own and value is not None and value not in self.ids[table.name]

    def _values(self, table: Table, record: dict, where: Where) -> dict:
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
            elif value is not None:
                try:
                    value = _python(table.field_of(column), value)
                except ValidationError as exc:
                    raise RowError(
                        where.path, where.line or 0, column, "; ".join(exc.messages)
                    ) from exc
            values[column] = value
        if table.name == "project" and self.slug:
            values["slug"] = self.slug
        return values

    def _flush(self, table: Table, file: str, pending: list[tuple[int, int, models.Model]]) -> None:
        if not pending:
            return
        held = self._held(table, [row for _line, _old, row in pending])
        new = []
        for line, old_id, row in pending:
            key = _key(row, table.natural)
            if table.natural and key in held:
                existing = held[key]
                self._agree(table, file, line, row, existing)
                self.ids[table.name][old_id] = existing.pk
                self.found[table.name] += 1
            else:
                self._clash(table, file, line, row)
                new.append((old_id, row))
        for _old, row in new:
            if table.name == "users":
                row.set_unusable_password()  # type: ignore[attr-defined]
        try:
            made = table.model._default_manager.bulk_create([row for _old, row in new])
        except IntegrityError as exc:
            raise ArchiveClash(
                _("The rows of %(file)s clash with what this Concord holds: %(why)s")
                % {"file": file, "why": str(exc).splitlines()[0]},
                Where(file),
            ) from exc
        for (old_id, _row), row in zip(new, made, strict=True):
            self.ids[table.name][old_id] = row.pk
            self.made_ids[table.name].add(old_id)
        self.made[table.name] += len(made)

    def _held(self, table: Table, rows: list[models.Model]) -> dict[tuple, models.Model]:
        """The rows this instance holds with the natural identity of any of `rows`."""
        if not table.natural:
            return {}
        last = table.natural[-1]
        values = {getattr(row, last) for row in rows}
        held = table.model._default_manager.filter(**{f"{last}__in": values})
        return {_key(row, table.natural): row for row in held}

    def _agree(self, table: Table, file: str, line: int, row, existing) -> None:
        for column in table.agree:
            if getattr(row, column) != getattr(existing, column):
                raise ArchiveClash(
                    _(
                        "%(what)s is here already, with another %(column)s: this Concord's "
                        "%(model)s %(id)s."
                    )
                    % {
                        "what": _key(row, table.natural),
                        "column": column,
                        "model": table.model._meta.verbose_name,
                        "id": existing.pk,
                    },
                    Where(file, line, column),
                )

    def _clash(self, table: Table, file: str, line: int, row) -> None:
        for column in table.unique:
            value = getattr(row, column)
            if table.model._default_manager.filter(Q(**{column: value})).exists():
                raise ArchiveClash(
                    _(
                        "This Concord already has a %(model)s with %(column)s %(value)s; nothing "
                        "was restored (give the project another slug with --slug)."
                    )
                    % {"model": table.model._meta.verbose_name, "column": column, "value": value},
                    Where(file, line, column),
                )


def _key(row: models.Model, natural: tuple[str, ...]) -> tuple:
    return tuple(getattr(row, column) for column in natural)


def _python(model_field: models.Field, value):
    if isinstance(model_field, models.DateTimeField | models.DateField | models.BinaryField):
        return model_field.to_python(value)
    return value


@contextmanager
def _times_as_archived() -> Iterator[None]:
    """Keep the archived creation and change times: auto_now(_add) fields would stamp now."""
    stamped = [
        f
        for table in TABLES
        for f in table.model._meta.concrete_fields
        if getattr(f, "auto_now", False) or getattr(f, "auto_now_add", False)
    ]
    saved = [(f, f.auto_now, f.auto_now_add) for f in stamped]  # type: ignore[attr-defined]
    for f in stamped:
        f.auto_now = f.auto_now_add = False  # type: ignore[attr-defined]
    try:
        yield
    finally:
        for f, now, now_add in saved:
            f.auto_now, f.auto_now_add = now, now_add  # type: ignore[attr-defined]
