"""Untrusted Markdown (issue bodies, comments, discussion posts, guidelines) to safe HTML.

Markdown is converted first and the HTML is then cleaned by nh3 with an allow-list, so whatever the
Markdown produced (raw HTML passes through Markdown untouched) only harmless tags, attributes and
http(s)/mailto links survive. Links get rel="nofollow noopener noreferrer" and open in a new tab.
"""

from __future__ import annotations

import threading

import markdown
import nh3

ALLOWED_TAGS = {
    "a", "abbr", "b", "blockquote", "br", "code", "del", "details", "em", "h1", "h2", "h3", "h4",
    "h5", "h6", "hr", "i", "kbd", "li", "ol", "p", "pre", "s", "strong", "sub", "summary", "sup",
    "table", "tbody", "td", "th", "thead", "tr", "ul", "mark",
}  # fmt: skip
ALLOWED_ATTRIBUTES = {
    "a": {"href", "title"},
    "abbr": {"title"},
    "code": {"class"},  # language-xxx from fenced blocks
    "td": {"align"},
    "th": {"align"},
    "mark": {"class"},
}
URL_SCHEMES = {"http", "https", "mailto"}
EXTENSIONS = ["fenced_code", "tables", "sane_lists", "nl2br"]


_local = threading.local()


def _converter() -> markdown.Markdown:
    """This thread's Markdown converter: building one (its extensions and patterns) costs more
    than converting a typical issue body, and a converter is not safe to share between threads."""
    if not hasattr(_local, "converter"):
        _local.converter = markdown.Markdown(extensions=EXTENSIONS, output_format="html")
    return _local.converter


def markdown_to_html(text: str) -> str:
    """Safe HTML for `text`; the result may be marked safe in a template."""
    if not text:
        return ""
    html = _converter().reset().convert(text)
    return nh3.clean(
        html,
        tags=ALLOWED_TAGS,
        attributes=ALLOWED_ATTRIBUTES,
        url_schemes=URL_SCHEMES,
        link_rel="nofollow noopener noreferrer",
        set_tag_attribute_values={"a": {"target": "_blank"}},
        strip_comments=True,
    )
