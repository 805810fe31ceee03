"""A project archive out (annotation.archive): each table's rows streamed, a chunk at a time, into
its JSON Lines file inside the zip, hashed as they go; the manifest last. The zip is written
under a temporary name beside the target and renamed once complete, so a failure leaves no file
that looks whole. On PostgreSQL every table is read from one snapshot (a repeatable-read
transaction), so labels given meanwhile are in the archive whole or not at all."""

from __future__ import annotations

import base64
import hashlib
import json
import os
import tempfile
import zipfile
from collections.abc import Callable
from contextlib import contextmanager
from datetime import date, datetime
from pathlib import Path

from django.db import connection, transaction
from django.utils import timezone

from annotation.archive import FORMAT, MANIFEST, VERSION
from annotation.archive.tables import TABLES, Table
from annotation.models import Project

CHUNK = 2000


def archive_write(
    project: Project,
    path: Path,
    *,
    progress: Callable[[int], object] | None = None,
    every: int = 5000,
) -> int:
    """Write `project`'s archive to `path` (a zip); returns the rows written."""
    path.parent.mkdir(parents=True, exist_ok=True)
    handle, part = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".part", dir=path.parent)
    os.close(handle)
    try:
        with _snapshot(), zipfile.ZipFile(part, "w", zipfile.ZIP_DEFLATED) as archive:
            written, entries = 0, []
            for table in TABLES:
                entry, written = _write_table(archive, table, project, written, progress, every)
                entries.append(entry)
            manifest = {
                "format": FORMAT,
                "version": VERSION,
                "project": project.slug,
                "written_at": timezone.now().isoformat(),
                "tables": entries,
            }
            archive.writestr(MANIFEST, json.dumps(manifest, indent=1) + "\n")
        Path(part).replace(path)
    finally:
        Path(part).unlink(missing_ok=True)
    return written


def archive_rows(project: Project) -> int:
    """How many rows the archive of `project` holds (a count per table; a job's progress)."""
    return sum(table.owned(project).order_by().count() for table in TABLES)


def _write_table(
    archive: zipfile.ZipFile,
    table: Table,
    project: Project,
    written: int,
    progress: Callable[[int], object] | None,
    every: int,
) -> tuple[dict, int]:
    columns = table.columns()
    rows = table.owned(project).order_by(*table.order).values_list("pk", *columns)
    digest, count = hashlib.sha256(), 0
    name = f"{table.name}.jsonl"
    with archive.open(name, "w", force_zip64=True) as out:
        for pk, *values in rows.iterator(chunk_size=CHUNK):
            record = {"id": pk, **dict(zip(columns, values, strict=True))}
            line = json.dumps(record, ensure_ascii=False, default=_plain) + "\n"
            data = line.encode("utf-8")
            out.write(data)
            digest.update(data)
            count += 1
            written += 1
            if progress is not None and written % every == 0:
                progress(written)
    return {"name": table.name, "file": name, "rows": count, "sha256": digest.hexdigest()}, written


def _plain(value: object) -> object:
    """JSON for what json does not write: times in ISO 8601, bytes in base64."""
    if isinstance(value, datetime | date):
        return value.isoformat()
    if isinstance(value, bytes | memoryview):
        return base64.b64encode(bytes(value)).decode("ascii")
    raise TypeError(f"{type(value).__name__} is not archived")


@contextmanager
def _snapshot():
    """Every table read as of one moment: on PostgreSQL a read-only repeatable-read transaction
    (when not already inside one, as a test is); elsewhere one transaction."""
    with transaction.atomic():
        if connection.vendor == "postgresql" and not _nested():
            with connection.cursor() as cursor:
                cursor.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ READ ONLY")
        yield


def _nested() -> bool:
    # atomic() above is the outermost block unless a savepoint was taken for it
    return len(connection.savepoint_ids) > 0
