"""Mark matched keywords in HTML that rendering.markdown_to_html already sanitized.

Only text between tags is touched: each text run is unescaped, searched with the same matcher
that made the issue a candidate (ingest.keywords), and escaped again around the inserted
`<mark class="kw">` elements. Tags and attributes pass through unchanged, so no markup the
sanitizer removed can come back.
"""

from __future__ import annotations

import html
import re
from collections.abc import Iterable

from ingest.keywords import KeywordMatcher, marked_html

# A tag as nh3 serializes it: attribute values are always double-quoted and may contain ">".
TAG = re.compile(r'(<(?:[^>"]|"[^"]*")*>)')


def highlight_keywords(safe_html: str, keywords: Iterable[str]) -> str:
    matcher = KeywordMatcher(keywords)
    if not matcher.keywords or not safe_html:
        return safe_html
    out = []
    for i, part in enumerate(TAG.split(safe_html)):
        if i % 2 == 1 or not part:  # odd parts are tags
            out.append(part)
            continue
        text = html.unescape(part)
        out.append(marked_html(text, matcher.spans(text)))
    return "".join(out)


def highlight_text(text: str, keywords: Iterable[str]) -> str:
    """Plain text (an issue title) to safe HTML with the keywords marked."""
    return highlight_keywords(html.escape(text or "", quote=False), keywords)
