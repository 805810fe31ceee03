"""Writes on issues."""

from __future__ import annotations

import io
import json
from collections.abc import Iterable, Sequence
from typing import Any

from django.db import connection, models, transaction
from django.db.models.functions import Lower
from django.utils import timezone

from ingest.issue_refs import IssueRef
from ingest.models import Issue

BATCH = 2000
ISSUE_FIELDS = ("host", "owner", "repo", "number", "url")


def repository_issues(host: str, owner: str, repo: str) -> models.QuerySet[Issue]:
    """The issues Concord holds of a repository, whatever the case of their owner and repository
    names: both hosts take `nvidia/megatron-lm` for `NVIDIA/Megatron-LM` (the index on the
    lower-cased names serves this)."""
    return Issue.objects.alias(owner_key=Lower("owner"), repo_key=Lower("repo")).filter(
        host=host, owner_key=owner.lower(), repo_key=repo.lower()
    )


def repository_spelling(host: str, owner: str, repo: str) -> tuple[str, str]:
    """How Concord spells a repository's owner and name: as its issues already stored are spelled
    (the first spelling it saw), else as given. A new issue takes it, so one repository is not
    shown under two spellings."""
    stored = repository_issues(host, owner, repo).values_list("owner", "repo")[:1]
    return next(iter(stored), (owner, repo))


def issue_spellings(
    host: str, owner: str, repo: str, numbers: Iterable[str]
) -> dict[str, tuple[str, str]]:
    """number -> (owner, repo) to store each of a repository's issues under: the spelling of the
    issue's row if Concord holds it (an upsert keyed by the names finds that row), else the
    repository's (repository_spelling)."""
    numbers = set(numbers)
    rows = repository_issues(host, owner, repo).filter(number__in=numbers).order_by("-pk")
    stored = {number: (o, r) for number, o, r in rows.values_list("number", "owner", "repo")}
    new = numbers - stored.keys()
    spelling = repository_spelling(host, owner, repo) if new else (owner, repo)
    return {**dict.fromkeys(new, spelling), **stored}


def issues_ensure(refs: Iterable[IssueRef]) -> dict[IssueRef, int]:
    """Make sure an Issue row exists for every ref; return ids, keyed by the refs as Concord
    spells them (equal to the refs given: names are compared without case). A new issue takes its
    repository's spelling (repository_spelling; within `refs`, the first given). Safe to repeat,
    safe under races."""
    wanted = list(dict.fromkeys(refs))  # one ref per issue: the first spelling given
    found = issues_found(wanted)
    missing = [r for r in wanted if r not in found]
    if missing:
        spelling: dict[tuple[str, str, str], tuple[str, str]] = {}
        for r in missing:
            repository = (r.host, r.owner.lower(), r.repo.lower())
            if repository not in spelling:
                spelling[repository] = repository_spelling(r.host, r.owner, r.repo)
        rows = []
        for r in missing:
            owner, repo = spelling[(r.host, r.owner.lower(), r.repo.lower())]
            spelled = IssueRef(r.host, owner, repo, r.number)
            rows.append((r.host, owner, repo, r.number, spelled.url))
        insert_rows(Issue, ISSUE_FIELDS, sorted(rows), ignore_conflicts=True)
        found.update(issues_found(missing))
    return found


def issues_found(refs: Iterable[IssueRef]) -> dict[IssueRef, int]:
    """id of each ref's issue that Concord holds, keyed by the ref as stored (equal to the ref
    given: names are compared without case); refs of issues it does not hold are left out, and
    nothing is written. Should one issue have two rows (spellings stored before names were
    compared without case), the older wins."""
    ids: dict[IssueRef, int] = {}
    by_repo: dict[tuple[str, str, str], set[str]] = {}
    for r in refs:
        by_repo.setdefault((r.host, r.owner.lower(), r.repo.lower()), set()).add(r.number)
    for (host, owner, repo), numbers in by_repo.items():
        issues = repository_issues(host, owner, repo)
        if len(numbers) <= BATCH:
            # A chunk of an item import (issue 25) asks for a few numbers, again and again:
            # looked up, not read with the whole repository each time. Many: read once.
            issues = issues.filter(number__in=numbers)
        rows = issues.values_list("pk", "owner", "repo", "number")
        matching = [row for row in rows.iterator(chunk_size=BATCH) if row[3] in numbers]
        for pk, stored_owner, stored_repo, number in sorted(matching):
            ids.setdefault(IssueRef(host, stored_owner, stored_repo, number), pk)
    return ids


def insert_rows(
    model: type[models.Model],
    fields: Sequence[str],
    rows: Sequence[tuple[int | float | str | dict | list | None, ...]],
    *,
    ignore_conflicts: bool = False,
) -> None:
    """INSERT plain rows (values of `fields`, by attname) the way bulk_create would: other columns
    get their field default, auto_now(_add) columns the current time; no objects, no signals.

    On PostgreSQL (psycopg2) the rows go through COPY into a temporary table and one
    INSERT ... SELECT: at study scale (~300k labels) bulk_create's per-object work and huge
    VALUES statements took most of an import. Elsewhere (SQLite demo) it is bulk_create.
    Values must be int, float, bool, str, dict or list (for a JSONField) or None.
    """
    if not rows:
        return
    if not _can_copy():
        objects = [model(**dict(zip(fields, row, strict=True))) for row in rows]
        model._default_manager.bulk_create(
            objects, batch_size=BATCH, ignore_conflicts=ignore_conflicts
        )
        return
    by_attname = {f.attname: f for f in model._meta.concrete_fields}
    given = [by_attname[name] for name in fields]
    now = timezone.now()
    defaults: list[tuple[models.Field, Any]] = []
    for field in model._meta.concrete_fields:
        if (
            field.primary_key
            or field.attname in fields
            or field.db_default is not models.NOT_PROVIDED
        ):
            continue  # a database default is left to the database: one value per row
        auto_now = getattr(field, "auto_now", False) or getattr(field, "auto_now_add", False)
        value = now if auto_now else field.get_default()  # what Model() and pre_save would set
        defaults.append((field, field.get_db_prep_save(value, connection)))

    quote = connection.ops.quote_name
    target = quote(model._meta.db_table)
    scratch = quote(f"concord_insert_{model._meta.db_table}")
    given_columns = ", ".join(quote(f.column) for f in given)
    all_columns = ", ".join(quote(f.column) for f in [*given, *(f for f, _ in defaults)])
    # Typed constants: an untyped NULL or JSON literal in a SELECT list would be text.
    constants = ", ".join(f"CAST(%s AS {f.db_type(connection)})" for f, _ in defaults)
    selected = ", ".join(c for c in (given_columns, constants) if c)
    on_conflict = " ON CONFLICT DO NOTHING" if ignore_conflicts else ""
    with transaction.atomic(), connection.cursor() as cursor:
        cursor.execute(
            f"CREATE TEMPORARY TABLE {scratch} ON COMMIT DROP AS "  # noqa: S608 - names from the model
            f"SELECT {given_columns} FROM {target} WITH NO DATA"
        )
        copy = f"COPY {scratch} ({given_columns}) FROM STDIN"
        cursor.copy_expert(copy, _copy_text(given, rows), 1 << 20)  # positional: debug cursor
        cursor.execute(
            f"INSERT INTO {target} ({all_columns}) "  # noqa: S608 - names from the model
            f"SELECT {selected} FROM {scratch}{on_conflict}",
            [value for _, value in defaults],
        )
        cursor.execute(f"DROP TABLE {scratch}")


def _can_copy() -> bool:
    driver = getattr(connection, "Database", None)  # the backend's DB-API module
    return connection.vendor == "postgresql" and getattr(driver, "__name__", "") == "psycopg2"


_COPY_ESCAPES = str.maketrans({"\\": "\\\\", "\t": "\\t", "\n": "\\n", "\r": "\\r"})


def _copy_cell(value: int | float | str | dict | list | None) -> str:
    if value is None:
        return "\\N"
    if isinstance(value, str):
        return value.translate(_COPY_ESCAPES)
    if isinstance(value, dict | list):  # a JSONField's value
        return json.dumps(value).translate(_COPY_ESCAPES)
    if isinstance(value, bool):
        return "t" if value else "f"
    if isinstance(value, int | float) and not isinstance(value, bool):
        return repr(value)
    raise TypeError(
        f"insert_rows takes int, float, bool, str, dict, list or None, not {type(value).__name__}"
    )


def _copy_text(fields: Sequence[models.Field], rows: Sequence[tuple]) -> io.StringIO:
    """Rows in COPY's text format: tab-separated, \\N for NULL, backslash escapes."""

    def plain_int(field: models.Field) -> bool:
        value_field = field.target_field if isinstance(field, models.ForeignKey) else field
        return isinstance(value_field, models.IntegerField) and not field.null

    if all(plain_int(f) for f in fields):  # ids and counts only (labels): the large case
        lines = ("\t".join(map(str, row)) for row in rows)
    else:
        lines = ("\t".join(map(_copy_cell, row)) for row in rows)
    return io.StringIO("\n".join(lines) + "\n")
