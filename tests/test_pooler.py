"""Concord behind a connection pooler in transaction mode (issue #31): PgBouncer with
`pool_mode = transaction` between every process and PostgreSQL, set as the README's production
section says (DATABASE_POOLED=1). Migrating and seeding, volunteers labeling, an item import, and
the exports (the long one streamed, the study one as a background job) all go through it: a
client's session on the server lasts one transaction there, so anything that leans on a session
(a prepared statement, a session lock, a server-side cursor outside a transaction) would fail."""

from __future__ import annotations

import json
import secrets
import time

import pytest
import requests

from tests.load import drive, outcome
from tests.stack import app_on_private_postgres, manage

SLUG = "pooled"
ADMIN = f"""
from django.contrib.auth import get_user_model
from rest_framework.authtoken.models import Token
from annotation.models import Membership, Project, Role
admin, _ = get_user_model().objects.get_or_create(username="pooled-admin")
Membership.objects.get_or_create(
    project=Project.objects.get(slug="{SLUG}"), user=admin, defaults={{"role": Role.ADMIN}}
)
print(Token.objects.get_or_create(user=admin)[0].key)
"""


@pytest.fixture(scope="module")
def app():
    with app_on_private_postgres(
        slug=SLUG,
        volunteers=6,
        items=200,
        password=secrets.token_urlsafe(12),
        workers=2,
        threads=2,
        pooled=True,
    ) as app:
        yield app


@pytest.fixture(scope="module")
def admin(app):
    token = manage(app.env, "shell", "-c", ADMIN).split()[-1]
    session = requests.Session()
    session.headers["Authorization"] = f"Token {token}"
    return session


def test_volunteers_label_through_the_pooler_and_lose_nothing(app):
    tally = drive(app.server.base_url, SLUG, app.tokens, app.themes, 5.0, 0.02)
    result = outcome(tally, app.figures())
    assert not tally.errors, tally.errors[:5]
    assert not tally.retryable, tally.retryable
    assert result["acknowledged"] > 50
    assert result["lost"] == 0
    assert result["unacknowledged"] == 0
    assert result["over_k"] == 0
    assert result["miscounted"] == 0


def test_an_item_import_goes_in_whole_through_the_pooler(app, admin):
    api = f"{app.server.base_url}/api/projects/{SLUG}"
    issues = [
        {
            "url": f"https://gitee.com/mindspore/mindspore/issues/I{n:05d}",
            "title": f"算子编译失败 {n}",
            "body": "Compile fails on Ascend.",
            "comments": [{"id": 90_000 + n, "author": "dev", "body": "Which CANN?"}],
        }
        for n in range(120)
    ]
    text = "".join(json.dumps(issue, ensure_ascii=False) + "\n" for issue in issues)
    files = {"file": ("issues.jsonl", text.encode(), "application/jsonl")}
    queued = admin.post(f"{api}/item-imports/", files=files, timeout=60)
    assert queued.status_code == 201, queued.text
    job = finished(admin, f"{api}/item-imports/{queued.json()['id']}/")
    assert job["status"] == "done", job
    assert (job["issues_created"], job["items_added"]) == (120, 120), job


def test_the_exports_stream_through_the_pooler(app, admin):
    api = f"{app.server.base_url}/api/projects/{SLUG}"
    drive(app.server.base_url, SLUG, app.tokens, app.themes, 1.5, 0.02)  # labels to export
    labels = len(app.figures()["stored"])
    assert labels
    long = admin.get(f"{api}/exports/long/", timeout=60)  # streamed, read by a cursor
    assert long.status_code == 200, long.text
    assert len(long.text.splitlines()) == 1 + labels

    queued = admin.post(f"{api}/export-jobs/", json={"format": "study"}, timeout=60)
    assert queued.status_code in (201, 202), queued.text
    job = finished(admin, f"{api}/export-jobs/{queued.json()['id']}/")
    assert job["status"] == "done", job
    file = admin.get(f"{api}/export-jobs/{job['id']}/file/", timeout=60)
    assert file.status_code == 200
    assert file.content  # the study CSV, written by a query through the pooler


def finished(session: requests.Session, url: str, timeout: float = 60) -> dict:
    """Poll a job until it is done or failed (Celery runs eagerly here: usually at once)."""
    deadline = time.monotonic() + timeout
    while True:
        job = session.get(url, timeout=30).json()
        if job["status"] in ("done", "failed") or time.monotonic() > deadline:
            return job
        time.sleep(0.2)
