"""Template helpers of the volunteer pages: {% load labeling_tags %}."""

from django import template
from django.utils.translation import gettext as _

from annotation.access import user_role
from annotation.blindness import BLIND, stage_seen
from annotation.labeling.eligibility import is_editable
from annotation.labeling.selectors import volunteer_progress
from annotation.models import Role, Stage
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


@register.simple_tag
def seen_stage(item, project, user) -> str:
    """{% seen_stage item project user %}: the stage this viewer may see (labeling.eligibility
    stage_seen); before the item is revealed a volunteer sees "labeling" while it takes labels
    and "complete" once it has them, never whether the others agreed."""
    stage = stage_seen(item, project, user_role(user, project))
    if stage != BLIND:
        return str(Stage(stage).label).lower()
    return _("labeling") if is_editable(item) else _("complete")


@register.filter
def stage_name(stage: str) -> str:
    """ "screening_dispute" -> "Screening dispute", in the reader's language."""
    return str(Stage(stage).label) if stage in Stage.values else stage


@register.filter
def role_name(role: str) -> str:
    """ "lead" -> "Lead annotator", in the reader's language."""
    return str(Role(role).label) if role in Role.values else role


@register.filter
def percent(value) -> str:
    """0.1234 -> "12.3%"; None -> "—"."""
    if value is None:
        return "\u2014"
    return f"{100 * value:.1f}%"
