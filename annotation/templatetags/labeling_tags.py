"""Template helpers of the volunteer pages: {% load labeling_tags %}."""

from django import template

from annotation.labeling.selectors import volunteer_progress
from annotation.screening.services import screening_stats

register = template.Library()


@register.simple_tag
def labeling_progress(project, user):
    """{% labeling_progress project user as progress %}: my labels, what waits for me, the
    project's progress (annotation.labeling.selectors.volunteer_progress)."""
    return volunteer_progress(project=project, volunteer=user)


@register.simple_tag
def project_screening_stats(project):
    """{% project_screening_stats project as stats %}: screened, excluded, false-positive rate."""
    return screening_stats(project)


@register.filter
def percent(value) -> str:
    """0.1234 -> "12.3%"; None -> "—"."""
    if value is None:
        return "\u2014"
    return f"{100 * value:.1f}%"
