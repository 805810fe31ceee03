"""The README's "The API from a script" script, run exactly as printed there, against a live server
and a real Celery worker: it imports issues with their text, waits for the job, lets three
volunteers label every item through the API and downloads the long export. If the README's
script or the API it shows drifts apart, this fails."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from django.db import connection
from rest_framework.authtoken.models import Token

from annotation.models import ItemImport, JobStatus, Role, Stage
from annotation.reporting.exports import export_lines, export_options
from tests.factories import MembershipFactory, ProjectFactory, UserFactory
from tests.workers import worker_pool

README = Path(__file__).resolve().parents[1] / "README.md"
SCRIPT_TIMEOUT = 240  # seconds: a cold worker start, the import, 12 labels and the export

ISSUES = [
    {
        "url": "https://github.com/NVIDIA/Megatron-LM/issues/2101",
        "title": "CUDA out of memory with sequence parallel",
        "body": "Training a 7B model runs out of GPU memory at step 10.",
        "author": "trainer",
        "created_at": "2024-06-01T08:00:00Z",
        "comments": [{"author": "maintainer", "body": "Which commit?"}],
    },
    {
        "url": "https://github.com/NVIDIA/Megatron-LM/issues/2102",
        "title": "与 Transformer Engine 1.5 不兼容",
        "body": "导入时报错 `undefined symbol`。",
        "author": "张三",
        "created_at": "2024-06-02T08:00:00Z",
    },
    {
        "url": "https://gitee.com/ascend/MindSpeed/issues/IA1B2C",
        "title": "Checkpoint conversion fails",
        "body": "<img src=x onerror=alert(1)> convert_ckpt.py crashes",
    },
    {"url": "https://github.com/NVIDIA/Megatron-LM/issues/2104", "title": "Docs link broken"},
]


def readme_script() -> str:
    """The first Python block of the README's "The API from a script" section."""
    text = README.read_text(encoding="utf-8")
    section = text.split("## The API from a script\n", 1)[1].split("\n## ", 1)[0]
    match = re.search(r"```python\n(.*?)```", section, re.DOTALL)
    assert match, "the README's API section lost its script"
    return match.group(1)


@pytest.fixture
def workers(redis_required, live_server, settings, tmp_path):
    if connection.vendor != "postgresql":
        pytest.skip("needs PostgreSQL shared between the live server and the worker process")
    settings.VAR_DIR = tmp_path / "var"  # the live server reads the export the worker writes
    settings.VAR_DIR.mkdir()
    with worker_pool(None, tmp_path) as pool:
        yield pool


@pytest.mark.worker
def test_the_readme_script_adds_items_labels_them_and_downloads_the_export(
    study_taxonomy, live_server, workers, tmp_path
):
    project = ProjectFactory(taxonomy=study_taxonomy, slug="scripted", screening_enabled=False)
    admin = UserFactory(username="script-admin")
    MembershipFactory(project=project, user=admin, role=Role.ADMIN)
    volunteers = [UserFactory(username=f"script-volunteer-{n}") for n in range(3)]
    for volunteer in volunteers:
        MembershipFactory(project=project, user=volunteer, role=Role.VOLUNTEER)
    issues = tmp_path / "issues.jsonl"
    issues.write_text("".join(json.dumps(i, ensure_ascii=False) + "\n" for i in ISSUES))
    script = tmp_path / "script.py"
    script.write_text(readme_script(), encoding="utf-8")
    out = tmp_path / "labels.csv"
    env = {
        **os.environ,
        "CONCORD_URL": live_server.url,
        "CONCORD_PROJECT": project.slug,
        "CONCORD_ADMIN_TOKEN": Token.objects.create(user=admin).key,
        "CONCORD_VOLUNTEER_TOKENS": ",".join(Token.objects.create(user=v).key for v in volunteers),
    }
    workers.start()

    done = subprocess.run(
        [sys.executable, str(script), str(issues), str(out)],
        env=env,
        capture_output=True,
        text=True,
        timeout=SCRIPT_TIMEOUT,
    )

    assert done.returncode == 0, done.stdout + done.stderr
    assert ItemImport.objects.get().status == JobStatus.DONE
    assert project.items.count() == len(ISSUES)
    assert set(project.items.values_list("stage", flat=True)) <= {Stage.FINAL, Stage.DISPUTED}
    assert "12 labels in" in done.stdout
    written = out.read_bytes().decode("utf-8")
    assert written == "".join(export_lines(project, export_options(project, format="long")))
    assert written.count("\r\n") == 1 + len(ISSUES) * len(volunteers)
    assert "C.2" in written  # the out-of-memory issue, as the script's choose() decides
