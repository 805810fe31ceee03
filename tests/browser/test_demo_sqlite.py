"""The embedded demo as `make run` serves it, in a real chromium: `runserver` (threaded) on the
SQLite file under the var directory, no Redis (Celery eager), DEBUG on. Each demo volunteer labels
every item open to them from the keyboard as fast as the page takes it. After Enter the page sends
the label and asks for the next item at the same moment, two writes at once: SQLite refused one
save in four ("database is locked", "Not saved: 500") until settings.py set WAL, immediate write
transactions and a busy timeout. Every save must land.

The test talks only to its own server process (its own SQLite file in a temporary var directory);
it uses none of pytest-django's databases.
"""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from playwright.sync_api import Page, expect

from tests.browser.conftest import TIMEOUT_MS
from tests.browser.test_pages import scripts_ready, sign_in
from tests.stack import ROOT, free_port, wait_for

pytestmark = pytest.mark.browser

VOLUNTEERS = ("demo-volunteer-1", "demo-volunteer-2", "demo-volunteer-3")
# `make run` sets none of these: the demo runs on its SQLite default, locmem cache, eager Celery.
UNSET = ("DATABASE_URL", "REDIS_URL", "CACHE_URL", "CONN_MAX_AGE", "DJANGO_ALLOW_ASYNC_UNSAFE")
# Enter presses per volunteer at most: the demo opens 12 items; a refused save brings its item
# back, and labeling it again is one more press.
MAX_PRESSES = 30


@dataclass
class Demo:
    base_url: str
    var: Path
    passwords: dict[str, str]

    def labels_of(self, username: str) -> int:
        with sqlite3.connect(self.var / "concord.sqlite3", timeout=30) as db:
            (count,) = db.execute(
                "SELECT count(*) FROM annotation_annotation a JOIN auth_user u"
                " ON u.id = a.volunteer_id WHERE u.username = ?",
                (username,),
            ).fetchone()
        return count


def _answers(url: str) -> bool:
    try:
        with urllib.request.urlopen(url, timeout=2) as response:  # noqa: S310 (our own server)
            return response.status == 200
    except OSError:
        return False


@pytest.fixture(scope="module")
def demo(tmp_path_factory) -> Iterator[Demo]:
    var = tmp_path_factory.mktemp("demo-var")
    env = {k: v for k, v in os.environ.items() if k not in UNSET}
    env.update(
        DEBUG="1",
        PYTHONUNBUFFERED="1",
        CONCORD_VAR_DIR=str(var),
        DJANGO_SETTINGS_MODULE="concord.settings",
    )
    manage = [sys.executable, str(ROOT / "manage.py")]
    for command in (["migrate", "--noinput"], ["setup_demo"]):
        subprocess.run(manage + command, env=env, cwd=ROOT, check=True, capture_output=True)
    port = free_port()
    log = (var / "runserver.log").open("w")
    # As `make run`, without the autoreloader (a second process watching files, nothing more).
    server = subprocess.Popen(
        [*manage, "runserver", f"127.0.0.1:{port}", "--noreload"],
        env=env,
        cwd=ROOT,
        stdout=log,
        stderr=subprocess.STDOUT,
    )
    base_url = f"http://127.0.0.1:{port}"
    try:
        wait_for(lambda: _answers(f"{base_url}/accounts/login/"), 30, "runserver to answer")
        passwords = json.loads((var / "demo-credentials.json").read_text())
        yield Demo(base_url=base_url, var=var, passwords=passwords)
    finally:
        server.terminate()
        server.wait(timeout=10)
        log.close()


def label_everything(page: Page) -> tuple[int, list[str]]:
    """Label each item on screen with the keyboard (first type, first theme, a summary, Enter)
    until the page says nothing is left, moving on as soon as the server answers the label (the
    next item was asked for at the same moment). A refused label comes back on screen with its
    reason and is sent again. Returns the labels entered and the refusals."""
    refusals: list[str] = []
    presses = 0
    page.goto("/projects/demo/label/")
    scripts_ready(page)
    page.evaluate("document.activeElement && document.activeElement.blur()")
    summary = page.locator("#summary")
    error = page.locator("#label-error")
    while page.locator("#why-none").count() == 0:
        assert presses < MAX_PRESSES, f"still labeling after {presses} labels"
        item = page.locator("#issue").get_attribute("data-item")
        if not summary.evaluate("el => el === document.activeElement"):  # a refused one: ready
            page.keyboard.press("1")  # the first type
            page.keyboard.press("1")  # its first theme; the summary has the focus then
        expect(summary).to_be_focused()
        page.keyboard.type(f" label {presses}")
        with page.expect_response(lambda r: r.request.method == "PUT") as answer:
            page.keyboard.press("Enter")
        presses += 1
        if answer.value.status in (200, 201):
            # the next item (prefetched), or the page saying nothing is left
            expect(page.locator(f'#issue:not([data-item="{item}"]), #why-none')).not_to_have_count(
                0
            )
        else:
            expect(error).to_contain_text("Not saved")  # back on screen, with the reason
            refusals.append(f"item {item}: {error.inner_text().strip()}")
    return presses, refusals


def test_the_demo_takes_the_labeling_pages_own_concurrency_on_sqlite(browser, demo):
    failed: list[str] = []  # every API call the server answered with an error, saves or not
    entered: dict[str, int] = {}
    refused: dict[str, list[str]] = {}
    # setup_demo gives each volunteer a label already (on the item disputed for the lead)
    before = {username: demo.labels_of(username) for username in VOLUNTEERS}
    for username in VOLUNTEERS:
        context = browser.new_context(base_url=demo.base_url, locale="en-US")
        context.set_default_timeout(TIMEOUT_MS)
        page = context.new_page()
        page.on(
            "response",
            lambda r: failed.append(f"{r.request.method} {r.url} {r.status}")
            if "/api/" in r.url and r.status >= 400
            else None,
        )
        sign_in(page, username, demo.passwords[username])
        entered[username], refused[username] = label_everything(page)
        context.close()
    stored = {username: demo.labels_of(username) - before[username] for username in VOLUNTEERS}
    failed_saves = sum(len(r) for r in refused.values())
    print(f"\nlabels entered {entered}, stored {stored}; {failed_saves} saves failed")
    assert failed_saves == 0, f"{failed_saves} of {sum(entered.values())} saves failed: {refused}"
    assert stored == entered  # each label entered is stored, once
    assert all(entered.values())
    assert failed == [], f"{len(failed)} API calls failed: {failed}"
