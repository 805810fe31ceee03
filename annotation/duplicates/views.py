"""The lead's near-duplicate pages: the consistency queue (pairs whose final labels differ, and
items an intake added that repeat earlier ones), a pair side by side, "not a duplicate", rebuild."""

from __future__ import annotations

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.shortcuts import redirect, render
from django.utils.translation import gettext as _
from django.views.decorators.http import require_POST

from annotation.access import access_project, no_such_item, project_item
from annotation.duplicates.compare import side_by_side
from annotation.duplicates.index import duplicate_index_current, duplicate_index_queue
from annotation.duplicates.selectors import (
    duplicate_counts,
    pair_of,
    pairs_at_intake,
    pairs_inconsistent,
)
from annotation.duplicates.services import pair_mark_not_duplicate
from annotation.models import DuplicateIndex, Role
from concord.errors import ConcordError

LISTED = 200  # pairs per list on the page; the API and the command give them all


@login_required
def duplicates_page(request, slug: str):
    project = access_project(request.user, slug, at_least=Role.LEAD)
    context = {
        "project": project,
        "counts": duplicate_counts(project),
        "inconsistent": pairs_inconsistent(project)[:LISTED],
        "at_intake": pairs_at_intake(project)[:LISTED],
        "current": duplicate_index_current(project),
        "latest": DuplicateIndex.objects.filter(project=project).first(),
    }
    return render(request, "duplicates/duplicates_queue.html", context)


@login_required
def duplicate_compare_page(request, slug: str, a: int, b: int):
    project = access_project(request.user, slug, at_least=Role.LEAD)
    pair = pair_of(project, a, b)
    if pair is None:
        raise no_such_item()
    left, right = side_by_side(
        project_item(project, pair.item_a_id),
        project_item(project, pair.item_b_id),
        duplicate_index_current(project),
    )
    context = {"project": project, "pair": pair, "sides": [left, right]}
    return render(request, "duplicates/duplicate_compare.html", context)


@require_POST
@login_required
def not_duplicate_page(request, slug: str, a: int, b: int):
    project = access_project(request.user, slug, at_least=Role.LEAD)
    pair = pair_of(project, a, b)
    if pair is None:
        raise no_such_item()
    try:
        pair_mark_not_duplicate(project=project, actor=request.user, pair=pair)
    except ConcordError as exc:
        messages.error(request, exc.message)
    else:
        messages.success(request, _("Marked not duplicates: the pair leaves the lists."))
    return redirect("duplicates", slug=project.slug)


@require_POST
@login_required
def duplicate_rebuild_page(request, slug: str):
    project = access_project(request.user, slug, at_least=Role.LEAD)
    try:
        duplicate_index_queue(project=project, actor=request.user)
    except ConcordError as exc:
        messages.error(request, exc.message)
    else:
        messages.success(request, _("The index is being rebuilt in the background."))
    return redirect("duplicates", slug=project.slug)
