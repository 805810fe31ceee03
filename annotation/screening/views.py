"""The screening pages: volunteers vote whether a keyword candidate is relevant; the lead lists
the screening disputes and settles them. Each view checks access, calls one service, and shows a
ConcordError's message (POST-redirect-GET)."""

from __future__ import annotations

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.paginator import Paginator
from django.shortcuts import redirect, render
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy
from django.views.decorators.http import require_GET, require_POST

from annotation.access import access_project, project_item
from annotation.labeling.selectors import item_view, volunteer_progress
from annotation.models import Role
from annotation.screening.services import (
    screening_decide,
    screening_disputes,
    screening_next_claim,
    screening_stats,
    screening_vote,
)
from concord.errors import ConcordError

SCREEN_KEYS = [
    ("r", gettext_lazy("relevant")),
    ("n", gettext_lazy("not relevant")),
    ("Enter", gettext_lazy("send the vote (an optional reason first)")),
]
DISPUTES_PER_PAGE = 25


@login_required
@require_GET
def screen_next(request, slug: str):
    project = access_project(request.user, slug)
    claim = screening_next_claim(project=project, volunteer=request.user)
    progress = volunteer_progress(project=project, volunteer=request.user)
    context: dict[str, object]
    if claim.item is None:
        context = {
            "project": project,
            "reason": claim.reason,
            "message": claim.message,
            "progress": progress,
            "mode": "screen",
        }
        return render(request, "labeling/empty.html", context)
    view = item_view(item=claim.item, project=project, viewer=request.user)
    context = {
        "project": project,
        "view": view,
        "issue": claim.item.issue,
        "progress": progress,
        "stats": screening_stats(project),
        "keys": SCREEN_KEYS,
    }
    return render(request, "labeling/screen.html", context)


@login_required
@require_POST
def screen_vote(request, slug: str, item_id: int):
    project = access_project(request.user, slug)
    item = project_item(project, item_id)
    verdict = request.POST.get("verdict")
    if verdict not in ("relevant", "irrelevant"):
        messages.error(request, _("Choose Relevant (r) or Not relevant (n)."))
        return redirect("screen-next", slug=project.slug)
    try:
        screening_vote(
            item=item,
            volunteer=request.user,
            relevant=verdict == "relevant",
            reason=request.POST.get("reason", ""),
        )
    except ConcordError as exc:
        messages.error(request, exc.message)
    else:
        word = _("relevant") if verdict == "relevant" else _("not relevant")
        messages.success(
            request, _("Screened %(issue)s: %(verdict)s.") % {"issue": item.issue, "verdict": word}
        )
    return redirect("screen-next", slug=project.slug)


@login_required
@require_GET
def screening_disputes_page(request, slug: str):
    project = access_project(request.user, slug, at_least=Role.LEAD)
    page = Paginator(screening_disputes(project), DISPUTES_PER_PAGE).get_page(
        request.GET.get("page")
    )
    context = {"project": project, "page": page, "stats": screening_stats(project)}
    return render(request, "labeling/screening_disputes.html", context)


@login_required
@require_POST
def screening_decide_view(request, slug: str, item_id: int):
    project = access_project(request.user, slug, at_least=Role.LEAD)
    item = project_item(project, item_id)
    decision = request.POST.get("decision")
    if decision not in ("open", "exclude"):
        messages.error(request, _("Choose Open for labeling or Exclude."))
        return redirect("screening-disputes", slug=project.slug)
    try:
        screening_decide(
            item=item,
            lead=request.user,
            relevant=decision == "open",
            reason=request.POST.get("reason", ""),
        )
    except ConcordError as exc:
        messages.error(request, exc.message)
    else:
        if decision == "open":
            done = _("%(issue)s opened for labeling.") % {"issue": item.issue}
        else:
            done = _("%(issue)s excluded.") % {"issue": item.issue}
        messages.success(request, done)
    return redirect("screening-disputes", slug=project.slug)
