"""Set-based writes the ORM does not offer: an upsert that only lets newer data win; and the
transaction advisory locks that keep the labeling rule's inputs still under a submit."""

from __future__ import annotations

from collections.abc import Callable, Hashable, Iterable, Sequence
from enum import IntEnum

from django.db import connection, models, transaction
from django.db.models import lookups


def upsert(
    model: type[models.Model],
    rows: Iterable[dict],
    *,
    unique: Sequence[str],
    update: Sequence[str],
    newer: str | None = None,
    same: Sequence[str] = (),
) -> int:
    """INSERT ... ON CONFLICT (unique) DO UPDATE SET update..., on PostgreSQL and SQLite.

    With `newer`, an existing row is only updated when the incoming `newer` column is later (or
    the stored one is empty): an older copy of a page never overwrites fresher data, and an
    unchanged row is not written at all. With `same` (columns that are never empty), an existing
    row is only updated when it already holds the incoming values there: a row that belongs to
    something else is left as it is. Returns the number of rows sent.
    """
    rows = list(rows)
    if not rows:
        return 0
    columns = list(rows[0])
    fields = {name: _concrete_field(model, name) for name in columns}
    quote = connection.ops.quote_name
    table = quote(model._meta.db_table)
    column_sql = ", ".join(quote(_column(fields[c])) for c in columns)
    conflict = ", ".join(quote(_column(_concrete_field(model, c))) for c in unique)
    updated = [quote(_column(_concrete_field(model, c))) for c in update]
    assignments = ", ".join(f"{column} = excluded.{column}" for column in updated)
    conditions = []
    if newer:
        col = quote(_column(_concrete_field(model, newer)))
        conditions.append(f"({table}.{col} IS NULL OR excluded.{col} > {table}.{col})")
    for name in same:
        col = quote(_column(_concrete_field(model, name)))
        conditions.append(f"{table}.{col} = excluded.{col}")
    where = f" WHERE {' AND '.join(conditions)}" if conditions else ""
    prepare = [_preparer(fields[c]) for c in columns]
    placeholders = "(" + ", ".join(["%s"] * len(columns)) + ")"
    # Bound parameters per statement: SQLite may allow only 999, PostgreSQL 65535.
    batch = max(1, (900 if connection.vendor == "sqlite" else 30000) // len(columns))
    with connection.cursor() as cursor:
        for start in range(0, len(rows), batch):
            chunk = rows[start : start + batch]
            params = [
                prep(row[c]) for row in chunk for c, prep in zip(columns, prepare, strict=True)
            ]
            cursor.execute(
                f"INSERT INTO {table} ({column_sql}) VALUES "  # noqa: S608 - names are quoted model metadata
                f"{', '.join([placeholders] * len(chunk))} "
                f"ON CONFLICT ({conflict}) DO UPDATE SET {assignments}{where}",
                params,
            )
    return len(rows)


def _concrete_field(model: type[models.Model], name: str) -> models.Field:
    field = model._meta.get_field(name)
    if not isinstance(field, models.Field):  # a reverse relation or a generic foreign key
        raise TypeError(f"{model.__name__}.{name} is not a column")
    return field


def _column(field: models.Field) -> str:
    if not field.column:
        raise TypeError(f"{field} has no column")
    return field.column


def _preparer(field: models.Field):
    """The driver takes str, int, bool and aware datetimes as they are on PostgreSQL; only what
    needs adapting goes through the field (JSON always, dates on SQLite). Saves ~40% per row."""
    needs_field = isinstance(field, models.JSONField) or (
        connection.vendor != "postgresql"
        and isinstance(field, models.DateField | models.DateTimeField | models.TimeField)
    )
    if needs_field:
        return lambda value: field.get_db_prep_save(value, connection)
    return lambda value: value


def relax_commit_durability() -> None:
    """Inside a transaction on PostgreSQL: commit without waiting for the WAL flush.

    For work that is safe to redo: if the server crashes, the last few such transactions are lost
    whole (never half), together with the checkpoint they advanced, so the job simply redoes them.
    """
    if connection.vendor == "postgresql":
        with connection.cursor() as cursor:
            cursor.execute("SET LOCAL synchronous_commit = off")


def refresh_planner_statistics(model: type[models.Model]) -> None:
    """ANALYZE a table after a bulk load, on PostgreSQL.

    A first harvest grows the issue table from nothing faster than autovacuum notices; with the
    stale estimate of "no rows" the planner filters a whole repository for each page of comments
    instead of looking the issues up by number (~5 ms instead of ~0.3 ms per page at 10k issues).
    """
    if connection.vendor == "postgresql":
        with connection.cursor() as cursor:
            cursor.execute(f"ANALYZE {connection.ops.quote_name(model._meta.db_table)}")


def refresh_planner_statistics_as_it_grows(*written: type[models.Model]) -> list[str]:
    """refresh_planner_statistics of each of the `written` tables that has at least doubled on
    disk since its statistics were taken (pg_class.relpages, which ANALYZE sets), asked after each
    chunk of a file written in one transaction; returns the tables analyzed. Autovacuum does not
    see rows before they are committed, so each chunk's lookups were planned for the tables as
    they were before the file (empty, for a first import) and took longer as the file went on
    (issue 31); ANALYZE in the transaction counts its own rows. Between two, a table at most
    doubles. Counted in the table's pages, not the file's chunks: a job of many files into one
    project (a label import job's 11, a package's dozens) analyzed the tables after each file's
    first chunk (14 rounds of up to 2.6 s for the 10x study in 11 files; now 8), and a small
    file into a big database paid a round for nothing. (Another process's ANALYZE of these
    tables waits for the import to commit.)"""
    if connection.vendor != "postgresql":
        return []
    tables = [model._meta.db_table for model in written]
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT relname FROM pg_class WHERE oid = ANY(%s::regclass[])"
            " AND pg_relation_size(oid) > 0"
            " AND pg_relation_size(oid) / current_setting('block_size')::int >= 2 * relpages",
            [tables],
        )
        grown = {name for (name,) in cursor.fetchall()}
    analyzed = [model for model in written if model._meta.db_table in grown]
    for model in analyzed:
        refresh_planner_statistics(model)
    return [model._meta.db_table for model in analyzed]


def refresh_planner_statistics_on_commit(model: type[models.Model]) -> None:
    """refresh_planner_statistics once the transaction commits, once however often the
    transaction asks (an item import adds its items a chunk at a time in one transaction, issue
    25)."""
    on_commit_once(("analyze", model), lambda: refresh_planner_statistics(model))


def on_commit_once(key: Hashable, callback: Callable[[], object]) -> None:
    """transaction.on_commit(callback), unless this transaction has queued one under `key`
    already: a write made a chunk at a time asks for its after-commit step once per chunk. What
    is queued is read from Django's own list of on-commit callbacks, which a rollback (of the
    transaction, or of the savepoint that queued it) empties."""
    queued = (getattr(entry[1], "once_key", None) for entry in connection.run_on_commit)
    if key in queued:
        return

    def once() -> None:
        callback()

    once.once_key = key  # type: ignore[attr-defined]  # the mark read above
    transaction.on_commit(once)


class Lock(IntEnum):
    """What a transaction advisory lock guards: the first of pg_advisory_xact_lock's two keys."""

    # A project's labeling rule inputs (k, depth, taxonomy, quota, reservations), keyed by the
    # project: every submit holds it shared, a settings change to them exclusive (project_update).
    RULE = 1
    # One volunteer's labels in one project, while the rule counts them against the quota and
    # the submit adds one; keyed by (project, volunteer).
    QUOTA = 2


def xact_lock(lock: Lock, *ids: int, shared: bool = False) -> None:
    """Hold an advisory lock on `lock` for `ids` until the transaction ends, on PostgreSQL.

    Why: a submit reads the rule's inputs (the project's k, its quota and the volunteer's labels)
    in statements of its own, which row locks cannot keep still: a submit waiting for its item's
    row lock would decide with the k it read before a settings change committed, and two submits
    of one volunteer on two items would each count the labels without the other's. A shared lock
    lets submits run side by side and makes a change of the rule wait for the submits in flight
    (and them for it); an exclusive one makes a volunteer's quota count and their new label one
    step. Nothing on SQLite (the demo): it runs one write at a time anyway.

    Two ids (project, volunteer) are folded into the key's 32 bits: within a project every
    volunteer has a key of their own; keys of two projects that fold alike only take turns."""
    if connection.vendor != "postgresql":
        return
    if len(ids) not in (1, 2):
        raise TypeError("xact_lock takes one id or two")
    if not connection.in_atomic_block:  # in autocommit it would end with its own statement
        raise RuntimeError("xact_lock is held until the transaction ends: call it in one")
    key = ids[0] if len(ids) == 1 else ids[0] * 0x9E3779B1 + ids[1]
    key &= 0xFFFFFFFF  # PostgreSQL's integer: -2**31 .. 2**31 - 1
    key -= (key >> 31) << 32
    function = "pg_advisory_xact_lock_shared" if shared else "pg_advisory_xact_lock"
    with connection.cursor() as cursor:
        cursor.execute(f"SELECT {function}(%s, %s)", [int(lock), key])


class AnyOf(models.Lookup):
    """`field__any_of=values`, for tens of thousands of values (an import's chunk of ids or
    URLs): on PostgreSQL `field = ANY(array)`, the values sent as one array literal, where
    Django's `__in` prepares and sends each value as a parameter of its own (a tenth of a
    study-size import's Python time, #31); elsewhere `field IN (...)`. Registered on every field
    by concord.apps.

    Not `IN (SELECT unnest(array))`, which this used to be: PostgreSQL plans that as a join,
    by the table's statistics, and when they are stale (taken before this transaction's own
    rows, or counting rows since rolled back) it picks a nested loop that compares every row
    with every value: 15 to 23 s for one 15,000-id chunk. `= ANY` of a constant array is
    hashed, whatever the statistics: 8 ms for the same chunk.

    Only when the array has the column's own type: psycopg2 sends a list of small ints as an
    integer[], and `bigint = ANY(integer[])` (every id and foreign key here) is not hashed but
    read value by value for each row: 1.4 s instead of 48 ms for 15,000 ids against 20,000
    rows, 4.5 s for one chunk of a label import in the suite. Hence the cast to the column's
    type (text for text)."""

    lookup_name = "any_of"
    prepare_rhs = False

    def get_prep_lookup(self) -> list:
        return list(self.rhs)

    def as_sql(self, compiler, connection):  # returns what Django's In returns
        """Elsewhere (the SQLite demo), Django's own `__in`."""
        return lookups.In(self.lhs, self.rhs).as_sql(compiler, connection)

    def as_postgresql(self, compiler, connection) -> tuple[str, tuple]:
        lhs, params = self.process_lhs(compiler, connection)
        field = self.lhs.output_field
        # text, not varchar(n): a cast to varchar(n) cuts a longer value to n characters
        text = isinstance(field, models.CharField | models.TextField)
        element = "text" if text else field.cast_db_type(connection)
        return f"{lhs} = ANY(%s::{element}[])", (*params, self.rhs)
