"""The project archive (issue 28): a project made from the study's data (MindSpeed's package:
80 issues x 7 volunteers, its yearly lists and carried files; the study's interviews; a lead's
decision, a discussion post, a skip) is archived and restored into a fresh Concord on
PostgreSQL and one on SQLite, each a separate process: the CSV exports, the replication package
and the kappas come out identical. A damaged, foreign or clashing archive is refused and
nothing is written."""

from __future__ import annotations

import hashlib
import io
import json
import os
import re
import shutil
import subprocess
import sys
import uuid
import zipfile
from collections.abc import Callable
from pathlib import Path

import psycopg2
import pytest
from django.apps import apps
from django.contrib.auth import get_user_model
from django.core.management import CommandError, call_command
from django.db import connection
from django.db.models import Count

from annotation.archive import MANIFEST
from annotation.archive.tables import LEFT_OUT, TABLES
from annotation.gate import OPERATOR
from annotation.interviews.coding import passage_code, transcript_coder_join, transcript_upload
from annotation.interviews.services import interviews_import
from annotation.models import ExportJob, FigureState, Item, JobStatus, Project, Role, Skip
from annotation.reporting.export_jobs import export_job_run
from annotation.review.discussion import post_add
from annotation.review.services import item_reopen, item_resolve
from ingest.models import Issue
from taxonomy.interviews.models import CodedPassage
from tests.annotation.test_interviews import study_files
from tests.conftest import STUDY
from tests.stack import ROOT

FORMATS = ("study", "long", "final", "repositories")
SLICE = [
    "labels/MindSpeed.csv",
    *(f"issue-lists/MindSpeed_{year}.txt" for year in (2023, 2024, 2025)),
    "taxonomy.csv",
    "study-details/bug_symptoms.csv",
    "filter_keywords",
]

# What each fresh instance's process does after `migrate`: restore the archive, then print the
# exports, the package's files and the kappas as JSON, as the test process reads its own.
FIGURES = """
import json, sys, django
from pathlib import Path
django.setup()
from django.core.management import call_command
call_command("migrate", verbosity=0)
call_command("restore_project", sys.argv[1])
from tests.annotation.test_archive import figures
out = Path(sys.argv[2])
(out / "figures.json").write_text(json.dumps(figures("mindspeed", out)), encoding="utf-8")
"""


def run(command: str, *args: str) -> str:
    out = io.StringIO()
    call_command(command, *args, stdout=out, stderr=out)
    return out.getvalue()


def figures(slug: str, folder: Path) -> dict[str, str]:
    """Every export of the project as text, each file of its replication package, its
    agreement (Fleiss' kappa and alpha) by type and by repository, its rows per table and
    stage, and the rows of its archive written again."""
    out: dict[str, str] = {}
    for format in FORMATS:
        run("export", "--project", slug, "--format", format, "-o", str(folder / format))
        out[format] = (folder / format).read_text(encoding="utf-8")
    run("export_package", "--project", slug, "-o", str(folder / "package"))
    for path in sorted((folder / "package").rglob("*")):
        if path.is_file():
            out[path.relative_to(folder).as_posix()] = path.read_text(encoding="utf-8")
    for by in ("type", "repository"):
        out[f"kappa by {by}"] = run("agreement", "--project", slug, "--by", by, "--format", "json")
    project = Project.objects.get(slug=slug)
    counts = {table.name: table.owned(project).count() for table in TABLES}
    stages = project.items.values("stage").annotate(n=Count("pk")).order_by("stage")
    out["counts"] = json.dumps({**counts, "stages": {s["stage"]: s["n"] for s in stages}})
    run("archive_project", "--project", slug, "-o", str(folder / "again.zip"))  # and out again
    with zipfile.ZipFile(folder / "again.zip") as again:
        tables = json.loads(again.read(MANIFEST))["tables"]
    out["archived again"] = json.dumps({table["name"]: table["rows"] for table in tables})
    return out


@pytest.fixture
def mindspeed(study_taxonomy, tmp_path) -> Project:
    """The study's MindSpeed package imported, with its interviews, a lead's decision against
    the volunteers, a discussion post and a skip."""
    folder = tmp_path / "package-in"
    for name in SLICE:
        (folder / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(STUDY / name, folder / name)
    run("import_package", str(folder), "--project", "mindspeed")
    project = Project.objects.get(slug="mindspeed")
    lead = get_user_model().objects.create(username="the-lead", email="lead@example.org")
    project.memberships.create(user=lead, role=Role.LEAD)
    item = Item.objects.filter(project=project).order_by("pk")[3]
    post_add(item=item, author=lead, text="These two read the *same* log: B.2, not B.1.")
    item = item_reopen(item=item, lead=lead, reason="a second look")
    item_resolve(item=item, lead=lead, node=project.taxonomy.nodes.get(code="A.1"), reason="see")
    Skip.objects.create(item=item, volunteer=_volunteer(project), reason="cannot read Chinese logs")
    interviews_import(project=project, actor=OPERATOR, **study_files())
    text = b"Q: What failed?\nA: The loss went NaN on Ascend after 3 hours.\n"
    transcript = transcript_upload(project=project, actor=lead, name="U1.txt", data=text)
    transcript_coder_join(transcript=transcript, actor=lead)
    passage_code(transcript=transcript, actor=lead, start=19, end=60, node_code="C.1")
    return project


@pytest.mark.slow
def test_an_archived_project_restores_the_same_into_fresh_postgresql_and_sqlite(
    mindspeed, tmp_path
):
    archive = tmp_path / "mindspeed.zip"
    said = run("archive_project", "--project", "mindspeed", "-o", str(archive))
    assert "the archive of mindspeed" in said
    expected = figures("mindspeed", _folder(tmp_path / "here"))
    assert '"kappa"' in expected["kappa by type"]
    assert expected["long"].count("\n") == 80 * 7 + 1

    sqlite, postgres = tmp_path / "sqlite", tmp_path / "postgres"
    with _fresh_postgres(f"concord_archive_fresh_{uuid.uuid4().hex[:8]}") as url:
        # both at once: each process spends most of its time migrating its empty database
        processes = [
            (_restore_elsewhere(archive, url, postgres), postgres),
            (
                _restore_elsewhere(archive, f"sqlite:///{sqlite / 'concord.sqlite3'}", sqlite),
                sqlite,
            ),
        ]
        restored = [_figures_of(process, folder) for process, folder in processes]
    assert restored[0] == expected  # PostgreSQL
    assert restored[1] == expected  # SQLite


def test_restoring_beside_the_original_reuses_its_issues_users_and_taxonomy(mindspeed, tmp_path):
    archive = tmp_path / "mindspeed.zip"
    run("archive_project", "--project", "mindspeed", "-o", str(archive))
    issues, users = Issue.objects.count(), get_user_model().objects.count()

    with pytest.raises(CommandError, match="already has a project with slug mindspeed"):
        run("restore_project", str(archive))
    with pytest.raises(CommandError, match="--slug 'not a slug'"):
        run("restore_project", str(archive), "--slug", "not a slug")
    said = run("restore_project", str(archive), "--slug", "mindspeed-copy")
    assert "issues: 0 restored, 80 already here" in said
    assert "Restored mindspeed-copy." in said
    assert (Issue.objects.count(), get_user_model().objects.count()) == (issues, users)
    copy = Project.objects.get(slug="mindspeed-copy")
    assert copy.taxonomy_id == mindspeed.taxonomy_id
    if connection.vendor == "postgresql":  # its agreement tallies built by the restore
        state = FigureState.objects.get(project=copy)
        assert state.built == state.generation
    for table in TABLES:  # the project's own rows: as many; the shared ones are the same rows
        assert table.owned(copy).count() == table.owned(mindspeed).count(), table.name
    assert CodedPassage.objects.filter(
        transcript__project=copy, coder__username="the-lead"
    ).exists()
    for format in FORMATS:
        original = run("export", "--project", "mindspeed", "--format", format, "-o", "-")
        assert run("export", "--project", "mindspeed-copy", "--format", format, "-o", "-") == (
            original
        )


def test_a_damaged_archive_is_refused_and_nothing_is_written(mindspeed, tmp_path):
    archive = tmp_path / "mindspeed.zip"
    run("archive_project", "--project", "mindspeed", "-o", str(archive))
    before = _counts()

    changed = _rewritten(
        archive, tmp_path / "changed.zip", "annotations.jsonl", '"node_id": ', '"node_id": 1'
    )
    with pytest.raises(CommandError, match=re.escape("annotations.jsonl is damaged")):
        run("restore_project", str(changed), "--slug", "changed")

    cut = tmp_path / "cut.zip"
    cut.write_bytes(archive.read_bytes()[: archive.stat().st_size // 2])
    with pytest.raises(CommandError, match="not a Concord project archive, or it is damaged"):
        run("restore_project", str(cut), "--slug", "cut")

    foreign = tmp_path / "foreign.zip"
    with zipfile.ZipFile(foreign, "w") as out:
        out.writestr("Issue Report/MindSpeed.csv", "Issue_URL\n")
    with pytest.raises(
        CommandError, match=re.escape(f"not a Concord project archive: it has no {MANIFEST}")
    ):
        run("restore_project", str(foreign), "--slug", "foreign")

    newer = _rewritten(archive, tmp_path / "newer.zip", MANIFEST, '"version": 1', '"version": 9')
    with pytest.raises(CommandError, match="version 9; this Concord reads versions 1 to 1"):
        run("restore_project", str(newer), "--slug", "newer")
    assert _counts() == before


def test_a_node_this_concord_holds_otherwise_refuses_the_restore(mindspeed, tmp_path):
    archive = tmp_path / "mindspeed.zip"
    run("archive_project", "--project", "mindspeed", "-o", str(archive))
    before = _counts()

    def c1_a_type(text: str) -> str:  # the archive says C.1 is a type; here it is a theme
        rows = [json.loads(line) for line in text.splitlines()]
        for row in rows:
            if row["code"] == "C.1":
                row.update(level="type", parent_id=None)
        return "".join(json.dumps(row) + "\n" for row in rows)

    other = _rewritten(
        archive, tmp_path / "other.zip", "nodes.jsonl", None, c1_a_type, fix_manifest=True
    )
    with pytest.raises(CommandError) as refused:
        run("restore_project", str(other), "--slug", "other")
    assert re.search(
        r"nodes.jsonl, line \d+, column level: This Concord has node C.1 with another level",
        str(refused.value),
    )
    assert _counts() == before


def test_a_bad_row_late_in_the_archive_leaves_nothing_half_written(mindspeed, tmp_path):
    archive = tmp_path / "mindspeed.zip"
    run("archive_project", "--project", "mindspeed", "-o", str(archive))
    before = _counts()
    with zipfile.ZipFile(archive) as source:
        participant = json.loads(source.read("participants.jsonl").splitlines()[0])["id"]
    # rankings come last: a row naming a node the archive lacks, with the checksum made to fit
    row = {"id": 1, "participant_id": participant, "issue_type_id": 999999, "node_id": 1}
    bad = _rewritten(
        archive,
        tmp_path / "bad.zip",
        "rankings.jsonl",
        None,
        json.dumps({**row, "position": 1, "created_at": "2025-01-01T00:00:00+00:00"}) + "\n",
        fix_manifest=True,
    )
    with pytest.raises(CommandError) as refused:
        run("restore_project", str(bad), "--slug", "half")
    assert "rankings.jsonl, line 1, column issue_type_id: Refers to row 999999 of nodes" in str(
        refused.value
    )
    assert _counts() == before


def test_an_admin_archives_the_project_from_the_exports_page(mindspeed, client, settings, tmp_path):
    settings.VAR_DIR = tmp_path
    admin, volunteer = get_user_model().objects.create(username="the-admin"), _volunteer(mindspeed)
    mindspeed.memberships.create(user=admin, role=Role.ADMIN)
    page = f"/projects/{mindspeed.slug}/exports/"
    client.force_login(volunteer)
    assert client.post(page, {"format": "archive"}).status_code == 403

    client.force_login(admin)
    assert "Archive the project" in client.get(page).content.decode()
    queued = client.post(page, {"format": "archive"})
    assert queued.status_code == 302
    job = ExportJob.objects.get(project=mindspeed, format="archive")
    assert (job.rows_total or 0) > 80 * 7
    export_job_run(job_id=job.pk)  # what the worker does with the task
    job.refresh_from_db()
    assert (job.status, job.rows_written) == (JobStatus.DONE, job.rows_total)
    assert "Download the zip" in client.get(queued["Location"]).content.decode()
    download = client.get(f"{page}{job.pk}/download/")
    assert download["Content-Type"] == "application/zip"
    (tmp_path / "downloaded.zip").write_bytes(b"".join(download.streaming_content))
    said = run("restore_project", str(tmp_path / "downloaded.zip"), "--slug", "from-the-page")
    assert "annotations: 560 restored" in said


def test_every_model_a_project_owns_is_archived_or_left_out_for_a_reason():
    owned = {Project}
    while True:  # a model with a foreign key to a model a project owns is the project's too
        more = {
            model
            for model in apps.get_models()
            for f in model._meta.concrete_fields
            if f.is_relation and f.related_model in owned
        } - owned
        if not more:
            break
        owned |= more
    archived = {table.model for table in TABLES}
    named = {model for model in owned if model._meta.label in LEFT_OUT}
    assert {m._meta.label for m in owned - archived - named} == set()
    assert len(named) == len(LEFT_OUT)  # no stale name in the list


def test_an_archive_of_an_older_concord_restores_with_todays_defaults(mindspeed, tmp_path):
    archive = tmp_path / "mindspeed.zip"
    run("archive_project", "--project", "mindspeed", "-o", str(archive))

    def older(text: str) -> str:  # items written before shuffle and in_pilot existed
        rows = [json.loads(line) for line in text.splitlines()]
        return "".join(
            json.dumps({k: v for k, v in row.items() if k not in ("shuffle", "in_pilot")}) + "\n"
            for row in rows
        )

    old = _rewritten(archive, tmp_path / "old.zip", "items.jsonl", None, older, fix_manifest=True)
    assert "items: 80 restored" in run("restore_project", str(old), "--slug", "old")
    items = Item.objects.filter(project__slug="old")
    assert not items.filter(in_pilot=True).exists()  # the field's default
    assert items.values("shuffle").distinct().count() > 1  # drawn by the database, as for new
    assert run("export", "--project", "old", "--format", "long", "-o", "-") == run(
        "export", "--project", "mindspeed", "--format", "long", "-o", "-"
    )


# ---------------------------------------------------------------- helpers


def _volunteer(project: Project):
    return project.memberships.filter(role=Role.VOLUNTEER).first().user


def _folder(path: Path) -> Path:
    path.mkdir(parents=True, exist_ok=True)
    return path


def _counts() -> tuple[int, ...]:
    return (
        Project.objects.count(),
        Item.objects.count(),
        Issue.objects.count(),
        get_user_model().objects.count(),
    )


def _rewritten(
    archive: Path,
    target: Path,
    name: str,
    old: str | None,
    new: str | Callable[[str], str],
    *,
    fix_manifest: bool = False,
) -> Path:
    """A copy of `archive` with `old` replaced by `new` once in file `name` (or `new` as the
    whole file when `old` is None, or what `new` makes of the file's text when it is a
    function); with fix_manifest, the manifest says the new checksum."""
    with zipfile.ZipFile(archive) as source:
        files = {n: source.read(n) for n in source.namelist()}
    text = files[name].decode("utf-8")
    if callable(new):
        changed = new(text)
    elif old is None:
        changed = new
    else:
        changed = text.replace(old, new, 1)
    files[name] = changed.encode("utf-8")
    if fix_manifest:
        manifest = json.loads(files[MANIFEST])
        for entry in manifest["tables"]:
            if entry["file"] == name:
                entry["sha256"] = hashlib.sha256(files[name]).hexdigest()
                entry["rows"] = files[name].count(b"\n")
        files[MANIFEST] = json.dumps(manifest).encode("utf-8")
    with zipfile.ZipFile(target, "w") as out:
        for n, data in files.items():
            out.writestr(n, data)
    return target


class _fresh_postgres:
    """An empty database on the test's PostgreSQL server, dropped afterwards."""

    def __init__(self, name: str) -> None:
        db = connection.settings_dict
        self.server = f"postgresql://{db['USER']}@{db['HOST']}:{db['PORT']}"
        self.name = name

    def _admin(self, sql: str) -> None:
        admin = psycopg2.connect(f"{self.server}/postgres")
        admin.autocommit = True
        try:
            with admin.cursor() as cursor:
                cursor.execute(sql)
        finally:
            admin.close()

    def __enter__(self) -> str:
        self._admin(f'CREATE DATABASE "{self.name}"')
        return f"postgres://{self.server.split('://', 1)[1]}/{self.name}"

    def __exit__(self, *exc) -> None:
        self._admin(f'DROP DATABASE IF EXISTS "{self.name}" WITH (FORCE)')


def _restore_elsewhere(archive: Path, database_url: str, folder: Path) -> subprocess.Popen:
    """Start restoring `archive` into the empty database at `database_url` in a process of its
    own (a fresh Concord), which then writes its figures to `folder`/figures.json."""
    env = {**os.environ, "DATABASE_URL": database_url, "DEBUG": "1"}
    env.update(
        CONCORD_VAR_DIR=str(_folder(folder / "var")), DJANGO_SETTINGS_MODULE="concord.settings"
    )
    log = (_folder(folder) / "log").open("w")
    return subprocess.Popen(
        [sys.executable, "-c", FIGURES, str(archive), str(_folder(folder / "out"))],
        cwd=ROOT,
        env=env,
        stdout=log,
        stderr=subprocess.STDOUT,
    )


def _figures_of(process: subprocess.Popen, folder: Path) -> dict[str, str]:
    process.wait(timeout=300)
    log = (folder / "log").read_text()
    assert process.returncode == 0, log[-3000:]
    assert "Restored mindspeed." in log
    return json.loads((folder / "out" / "figures.json").read_text(encoding="utf-8"))
