"""The Chinese catalog is complete and current: every message translated, none fuzzy, and the
catalog holds exactly the messages the templates and code mark today (makemessages run again
into a copy of the sources must find the same msgids)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import polib
import pytest
from django.conf import settings
from django.utils import translation

CATALOG = Path(settings.BASE_DIR) / "locale" / "zh_Hans" / "LC_MESSAGES" / "django.po"
# What makemessages reads: the apps, the settings package and the templates (the Makefile's
# `make messages` runs the same command on the worktree).
SOURCES = ("annotation", "concord", "ingest", "taxonomy", "templates", "manage.py")
MAKEMESSAGES = ["makemessages", "-l", "zh_Hans", "--no-obsolete", "--extension", "html,txt,py,svg"]


def msg_key(entry: polib.POEntry) -> tuple[str | None, str, str | None]:
    return entry.msgctxt, entry.msgid, entry.msgid_plural or None


def test_every_message_is_translated_and_none_is_fuzzy():
    catalog = polib.pofile(str(CATALOG))
    assert catalog.metadata.get("Plural-Forms", "").startswith("nplurals=1;")  # Chinese: one form
    fuzzy = [e.msgid for e in catalog.fuzzy_entries()]
    untranslated = [e.msgid for e in catalog.untranslated_entries()]
    obsolete = [e.msgid for e in catalog.obsolete_entries()]
    assert not fuzzy, f"fuzzy in {CATALOG.name}: {fuzzy}"
    assert not untranslated, f"untranslated in {CATALOG.name}: {untranslated}"
    assert not obsolete, f"obsolete in {CATALOG.name} (run `make messages`): {obsolete}"
    assert len(catalog) > 500


def test_catalog_matches_the_messages_marked_in_templates_and_code(tmp_path):
    copy = tmp_path / "src"
    for name in SOURCES:
        source = Path(settings.BASE_DIR) / name
        if source.is_dir():
            shutil.copytree(
                source, copy / name, ignore=shutil.ignore_patterns("data", "__pycache__")
            )
        else:
            shutil.copy(source, copy / name)
    (copy / "locale").mkdir()
    env = {**os.environ, "DEBUG": "1", "CONCORD_VAR_DIR": str(tmp_path / "var")}
    subprocess.run(
        [sys.executable, "manage.py", *MAKEMESSAGES],
        cwd=copy,
        env=env,
        check=True,
        capture_output=True,
    )
    fresh = {msg_key(e) for e in polib.pofile(str(copy / CATALOG.relative_to(settings.BASE_DIR)))}
    committed = {msg_key(e) for e in polib.pofile(str(CATALOG))}
    assert not fresh - committed, (
        f"marked but not in the catalog (run `make messages`): {fresh - committed}"
    )
    assert not committed - fresh, f"in the catalog but no longer marked: {committed - fresh}"


@pytest.mark.parametrize(
    ("msgid", "chinese"),
    [("Start labeling", "开始标注"), ("Disputed items", "有分歧的条目"), ("Sign out", "退出登录")],
)
def test_compiled_catalog_is_what_django_reads(msgid, chinese):
    """The .mo (built by `make setup`) is present and current: Django answers in Chinese."""
    mo = CATALOG.with_suffix(".mo")
    assert mo.exists(), "locale/zh_Hans/LC_MESSAGES/django.mo is missing: run `make setup`"
    assert mo.stat().st_mtime >= CATALOG.stat().st_mtime, (
        "django.mo is older than django.po: run `make setup`"
    )
    with translation.override("zh-hans"):
        assert translation.gettext(msgid) == chinese


def test_language_switch_is_a_csrf_checked_post_and_is_remembered(db, personas):
    """The top bar's switch (set_language): refused without the form's CSRF token; with it the
    cookie is set and the next page comes in Chinese, although the browser asks for English."""
    from django.test import Client

    browser = Client(enforce_csrf_checks=True, headers={"accept-language": "en-US"})
    browser.force_login(personas["volunteer_a"])
    home = browser.get("/")
    assert 'lang="en"' in home.text
    assert 'name="language" value="zh-hans"' in home.text  # the switch offers the other language

    forged = browser.post("/i18n/setlang/", {"language": "zh-hans", "next": "/"})
    assert forged.status_code == 403
    assert settings.LANGUAGE_COOKIE_NAME not in forged.cookies

    token = browser.cookies[settings.CSRF_COOKIE_NAME].value
    switched = browser.post(
        "/i18n/setlang/", {"language": "zh-hans", "next": "/", "csrfmiddlewaretoken": token}
    )
    assert switched.status_code == 302
    assert switched.cookies[settings.LANGUAGE_COOKIE_NAME].value == "zh-hans"
    page = browser.get("/")
    assert 'lang="zh-hans"' in page.text
    assert "我的项目" in page.text


def test_browser_language_picks_the_interface_and_api_refusals(db, personas, project):
    """No cookie: Accept-Language decides, for pages and for the API's `detail` refusals."""
    from django.test import Client

    from annotation.models import Stage
    from annotation.projects.demo import demo_items_load

    demo_items_load(project=project, path=settings.DEMO_DATA_DIR / "issues-zh.json")
    item = project.items.filter(stage=Stage.OPEN).first()
    chinese = Client(headers={"accept-language": "zh-CN,zh;q=0.9"})
    chinese.force_login(personas["volunteer_a"])
    assert "开始标注" in chinese.get(f"/projects/{project.slug}/").text
    refusal = chinese.put(
        f"/api/projects/{project.slug}/items/{item.pk}/annotation/",
        {"node": "", "summary": "x"},
        content_type="application/json",
    )
    assert refusal.status_code >= 400
    detail = refusal.json()["detail"]
    assert any("\u4e00" <= ch <= "\u9fff" for ch in detail), detail
    english = Client()
    english.force_login(personas["volunteer_a"])
    assert "Start labeling" in english.get(f"/projects/{project.slug}/").text
