"""Which language a text is written in, for the `lang` attribute of text shown in the other
interface language (WCAG 3.1.2): Chinese issue text in the English interface, English issue text
and category names in the Chinese one, each read by a screen reader with the right voice.

Concord's data are Chinese and English (the study's trackers, its taxonomy with Chinese names),
so the answer is one of the two. Every page and payload that shows an issue's title, body or
comments, or a category's name, asks here: templates through the `text_lang` filters
(annotation/templatetags/text_lang.py), HTML built in Python through `in_its_language`."""

from __future__ import annotations

import re

from django.utils.html import escape

from taxonomy.models import reading_chinese

CHINESE = "zh-Hans"
ENGLISH = "en"

_HAN = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]")
_LATIN_WORD = re.compile(r"[A-Za-z]+")
# Markdown's code (fenced blocks, `inline`): logs and commands, English whatever the prose is.
_CODE = re.compile(r"```.*?(?:```|\Z)|~~~.*?(?:~~~|\Z)|`[^`\n]*`", re.DOTALL)


def text_language(text: str | None) -> str:
    """CHINESE when Chinese characters carry `text`, else ENGLISH. A Chinese character counts
    for two English words (a Chinese word is one to two characters), so "训练时显存溢出 when
    using fp16" is Chinese and "Support 昇腾 NPU in the trainer" English; code is not counted.
    A category shown as "中文名 · English name" is Chinese."""
    prose = _CODE.sub(" ", text or "")
    han = len(_HAN.findall(prose))
    if not han:
        return ENGLISH
    return CHINESE if 2 * han >= len(_LATIN_WORD.findall(prose)) else ENGLISH


def foreign_language(text: str | None) -> str:
    """`text`'s language where it is not the interface's (the page's <html lang>), else "": the
    lang attribute an element showing `text` needs, if any."""
    language = text_language(text)
    return "" if language == (CHINESE if reading_chinese() else ENGLISH) else language


def in_its_language(safe_html: str, text: str | None, *, tag: str = "span") -> str:
    """`safe_html` (escaped or sanitized already), the rendering of `text`, inside an element
    with `text`'s language where that is not the page's; as it is otherwise. For HTML built in
    Python that both a page and its script show (the labeling page's issue)."""
    language = foreign_language(text)
    if not safe_html or not language:
        return safe_html
    return f'<{tag} lang="{language}">{safe_html}</{tag}>'


def text_in_its_language(text: str | None) -> str:
    """Plain `text` as safe HTML, in a <span lang> where its language is not the page's."""
    return in_its_language(escape(text or ""), text)
