"""Links to what a forge named: {% load forge_links %} then <a {{ issue.url|forge_href }} …>.

URLs from GitHub and Gitee are untrusted input. Harvesting stores only http(s) URLs, and this
filter checks again when rendering, so a row stored before that check (a `javascript:` html_url)
still never becomes a link."""

from django import template
from django.utils.html import format_html
from django.utils.safestring import SafeString

from ingest.issue_refs import web_url
from ingest.models import RunStatus

register = template.Library()


@register.filter
def forge_href(value: object) -> SafeString | str:
    """`href="…"` (escaped) for an absolute http(s) URL; nothing at all for anything else, so the
    anchor is plain text instead of a link."""
    url = web_url(value)
    return format_html('href="{}"', url) if url else ""


@register.filter
def run_status_name(status: str) -> str:
    """ "waiting" -> "Waiting to go on", in the reader's language."""
    return str(RunStatus(status).label) if status in RunStatus.values else status
