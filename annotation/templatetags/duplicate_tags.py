"""The near-duplicate facts on the project page's lead panel: pairs whose final labels differ,
and added items that repeat items already in the project (said at intake, for the admin to
decide whether both are labeled)."""

from django import template

from annotation.duplicates.selectors import pairs_at_intake, pairs_inconsistent
from annotation.models import Project

register = template.Library()


@register.simple_tag
def duplicate_facts(project: Project) -> dict[str, int]:
    return {
        "inconsistent": pairs_inconsistent(project).count(),
        "at_intake": pairs_at_intake(project).count(),
    }
