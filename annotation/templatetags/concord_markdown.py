from django import template
from django.utils.safestring import mark_safe

from annotation.rendering import markdown_to_html

register = template.Library()


@register.filter
def markdown(text: str) -> str:
    """{{ issue.body|markdown }}: untrusted Markdown, rendered and sanitized."""
    return mark_safe(markdown_to_html(text))  # noqa: S308 - nh3 cleaned it with an allow-list
