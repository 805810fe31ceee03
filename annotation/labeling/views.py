"""The volunteer's labeling pages: label the next item, skip it, edit my labels. Each view checks
access, calls one service, and shows a ConcordError's message beside the form
(POST-redirect-GET on success)."""

from __future__ import annotations

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.paginator import Paginator
from django.http import Http404
from django.shortcuts import redirect, render
from django.urls import NoReverseMatch, reverse
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy
from django.views.decorators.http import require_GET, require_http_methods, require_POST

from annotation.access import access_project, project_item
from annotation.labeling.assignment import item_skip, next_item_claim
from annotation.labeling.eligibility import is_editable
from annotation.labeling.selectors import (
    access_item_for_labeling,
    item_view,
    my_annotations,
    volunteer_progress,
)
from annotation.labeling.services import annotation_submit, label_node
from annotation.models import Annotation, Item, Project, Stage
from annotation.project_nodes import foreign_node_ids
from concord.errors import ConcordError, Conflict
from taxonomy.selectors import label_picker, picker_levels

LABEL_KEYS = [
    ("1\u20139", gettext_lazy("choose a category at this level and go one level down")),
    ("Backspace", gettext_lazy("go up a level")),
    ("/", gettext_lazy("search the categories (Enter takes the first match)")),
    ("Enter", gettext_lazy("submit (in the summary)")),
    ("s", gettext_lazy("skip this item (asks why)")),
]
MY_LABELS_PER_PAGE = 25


def reverse_or_none(name: str, *args) -> str | None:
    """A URL of another part of Concord that may not be installed yet (the lead's pages)."""
    try:
        return reverse(name, args=args)
    except NoReverseMatch:
        return None


def _label_context(request, project: Project, item: Item, **extra) -> dict:
    view = item_view(item=item, project=project, viewer=request.user)
    mine = view.mine
    proposal = reverse_or_none("proposal-new", project.slug)
    form = {
        "node": mine.node.code if mine else "",
        "summary": mine.summary if mine else "",
        "version": mine.version if mine else "",
    }
    form.update(extra.pop("form", {}))
    return {
        "project": project,
        "view": view,
        "issue": item.issue,
        "levels": picker_levels(
            label_picker(project.taxonomy, project.label_depth, exclude=foreign_node_ids(project))
        ),
        "keys": LABEL_KEYS,
        "progress": volunteer_progress(project=project, volunteer=request.user, waiting=False),
        "form": form,
        "editable": is_editable(item),
        "proposal_url": f"{proposal}?item={item.pk}" if proposal else None,
        "discussion_url": reverse_or_none("item-discussion", project.slug, item.pk)
        if view.revealed
        else None,
        **extra,
    }


@login_required
@require_GET
def label_next(request, slug: str):
    """The next item to label (a reload resumes the same one), or why there is none."""
    project = access_project(request.user, slug)
    claim = next_item_claim(project=project, volunteer=request.user)
    if claim.item is None:
        context = {
            "project": project,
            "reason": claim.reason,
            "message": claim.message,
            "progress": volunteer_progress(project=project, volunteer=request.user),
            "mode": "label",
        }
        return render(request, "labeling/empty.html", context)
    context = _label_context(request, project, claim.item, expires_at=claim.expires_at)
    return render(request, "labeling/label.html", context)


@login_required
@require_http_methods(["GET", "POST"])
def label_item(request, slug: str, item_id: int):
    """GET: an item I hold or labeled (to edit, or to see the others' labels once revealed).
    POST: submit or edit my label; a repeat is harmless, a stale edit is refused (409)."""
    project = access_project(request.user, slug)
    if request.method == "GET":
        access = access_item_for_labeling(project=project, item_id=item_id, viewer=request.user)
        if access is None:
            raise Http404(_("This item is not handed to you."))
        context = _label_context(
            request,
            project,
            access.item,
            expires_at=access.reservation.expires_at if access.reservation else None,
        )
        return render(request, "labeling/label.html", context)

    item = project_item(project, item_id)
    code = request.POST.get("node", "")
    summary = request.POST.get("summary", "")
    raw_version = request.POST.get("version", "")
    try:
        version = int(raw_version) if raw_version.strip() else None
        node = label_node(project=project, code=code)
        annotation, created = annotation_submit(
            item=item, volunteer=request.user, node=node, summary=summary, version=version
        )
    except ValueError:
        error, status, stored = _("The form's version is not a number; reload the page."), 400, None
    except ConcordError as exc:
        error, status = exc.message, exc.http_status
        stored = Annotation.objects.filter(item=item, volunteer=request.user).first()
    else:
        if created:
            messages.success(
                request,
                _("Saved: %(code)s on %(issue)s.")
                % {"code": annotation.node.code, "issue": item.issue},
            )
            return redirect("label-next", slug=project.slug)
        messages.success(
            request,
            _("Your label on %(issue)s is %(code)s.")
            % {"issue": item.issue, "code": annotation.node.code},
        )
        if request.POST.get("next") == "my-labels":
            return redirect("my-labels", slug=project.slug)
        return redirect("label-next", slug=project.slug)
    # Keep what the volunteer chose and typed; on a stale edit, build the form on the stored
    # version so that sending it again is a deliberate overwrite of what they now see.
    form = {"node": code, "summary": summary, "version": raw_version}
    if isinstance(stored, Annotation) and status == Conflict.http_status:
        form["version"] = stored.version
    context = _label_context(
        request, project, item, form=form, error=error, stored=stored if status == 409 else None
    )
    return render(request, "labeling/label.html", context, status=status)


@login_required
@require_POST
def label_skip(request, slug: str, item_id: int):
    project = access_project(request.user, slug)
    item = project_item(project, item_id)
    try:
        item_skip(item=item, volunteer=request.user, reason=request.POST.get("reason", ""))
    except ConcordError as exc:
        messages.error(request, exc.message)
    else:
        messages.info(
            request, _("Skipped %(issue)s; you will not be sent it again.") % {"issue": item.issue}
        )
    return redirect("label-next", slug=project.slug)


@login_required
@require_GET
def my_labels(request, slug: str):
    project = access_project(request.user, slug)
    page = Paginator(
        my_annotations(project=project, volunteer=request.user), MY_LABELS_PER_PAGE
    ).get_page(request.GET.get("page"))
    context = {
        "project": project,
        "page": page,
        "editable_stages": (Stage.OPEN, Stage.LABELING),
        "progress": volunteer_progress(project=project, volunteer=request.user),
    }
    return render(request, "labeling/my_labels.html", context)
