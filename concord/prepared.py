"""Queries compiled once and run many times, for the statements every labeling request runs.

Django builds and compiles a QuerySet anew on every call: 0.2 to 1 ms of CPU each, more than
PostgreSQL takes to run the statement, and a labeling request runs a dozen (issue #16). A
PreparedQuery builds its QuerySet once from stand-in values, compiles it, remembers where each
stand-in landed among the statement's parameters, and from then on binds each call's values into
the same SQL and turns the rows into what the QuerySet would have returned (model instances with
their select_related objects and annotations, value tuples, or flat values), through the
compiler's own converters.

Only values may vary between calls, never the statement's shape: a value of another type than the
first call's (None where an int was, say, which Django compiles to IS NULL) makes that call build
its QuerySet the ordinary way. So does every call on a database other than PostgreSQL, where
Django adapts values while compiling (SQLite turns datetimes into text), so stand-ins could not be
found again; the embedded SQLite default is not where speed matters.

On PostgreSQL each statement is also PREPAREd once per connection (ServerStatement), so the server
does not parse it again either. `saved` does for the label's writes what PreparedQuery does for
its reads: Model.save with the INSERT or UPDATE written once per model and set of fields.
"""

from __future__ import annotations

import functools
import itertools
import re
import threading
from collections.abc import Callable, Hashable, Iterable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from django.conf import settings
from django.db import DatabaseError, connections, transaction
from django.db.models import Field, Model, QuerySet
from django.db.models.query import (  # type: ignore[attr-defined]  # ModelIterable's helper
    FlatValuesListIterable,
    ModelIterable,
    ValuesListIterable,
    get_related_populators,
)

# Stand-ins lie inside every field's range (PositiveSmallIntegerField stops at 32,767): Django
# folds a comparison with a value out of range into a constant, which would bake it into the SQL.
_INT_BASE = 32_109
_DATETIME_BASE = datetime(1901, 2, 3, 4, 5, 6, 0, tzinfo=UTC)
_STAND_IN_MARK = "\x1fstand-in "


def _stand_in(name: str, value: object, n: int) -> object:
    if isinstance(value, bool) or not isinstance(value, int | str | datetime):
        raise TypeError(
            f"{name}: a prepared query binds ints, strings and datetimes; make a "
            f"{type(value).__name__} part of the query's key instead"
        )
    if isinstance(value, datetime):
        return _DATETIME_BASE.replace(microsecond=n + 1)
    if isinstance(value, str):
        return f"{_STAND_IN_MARK}{n} {name}\x1f"
    return _INT_BASE + n


@dataclass(frozen=True)
class _Compiled:
    sql: str
    slots: tuple[tuple[bool, object], ...]  # (True, name of the value) or (False, constant)
    types: dict[str, type]
    rows: Callable[[list], list]  # fetched rows -> what the QuerySet yields
    server: ServerStatement | None  # the statement prepared on each connection, if it can be


class PreparedQuery:
    """`build(**values)`: the QuerySet to run, exactly as it should run (slice included);
    `run(**values)` returns what iterating it would, compiling it only on the first call."""

    def __init__(
        self, build: Callable[..., QuerySet], *, using: str = "default", strict: bool = True
    ) -> None:
        self.build = build
        self.using = using
        self.strict = strict  # every value must reach the statement's parameters
        self._compiled: _Compiled | None = None
        self._lock = threading.Lock()

    def run(self, **values: object) -> list:
        compiled = self._compiled_for(values)
        if compiled is None:
            return list(self.build(**values))
        params = _bound(compiled.slots, values)
        with connections[self.using].cursor() as cursor:
            _execute(cursor, compiled.sql, params, compiled.server)
            fetched = cursor.fetchall()
        return compiled.rows(fetched)

    def statement(self, **values: object) -> tuple[str, list]:
        """The SQL and parameters `run` would send (for EXPLAIN)."""
        compiled = self._compiled_for(values)
        if compiled is None:
            sql, params = self.build(**values).query.sql_with_params()
            return sql, list(params)
        return compiled.sql, _bound(compiled.slots, values)

    def _compiled_for(self, values: dict[str, object]) -> _Compiled | None:
        """The compiled statement, or None where the QuerySet must be built the ordinary way."""
        if connections[self.using].vendor != "postgresql":
            return None
        compiled = self._compiled or self._compile(values)
        if compiled.types != {name: type(value) for name, value in values.items()}:
            return None  # another shape than the compiled one
        return compiled

    def first(self, **values: object) -> Any:
        rows = self.run(**values)
        return rows[0] if rows else None

    def _compile(self, values: dict[str, object]) -> _Compiled:
        with self._lock:
            if self._compiled is None:
                self._compiled = _compile(self.build, values, self.using, self.strict)
            return self._compiled


def _compile(
    build: Callable[..., QuerySet], values: dict[str, object], using: str, strict: bool
) -> _Compiled:
    stand_ins = {name: _stand_in(name, value, n) for n, (name, value) in enumerate(values.items())}
    queryset = build(**stand_ins)
    if queryset._known_related_objects:  # type: ignore[attr-defined]  # a related manager's queryset: build it from the model
        raise TypeError("a prepared query cannot come from a related manager")
    compiler = queryset.query.get_compiler(using=using)
    connection = connections[using]
    if queryset.query.select_for_update and connection.get_autocommit():
        with transaction.atomic(using=using):  # Django compiles FOR UPDATE only in a transaction
            sql, params = compiler.as_sql()
    else:
        sql, params = compiler.as_sql()
    names = {stand_in: name for name, stand_in in stand_ins.items()}
    slots = tuple((True, names[p]) if _hashable(p) and p in names else (False, p) for p in params)
    if any(isinstance(p, str) and _STAND_IN_MARK in p for named, p in slots if not named):
        # a lookup transformed the value (icontains wraps it in %): it cannot be bound again
        raise TypeError(f"prepared query: a value was transformed while compiling: {params}")
    unused = set(values) - {slot for named, slot in slots if named}
    if strict and unused:  # used where Django does not bind it (a slice's LIMIT, say)
        raise TypeError(f"prepared query: {sorted(unused)} not among the statement's parameters")
    return _Compiled(
        sql=sql,
        slots=slots,
        types={name: type(value) for name, value in values.items()},
        rows=_row_reader(queryset, compiler, using),
        server=ServerStatement.of(sql, slots, _bound(slots, values)),
    )


# PostgreSQL types of the parameters, by the Python type of a call's values and the constants.
_SQL_TYPES = {
    int: "bigint",
    str: "text",
    datetime: "timestamp with time zone",
    bool: "boolean",
    float: "double precision",
}


def _sql_type(value: object) -> str | None:
    """The PostgreSQL type of a parameter, by its class or the nearest base the table knows: a
    Stage or other TextChoices member is a str (bool comes before int in bool's own MRO)."""
    return next((_SQL_TYPES[t] for t in type(value).__mro__ if t in _SQL_TYPES), None)


_BIGINT_MIN, _BIGINT_MAX = -(2**63), 2**63 - 1
_PLACEHOLDER = re.compile(r"%[s%]")
_server_names = itertools.count(1)


class ServerStatement:
    """A statement PostgreSQL keeps parsed (PREPARE ... / EXECUTE ...) on each connection that
    has run it once: its parse and analysis, and for most its plan, are not redone by every
    request (issue #16). A statement whose parameter types cannot be named, or that PostgreSQL
    refuses to prepare, runs as plain SQL. Prepared statements live as long as the connection
    (CONN_MAX_AGE); they do not go through a pooler that hands out connections per transaction,
    which this setup has none of.

    Only the call's values are parameters ($1, $2 ...); the constants the QuerySet itself holds
    are written into the prepared text as literals. The planner then sees them, as it does in
    plain SQL: a stage list matches the predicate of a partial index (the claim's queue), so the
    plan PostgreSQL keeps for every call can use that index, rather than being planned anew each
    time because a plan for unknown stages would scan the project."""

    def __init__(self, sql: str, slots: Sequence[tuple[bool, object]], types: list[str]) -> None:
        self.name = f"concord_{next(_server_names)}"
        self.named = tuple(named for named, _slot in slots)
        self._constants = tuple(slot for named, slot in slots if not named)
        numbers = itertools.count(1)
        named_slots = iter(self.named)

        def placeholder(match: re.Match) -> str:
            if match[0] == "%%":
                return "%%"
            return f"${next(numbers)}" if next(named_slots) else "%s"

        self._template = _PLACEHOLDER.sub(placeholder, sql)  # constants left as %s
        declared = f" ({', '.join(types)})" if types else ""
        count = sum(self.named)
        arguments = f" ({', '.join(['%s'] * count)})" if count else ""
        self._head = f"PREPARE {self.name}{declared} AS "
        self.execute = f"EXECUTE {self.name}{arguments}"
        self.refused = False

    @classmethod
    def untyped(cls, sql: str) -> ServerStatement:
        """A statement whose parameters PostgreSQL types from where they stand (a column's
        value in INSERT ... VALUES or UPDATE ... SET, a comparison with a column): for writes
        whose values may be NULL, which has no type of its own."""
        slots = [(True, n) for n in range(len(_PLACEHOLDER.findall(sql.replace("%%", ""))))]
        return cls(sql, slots, [])

    @classmethod
    def of(
        cls, sql: str, slots: Sequence[tuple[bool, object]], params: list
    ) -> ServerStatement | None:
        named = [p for (is_named, _slot), p in zip(slots, params, strict=True) if is_named]
        types = [_sql_type(p) for p in named]
        if any(t is None for t in types) or "%" in sql.replace("%s", "").replace("%%", ""):
            return None
        return cls(sql, slots, [str(t) for t in types])

    def arguments(self, params: list) -> list | None:
        """The EXECUTE's values among the statement's `params` (the call's values, not the
        constants), or None where they do not fit the declared types: an id beyond bigint (from
        a URL, say) would be an error there, where plain SQL compares it and finds nothing."""
        values = [p for named, p in zip(self.named, params, strict=True) if named]
        if all(_BIGINT_MIN <= p <= _BIGINT_MAX for p in values if type(p) is int):
            return values
        return None

    def prepare_on(self, cursor) -> str:
        """The PREPARE statement, its constants written in as literals by the driver's quoting."""
        return self._head + cursor.mogrify(self._template, self._constants).decode()

    def prepared_on(self, connection) -> bool:
        """Whether the statement is prepared on `connection` (its open database session),
        preparing it there first if need be; False if PostgreSQL refused it."""
        if self.refused or not settings.DB_SERVER_PREPARED:
            return False
        session = connection.connection  # the DB-API connection: a new one has none prepared
        state: tuple[object, set[str]] | None = getattr(connection, "_concord_prepared", None)
        if state is None or state[0] is not session:
            state = (session, set())
            connection._concord_prepared = state
        if self.name in state[1]:
            return True
        in_transaction = not connection.get_autocommit()
        if not _prepare(session, self, connection.Database.Error, in_transaction):
            self.refused = True
            return False
        state[1].add(self.name)
        return True


def _execute(cursor, sql: str, params: list, server: ServerStatement | None) -> None:
    """Run `sql` with `params` on `cursor` (Django's), as EXECUTE of `server` where it can be."""
    arguments = None if server is None else server.arguments(params)
    if server is None or arguments is None or not server.prepared_on(cursor.db):
        cursor.execute(sql, params)
    else:
        cursor.execute(server.execute, arguments)


# Raw statements run through execute_prepared, by their SQL and parameter types (None: one that
# cannot be prepared); the SQL comes from code (a few shapes), but the table is bounded anyway.
_raw_statements: dict[tuple[str, tuple], ServerStatement | None] = {}
_RAW_STATEMENTS_KEPT = 256


def execute_prepared(cursor, sql: str, params: list) -> None:
    """`cursor.execute(sql, params)` for a statement written by hand that runs on every label:
    prepared on the connection once (typed by the values' Python types, as PreparedQuery types
    its values), EXECUTEd after. Plain SQL elsewhere than PostgreSQL, for a value of a type
    PostgreSQL cannot be told (None), or once the table is full."""
    key = (sql, tuple(type(p) for p in params))
    if cursor.db.vendor != "postgresql" or (
        key not in _raw_statements and len(_raw_statements) >= _RAW_STATEMENTS_KEPT
    ):
        cursor.execute(sql, params)
        return
    if key not in _raw_statements:
        slots = [(True, n) for n in range(len(params))]
        _raw_statements.setdefault(key, ServerStatement.of(sql, slots, list(params)))
    _execute(cursor, sql, params, _raw_statements[key])


def _prepare(
    session, statement: ServerStatement, error: type[Exception], in_transaction: bool
) -> bool:
    """Run PREPARE on the DB-API connection itself, once per connection: setting up, not a
    statement of the request, so it stays out of Django's query log and the pinned counts. In a
    transaction it runs in a savepoint, so a refusal spoils nothing. Whether it was accepted."""
    with session.cursor() as cursor:
        prepare = statement.prepare_on(cursor)
        if not in_transaction:
            try:
                cursor.execute(prepare)
            except error:
                return False
            return True
        cursor.execute("SAVEPOINT concord_prepare")
        try:
            cursor.execute(prepare)
        except error:
            cursor.execute("ROLLBACK TO SAVEPOINT concord_prepare")
            return False
        finally:
            cursor.execute("RELEASE SAVEPOINT concord_prepare")
        return True


def _bound(slots: tuple[tuple[bool, object], ...], values: dict[str, object]) -> list:
    """The statement's parameters: each slot's value by name, or its constant."""
    return [values[str(slot)] if named else slot for named, slot in slots]


def _hashable(value: object) -> bool:
    return isinstance(value, Hashable)


def _row_reader(queryset: QuerySet, compiler: Any, using: str) -> Callable[[list], list]:
    """How fetched rows become what iterating `queryset` yields (after its compile): through
    the compiler's converters, found once here rather than on every call."""
    convert = _converter(compiler)
    iterable = queryset._iterable_class
    if iterable is ValuesListIterable:
        return lambda fetched: [tuple(row) for row in convert(fetched)]
    if iterable is FlatValuesListIterable:
        return lambda fetched: [row[0] for row in convert(fetched)]
    if iterable is not ModelIterable:
        raise TypeError(f"prepared query: {iterable.__name__} is not supported")
    return _instance_reader(compiler, using, convert)


def _converter(compiler: Any) -> Callable[[list], Iterable]:
    """The compiler's results_iter, its converters found once (a composite key is not seen)."""
    fields = [s[0] for s in compiler.select[0 : compiler.col_count]]
    if compiler.has_composite_fields(fields):
        raise TypeError("prepared query: composite fields are not supported")
    converters = compiler.get_converters(fields)
    if not converters:
        return lambda fetched: fetched
    return lambda fetched: compiler.apply_converters(fetched, converters)


def _instance_reader(
    compiler: Any, using: str, convert: Callable[[list], Iterable]
) -> Callable[[list], list]:
    """Model instances as Django's ModelIterable makes them: the model's fields, the objects of
    select_related, the annotations."""
    select, klass_info = compiler.select, compiler.klass_info
    annotations = compiler.annotation_col_map or {}
    model = klass_info["model"]
    fields = klass_info["select_fields"]
    start, end = fields[0], fields[-1] + 1
    init_list = [f[0].target.attname for f in select[start:end]]
    related = get_related_populators(klass_info, select, using)

    def read(fetched: list) -> list:
        objects = []
        for row in convert(fetched):
            obj = model.from_db(using, init_list, row[start:end])
            for populator in related:
                populator.populate(row, obj)
            for name, position in annotations.items():
                setattr(obj, name, row[position])
            objects.append(obj)
        return objects

    return read


# ------------------------------------------------------------------------------ writes


def saved(obj: Model, *, update_fields: Sequence[str] | None = None) -> None:
    """`obj.save()` (or `obj.save(update_fields=...)`) for the statements every label writes:
    the INSERT or UPDATE is written once per model and set of fields, and each call only
    prepares its values the way Model.save does (pre_save: auto_now times; get_db_prep_save:
    JSON, dates). No signals are sent: none are connected to the models it is used for. Elsewhere
    than PostgreSQL it is obj.save()."""
    connection = connections[obj._state.db or "default"]
    if connection.vendor != "postgresql":
        obj.save(update_fields=update_fields)
        return
    meta = obj._meta
    if update_fields is not None:
        fields = [_field(type(obj), name) for name in update_fields]
        values = [f.get_db_prep_save(f.pre_save(obj, False), connection) for f in fields]
        sql, server = _update_sql(type(obj), tuple(update_fields))
        with connection.cursor() as cursor:
            _execute(cursor, sql, [*values, obj.pk], server)
            if cursor.rowcount != 1:  # as Model.save says it
                raise DatabaseError("Save with update_fields did not affect any rows.")
        return
    fields = _insert_fields(type(obj), obj.pk is not None)
    values = [f.get_db_prep_save(f.pre_save(obj, True), connection) for f in fields]
    sql, server = _insert_sql(type(obj), obj.pk is not None)
    with connection.cursor() as cursor:
        _execute(cursor, sql, values, server)
        returned = cursor.fetchone()
    for field, value in zip(meta.db_returning_fields, returned, strict=True):
        setattr(obj, field.attname, value)
    obj._state.adding = False
    obj._state.db = connection.alias


def _field(model: type[Model], name: str) -> Field:
    field = model._meta.get_field(name)
    if not isinstance(field, Field) or not field.concrete:
        raise TypeError(f"{model.__name__}.{name} is not a column")
    return field


@functools.cache
def _insert_fields(model: type[Model], pk_given: bool) -> list:
    fields = [f for f in model._meta.local_concrete_fields if not f.generated]
    return fields if pk_given else [f for f in fields if f is not model._meta.auto_field]


@functools.cache
def _insert_sql(model: type[Model], pk_given: bool) -> tuple[str, ServerStatement]:
    quote = connections["default"].ops.quote_name
    columns = ", ".join(quote(f.column) for f in _insert_fields(model, pk_given))
    values = ", ".join(["%s"] * len(_insert_fields(model, pk_given)))
    returning = ", ".join(quote(f.column) for f in model._meta.db_returning_fields)
    table = quote(model._meta.db_table)
    sql = f"INSERT INTO {table} ({columns}) VALUES ({values}) RETURNING {returning}"  # noqa: S608 - names from the model
    return sql, ServerStatement.untyped(sql)


@functools.cache
def _update_sql(model: type[Model], names: tuple[str, ...]) -> tuple[str, ServerStatement]:
    quote = connections["default"].ops.quote_name
    meta = model._meta
    assignments = ", ".join(f"{quote(str(_field(model, name).column))} = %s" for name in names)
    table, pk = quote(meta.db_table), quote(str(meta.pk.column))
    sql = f"UPDATE {table} SET {assignments} WHERE {pk} = %s"  # noqa: S608 - names from the model
    return sql, ServerStatement.untyped(sql)
