"""Untrusted Markdown (issue bodies, comments, discussion posts, guidelines) to safe HTML.

Markdown is converted first and the HTML is then cleaned by nh3 with an allow-list, so whatever the
Markdown produced (raw HTML passes through the converter untouched) only harmless tags,
attributes and http(s)/mailto links survive. Links get rel="nofollow noopener noreferrer" and open
in a new tab.
Images become links naming their alt text and host: the page never fetches a third-party image by
itself (it would tell that host who reads the issue, and when), yet the reader sees one is there.

The converter is cmark-gfm (cmarkgfm), the C library GitHub renders issues with: tables,
strikethrough, autolinks and fenced code as the tracker shows them, and a line break in the text is
a line break on the page, as in GitHub's issues. It converts a typical issue body in about 0.01 ms
where Python-Markdown took 0.3 ms, and every item a volunteer opens is converted (issue #31).
"""

from __future__ import annotations

import html
import re
from urllib.parse import urlsplit

import cmarkgfm
import nh3
from cmarkgfm.cmark import Options

ALLOWED_TAGS = {
    "a", "abbr", "b", "blockquote", "br", "code", "del", "details", "em", "h1", "h2", "h3", "h4",
    "h5", "h6", "hr", "i", "kbd", "li", "ol", "p", "pre", "s", "strong", "sub", "summary", "sup",
    "table", "tbody", "td", "th", "thead", "tr", "ul", "mark", "img",
}  # fmt: skip
ALLOWED_ATTRIBUTES = {
    "a": {"href", "title"},
    "abbr": {"title"},
    "code": {"class"},  # language-xxx from fenced blocks
    "td": {"align"},
    "th": {"align"},
    "mark": {"class"},
    "img": {"src", "alt"},  # made a link by _image_links, never left as an image
}
URL_SCHEMES = {"http", "https", "mailto"}
# HARDBREAKS: a newline inside a paragraph is a <br>, as on GitHub. UNSAFE: raw HTML (an issue
# template's <details>) reaches nh3, which alone decides what of it stays.
CMARK_OPTIONS = Options.CMARK_OPT_HARDBREAKS | Options.CMARK_OPT_UNSAFE
# GitHub's extensions but its task lists, whose checkboxes nh3 would drop along with the "[ ]" a
# reader should see. Fenced code keeps its language as <code class="language-x">.
CMARK_EXTENSIONS = ("table", "autolink", "tagfilter", "strikethrough")


def markdown_to_html(text: str) -> str:
    """Safe HTML for `text`; the result may be marked safe in a template."""
    if not text:
        return ""
    converted = cmarkgfm.markdown_to_html_with_extensions(
        text, options=CMARK_OPTIONS, extensions=CMARK_EXTENSIONS
    ).rstrip("\n")
    cleaned = nh3.clean(
        converted,
        tags=ALLOWED_TAGS,
        attributes=ALLOWED_ATTRIBUTES,
        url_schemes=URL_SCHEMES,
        link_rel="nofollow noopener noreferrer",
        set_tag_attribute_values={"a": {"target": "_blank"}},
        strip_comments=True,
    )
    return _image_links(cleaned)


# An <img> as nh3 serializes it: attribute values double-quoted (and may contain ">").
IMAGE = re.compile(r'<img((?:[^>"]|"[^"]*")*)>')
ATTRIBUTE = re.compile(r'([a-z]+)="([^"]*)"')
INLINE_CODE = re.compile(r"`([^`]+)`")


def _image_links(safe_html: str) -> str:
    """Each image of nh3's output as a link to it, labeled with its alt text and host."""

    def link(match: re.Match) -> str:
        attributes = dict(ATTRIBUTE.findall(match.group(1)))
        src = html.unescape(attributes.get("src", ""))
        alt = " ".join(html.unescape(attributes.get("alt", "")).split()) or "image"
        parts = urlsplit(src)
        host = parts.hostname or ""
        label = html.escape(f"{alt} ({host})" if host else alt, quote=False)
        if parts.scheme not in ("http", "https") or not host:  # relative, or dropped by nh3
            return f'<span class="image-link">{label}</span>'
        return (
            f'<a class="image-link" href="{html.escape(src)}" target="_blank" '
            f'rel="nofollow noopener noreferrer">{label}</a>'
        )

    return IMAGE.sub(link, safe_html)


def title_to_html(title: str) -> str:
    """An issue title (plain text) as safe HTML, `inline code` as code, as the trackers show it."""
    escaped = html.escape(title or "", quote=False)
    return INLINE_CODE.sub(r"<code>\1</code>", escaped)
