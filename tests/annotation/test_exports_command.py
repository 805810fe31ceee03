"""`manage.py export`: the file it writes, its options, and that a failure mid-write never
leaves a half file (the export goes to a temporary file that is renamed when complete)."""

from __future__ import annotations

import io
import os
import resource
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from django.conf import settings
from django.core.management import CommandError, call_command
from django.db import connection

from annotation.reporting.exports import export_lines, export_options
from tests.conftest import needs_postgres

ROOT = Path(__file__).resolve().parents[2]


def expected_text(project, **options) -> str:
    return "".join(export_lines(project, export_options(project, **options)))


def test_command_writes_the_export_and_the_column_sidecar(labeled_project, tmp_path):
    out, sidecar = tmp_path / "labels.csv", tmp_path / "columns.csv"
    stderr = io.StringIO()
    call_command(
        "export",
        project=labeled_project.slug,
        format="study",
        level="type",
        bom=True,
        sidecar=sidecar,
        output=str(out),
        stderr=stderr,
    )
    assert out.read_bytes() == expected_text(
        labeled_project, format="study", level="type", bom=True
    ).encode("utf-8")
    assert out.read_bytes().startswith(b"\xef\xbb\xbfIssue_URL,")
    assert "Wrote 80 rows" in stderr.getvalue()
    assert sidecar.read_bytes().decode().splitlines() == [
        "Column,Username",
        *(f"Label{j},label:{labeled_project.pk}:{j}" for j in range(1, 8)),
    ]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["columns.csv", "labels.csv"]


def test_command_filters_by_type_stage_and_repository(labeled_project, tmp_path, capsys):
    call_command(
        "export",
        "--project",
        labeled_project.slug,
        "--format",
        "final",
        "--type",
        "B",
        "--stage",
        "final",
        "--repository",
        "ascend/MindSpeed",
        "-o",
        "-",
    )
    printed = capsys.readouterr().out
    assert printed == expected_text(
        labeled_project, format="final", type="B", stage="final", repository="ascend/MindSpeed"
    )
    assert printed.count("\r\n") > 1


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (["--type", "Z"], "is not a type of"),
        (["--from", "2025-02-01", "--until", "2025-01-01"], "date window is empty"),
        (["--repository", "MindSpeed"], "owner/repo"),
    ],
)
def test_bad_options_leave_the_old_file_alone(labeled_project, tmp_path, extra, message):
    out = tmp_path / "final.csv"
    out.write_text("yesterday's export\n")
    with pytest.raises(CommandError, match=message):
        call_command(
            "export", "--project", labeled_project.slug, "--format", "final", *extra, "-o", str(out)
        )
    assert out.read_text() == "yesterday's export\n"
    assert [p.name for p in tmp_path.iterdir()] == ["final.csv"]


def test_unknown_project_is_an_error(db, tmp_path):
    with pytest.raises(CommandError, match="No project with slug 'nope'"):
        call_command("export", project="nope", format="long", output=str(tmp_path / "x.csv"))


def _small_file_limit(limit: int):
    def apply() -> None:
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # a write past the limit fails (EFBIG)
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))

    return apply


@pytest.mark.django_db(transaction=True)
def test_a_write_failing_midway_never_leaves_a_half_file(labeled_project, tmp_path):
    """The real thing, in another process: the disk (a file-size limit) refuses the write after
    about 20 kB of a ~100 kB export. The old file stays as it was and no temporary is left."""
    needs_postgres(connection)
    out = tmp_path / "long.csv"
    out.write_text("yesterday's export\n")
    db = connection.settings_dict
    env = {
        **os.environ,
        "DATABASE_URL": f"postgres://{db['USER']}@{db['HOST']}:{db['PORT']}/{db['NAME']}",
        "SECRET_KEY": settings.SECRET_KEY,
    }
    command = [sys.executable, "manage.py", "export", "--project", labeled_project.slug]
    command += ["--format", "long", "-o", str(out)]
    failed = subprocess.run(
        command,
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        preexec_fn=_small_file_limit(20_000),
    )
    assert failed.returncode == 1, failed.stderr
    assert "Could not write" in failed.stderr
    assert "File too large" in failed.stderr
    assert out.read_text() == "yesterday's export\n"
    assert [p.name for p in tmp_path.iterdir()] == ["long.csv"]

    done = subprocess.run(command, cwd=ROOT, env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert "Wrote 560 rows" in done.stderr
    assert out.read_bytes().decode() == expected_text(labeled_project, format="long")
    assert len(out.read_bytes()) > 20_000
