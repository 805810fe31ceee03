"""{% load report_words %}: the reports' words in the reader's language (reporting.words)."""

from django import template

from annotation.reporting import words

register = template.Library()


@register.filter
def band_name(band: str) -> str:
    """{{ cell.fleiss.band|band_name }}: "almost perfect" in the reader's language."""
    return words.band_name(band)


@register.filter
def group_name(group: str) -> str:
    """{{ g.group|group_name }}: "All items" in the reader's language, other groups as named."""
    return words.group_name(group)


@register.filter
def level_name(level: str) -> str:
    """{{ cell.level|level_name }}: "subtheme" -> "sub-theme", in the reader's language."""
    return words.level_name(level)
