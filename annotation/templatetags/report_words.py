"""{% load report_words %}: the reports' words in the reader's language (reporting.words)."""

from django import template

from annotation.reporting import words

register = template.Library()


@register.filter
def band_name(band: str) -> str:
    """{{ cell.fleiss.band|band_name }}: "almost perfect" in the reader's language."""
    return words.band_name(band)
