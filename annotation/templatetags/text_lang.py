"""{% load text_lang %}: the language of issue text and category names shown on a page, where it
is not the page's (concord.text_language):

    <h1{{ issue.title|lang_attr }}>{{ issue.title }}</h1>    a lang attribute, or nothing
    {{ node.shown_name|in_lang }}    the text, in a <span lang> if it is foreign
"""

from django import template
from django.utils.html import format_html
from django.utils.safestring import SafeString, mark_safe

from concord.text_language import foreign_language, text_in_its_language

register = template.Library()


@register.filter
def lang_attr(value) -> SafeString:
    """' lang="zh-Hans"' (or "en") when `value` is in the other language than the page's, else
    nothing: for the element that shows `value`."""
    language = foreign_language(str(value) if value is not None else "")
    return format_html(' lang="{}"', language) if language else mark_safe("")


@register.filter
def in_lang(value) -> SafeString:
    """`value`, escaped, inside <span lang="…"> when it is in the other language than the
    page's; escaped alone otherwise."""
    return mark_safe(text_in_its_language(str(value) if value is not None else ""))  # noqa: S308
