"""Fuzzing the importers (hypothesis): random bytes, wrong encodings, BOMs, CRLF, quotes, huge
fields, missing and extra columns, duplicate rows, unknown codes. The study-label import either
succeeds or fails with ImportFailed naming file and line, and then the database is unchanged,
row for row. The URL-list import reports every bad line by number and takes the rest."""

from __future__ import annotations

import hashlib

from django.contrib.auth import get_user_model
from django.db import connection
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from annotation.models import Annotation, Item, Membership, Resolution
from annotation.projects.importers import ImportFailed, study_labels_import
from ingest.importers import url_list_import
from ingest.models import Issue

FUZZ = settings(
    max_examples=40,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
CODES = ["A", "B.1", "C.3", "C.1.ii", "Z.9", "", "c.3", " C.3", "=cmd()"]
URLS = [
    "https://github.com/NVIDIA/Megatron-LM/issues/17",
    "https://github.com/NVIDIA/Megatron-LM/issues/18",
    "https://gitee.com/mindspore/mindformers/issues/IBDZ87",
    "https://gitee.com/mindspore/mindformers/issues/ibdz87",
    "https://github.com/NVIDIA/Megatron-LM/pull/5",
    "https://gitlab.com/a/b/issues/1",
    "not a url",
    "",
]
HEADERS = [
    "Issue_URL,Label1,Label2,Final_Label",
    "Issue_URL,Label1,Final_Label",
    "Issue_URL,Label1,Label2",
    "Issue_URL,Label1,Label1,Final_Label",
    "Issue_URL,Label2,Label1,Final_Label,Extra",
    "\ufeffIssue_URL,Label1,Label2,Final_Label",
    "",
]

cells = st.one_of(st.sampled_from(CODES), st.text(max_size=12), st.just("x" * 5000))
rows = st.lists(
    st.tuples(st.sampled_from(URLS), st.lists(cells, min_size=0, max_size=4)), max_size=8
)


def csv_text(header: str, body: list[tuple[str, list[str]]], quote: bool, newline: str) -> str:
    def cell(value: str) -> str:
        return '"' + value.replace('"', '""') + '"' if quote else value

    lines = [header] + [",".join([cell(url), *map(cell, labels)]) for url, labels in body]
    return newline.join(lines) + newline


def snapshot(models=None) -> str:
    """A digest of every row of these models (default: those the label import may write)."""
    digest = hashlib.sha256()
    models = models or (Issue, Item, Annotation, Resolution, Membership, get_user_model())
    for model in models:
        table = connection.ops.quote_name(model._meta.db_table)
        with connection.cursor() as cursor:
            cursor.execute(f"SELECT * FROM {table} ORDER BY 1")  # noqa: S608 - model metadata
            digest.update(repr(cursor.fetchall()).encode())
    return digest.hexdigest()


@FUZZ
@given(
    header=st.sampled_from(HEADERS),
    body=rows,
    quote=st.booleans(),
    newline=st.sampled_from(["\n", "\r\n"]),
    encoding=st.sampled_from(["utf-8", "utf-16", "latin-1"]),
    noise=st.binary(max_size=40),
)
def test_study_import_succeeds_or_changes_nothing(
    project, tmp_path, header, body, quote, newline, encoding, noise
):
    path = tmp_path / "fuzz.csv"
    data = csv_text(header, body, quote, newline).encode(encoding, errors="replace")
    path.write_bytes(data + noise if noise and body else data)
    before = snapshot()
    failure = None
    try:
        study_labels_import(project=project, path=path)
    except ImportFailed as exc:
        failure = exc
    event("imported" if failure is None else "refused")
    if failure is None:
        after = snapshot()
        study_labels_import(project=project, path=path)  # again: nothing changes
        assert snapshot() == after
        return
    assert failure.errors
    assert all(error.where.path == str(path) for error in failure.errors)
    assert all(error.where.line is not None for error in failure.errors)
    assert snapshot() == before


@FUZZ
@given(lines=st.lists(st.one_of(st.sampled_from(URLS), st.text(max_size=30)), max_size=12))
def test_url_list_reports_bad_lines_and_takes_the_rest(db, lines):
    text = "\r\n".join(lines)
    report = url_list_import(text=text, name="fuzz.txt", fetch_details=False)
    counted = [
        n
        for n, line in enumerate(text.splitlines(), start=1)
        if line.strip().lstrip("\ufeff") and not line.strip().startswith("#")
    ]
    bad = {error.where.line for error in report.errors}
    assert bad <= set(counted)
    assert report.lines == len(counted)
    good = len(counted) - len(report.errors) - report.duplicates
    assert report.created + report.already_known == good
    assert Issue.objects.filter(pk__in=report.issue_ids).count() == good
