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

`saved` does for the label's writes what PreparedQuery does for its reads: Model.save with the
INSERT or UPDATE written once per model and set of fields.

What reaches PostgreSQL is plain SQL with its parameters, as Django sends it: no statement is
PREPAREd on the server. Server-side prepared statements (tried for issue #16) cut PostgreSQL's
CPU per label from about 5.1 to 3.4 ms, but a migration that changes a column's type made every
kept connection's statements fail until it was recycled, they break behind a pooler that shares
connections per transaction, and logs showed `EXECUTE concord_n` instead of the SQL. Without them
`make bench-capacity` still holds 100 labels/s with 7 volunteers (issue #25); without the
client-side compile kept here it does not (about 32 labels/s: the server spent 24 ms of CPU per
label building QuerySets).
"""

from __future__ import annotations

import functools
import threading
from collections.abc import Callable, Hashable, Iterable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

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
            cursor.execute(compiled.sql, params)
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
    )


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
        sql = _update_sql(type(obj), tuple(update_fields))
        with connection.cursor() as cursor:
            cursor.execute(sql, [*values, obj.pk])
            if cursor.rowcount != 1:  # as Model.save says it
                raise DatabaseError("Save with update_fields did not affect any rows.")
        return
    fields = _insert_fields(type(obj), obj.pk is not None)
    values = [f.get_db_prep_save(f.pre_save(obj, True), connection) for f in fields]
    sql = _insert_sql(type(obj), obj.pk is not None)
    with connection.cursor() as cursor:
        cursor.execute(sql, values)
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
def _insert_sql(model: type[Model], pk_given: bool) -> str:
    quote = connections["default"].ops.quote_name
    columns = ", ".join(quote(f.column) for f in _insert_fields(model, pk_given))
    values = ", ".join(["%s"] * len(_insert_fields(model, pk_given)))
    returning = ", ".join(quote(f.column) for f in model._meta.db_returning_fields)
    table = quote(model._meta.db_table)
    return f"INSERT INTO {table} ({columns}) VALUES ({values}) RETURNING {returning}"  # noqa: S608 - names from the model


@functools.cache
def _update_sql(model: type[Model], names: tuple[str, ...]) -> str:
    quote = connections["default"].ops.quote_name
    meta = model._meta
    assignments = ", ".join(f"{quote(str(_field(model, name).column))} = %s" for name in names)
    table, pk = quote(meta.db_table), quote(str(meta.pk.column))
    return f"UPDATE {table} SET {assignments} WHERE {pk} = %s"  # noqa: S608 - names from the model
