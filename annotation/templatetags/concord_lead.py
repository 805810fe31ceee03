"""Template helpers of the lead pages: the lead panel's numbers and readable audit values."""

from __future__ import annotations

from django import template
from django.utils.translation import gettext_lazy

from annotation.models import Action, AuditEvent, Project, ProposalStatus, Stage
from annotation.review.proposals import reason_seen

register = template.Library()
RECENT_DECISIONS = 5


@register.simple_tag
def lead_summary(project: Project) -> dict:
    """What the lead panel shows: a few counts and the latest decisions (four small queries)."""
    return {
        "disputed": project.items.filter(stage=Stage.DISPUTED).count(),
        "open_proposals": project.proposals.filter(status=ProposalStatus.OPEN).count(),
        "accepted_proposals": project.proposals.filter(status=ProposalStatus.ACCEPTED).count(),
        "recent": AuditEvent.objects.filter(project=project, action=Action.RESOLVE)
        .select_related("actor", "item__issue")
        .order_by("-pk")[:RECENT_DECISIONS],
    }


# The audit rows' keys in the reader's language (the rows keep them in English, as written);
# a key not listed here shows as stored.
AUDIT_KEYS = {
    "stage": gettext_lazy("stage"),
    "agreement": gettext_lazy("agreement"),
    "node": gettext_lazy("category"),
    "reason": gettext_lazy("reason"),
    "status": gettext_lazy("status"),
    "proposal": gettext_lazy("proposal"),
    "relevant": gettext_lazy("relevant"),
    "member": gettext_lazy("member"),
    "role": gettext_lazy("role"),
    "removed": gettext_lazy("removed"),
    "archived": gettext_lazy("archived"),
    "joined": gettext_lazy("joined"),
}
STAGE_WORDS = dict(Stage.choices)


def _pair(key: str, value) -> str:
    shown = STAGE_WORDS.get(value, value) if key == "stage" else value
    return f"{AUDIT_KEYS.get(key, key)} {_value(shown)}"


def _value(value) -> str:
    if isinstance(value, list):
        return "; ".join(_value(v) for v in value) or str(gettext_lazy("none"))
    if isinstance(value, dict):
        return ", ".join(_pair(k, v) for k, v in value.items() if v not in (None, ""))
    return str(value)


@register.filter
def audit_text(value) -> str:
    """{"stage": "final", "node": "C.1"} -> "stage final · node C.1"; empty for nothing."""
    if not value:
        return ""
    if isinstance(value, dict):
        return " · ".join(_pair(k, v) for k, v in value.items() if v not in (None, ""))
    return _value(value)


@register.simple_tag
def proposal_reason(proposal, user) -> str:
    """{% proposal_reason p user %}: the reason as this viewer may read it (review.proposals)."""
    return reason_seen(proposal, user)
