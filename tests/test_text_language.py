"""Text in the other language than the interface's carries a `lang` (WCAG 3.1.2, issue #32):
Chinese issue text in the English interface, English issue text and category names in the
Chinese one, so that a screen reader reads each with the right voice. One rule decides which
language a text is in (concord.text_language); the pages and the labeling API ask it."""

from __future__ import annotations

import re

import pytest
from django.test import Client
from django.utils import translation

from concord.text_language import CHINESE, ENGLISH, foreign_language, text_language
from taxonomy.models import Node
from tests.annotation.labeling_helpers import items
from tests.test_role_matrix import disputed_item

CHINESE_TITLE = "训练时显存溢出 when using fp16"
CHINESE_BODY = "使用 `--fp16` 训练时显存溢出。\n\n```\nRuntimeError: NPU out of memory.\n```"


@pytest.mark.parametrize(
    ("text", "language"),
    [
        (CHINESE_TITLE, CHINESE),
        ("Support 昇腾 NPU in the trainer", ENGLISH),
        ("MindSpeed-LLM 训练 Qwen2 报错 RuntimeError: NPU out of memory", CHINESE),
        ("A.1 安装指引不清 · Unclear Installation Guidance", CHINESE),  # a category in Chinese
        ("Loss spikes with bf16", ENGLISH),
        ("", ENGLISH),
        (None, ENGLISH),
        # A Chinese report around a long English log is still Chinese: code does not count.
        (CHINESE_BODY + "\n```\n" + "at torch.nn.functional line 12 in forward\n" * 40, CHINESE),
    ],
)
def test_text_language_names_the_language_that_carries_the_text(text, language):
    assert text_language(text) == language


def test_foreign_language_is_empty_for_text_in_the_interface_language():
    assert foreign_language(CHINESE_TITLE) == CHINESE
    assert foreign_language("Loss spikes") == ""
    with translation.override("zh-hans"):
        assert foreign_language(CHINESE_TITLE) == ""
        assert foreign_language("Loss spikes") == ENGLISH


def client_in(language: str, user) -> Client:
    client = Client(HTTP_ACCEPT_LANGUAGE=language)
    client.force_login(user)
    return client


def element(html: str, pattern: str) -> str:
    """The first opening tag matching `pattern` (a regex) with what follows up to its end."""
    found = re.search(pattern, html, re.DOTALL)
    assert found, f"{pattern} not in the page"
    return found.group(0)


def test_labeling_page_marks_chinese_issue_text_in_the_english_interface(project, personas):
    (item,) = items(project, 1)
    item.issue.title, item.issue.body = CHINESE_TITLE, CHINESE_BODY
    item.issue.save()
    page = client_in("en", personas["volunteer_a"]).get(f"/projects/{project.slug}/label/")
    html = page.content.decode()
    assert re.search(r'<html lang="en"', html)
    title = element(html, r'<h1 id="issue-title"[^>]*>.*?</h1>')
    assert '<span lang="zh-Hans">' in title
    assert "训练时显存溢出" in title
    body = element(html, r'<div class="markdown issue-text" id="issue-body">\s*<div lang="[^"]+"')
    assert body.endswith('lang="zh-Hans"')


def test_the_next_item_from_the_api_carries_its_language_too(project, personas):
    """The labeling page's script shows the items after the first from this payload."""
    (item,) = items(project, 1)
    item.issue.title, item.issue.body = CHINESE_TITLE, CHINESE_BODY
    item.issue.save()
    client = client_in("en", personas["volunteer_a"])
    answer = client.post(
        f"/api/projects/{project.slug}/next-item/", {}, content_type="application/json"
    )
    assert answer.status_code == 200
    assert answer.json()["title_html"].startswith('<span lang="zh-Hans">')
    assert answer.json()["body_html"].startswith('<div lang="zh-Hans">')


def test_english_issue_text_in_the_english_interface_has_no_lang_of_its_own(project, personas):
    items(project, 1)  # the factory's English title and body
    html = client_in("en", personas["volunteer_a"]).get(f"/projects/{project.slug}/label/")
    title = element(html.content.decode(), r'<h1 id="issue-title"[^>]*>.*?</h1>')
    assert "lang=" not in title


def test_resolve_page_marks_english_issue_text_in_the_chinese_interface(project, personas):
    pk = disputed_item(project, personas)
    lead = client_in("zh-hans", personas["lead"])
    page = lead.get(f"/projects/{project.slug}/items/{pk}/resolve/")
    html = page.content.decode()
    assert re.search(r'<html lang="zh-hans"', html)
    assert re.search(r'<h1 lang="en">Loss spikes', html)
    assert re.search(r'<div class="issue-body" lang="en">', html)


def test_taxonomy_marks_a_category_without_a_chinese_name_in_the_chinese_interface(
    study_taxonomy, personas
):
    Node.objects.create(
        taxonomy=study_taxonomy, code="Z", name="Licensing questions", level="type", position=99
    )
    html = client_in("zh-hans", personas["volunteer_a"]).get(f"/taxonomy/{study_taxonomy.pk}/")
    html = html.content.decode()
    assert re.search(r'<span class="name" id="node-name-\d+" lang="en">Licensing questions<', html)
    # A category with its Chinese name shown first reads as Chinese, like the page.
    named = study_taxonomy.nodes.exclude(name_zh="").first()
    assert re.search(rf'<span class="name" id="node-name-\d+">{re.escape(named.name_zh)} · ', html)
