"""The volunteer's labeling pages: label the next item, skip it, edit my labels. Each view checks
access, calls one service, and shows a ConcordError's message beside the form
(POST-redirect-GET on success)."""

from __future__ import annotations

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.paginator import Paginator
from django.http import JsonResponse
from django.shortcuts import redirect, render
from django.urls import NoReverseMatch, reverse
from django.utils.cache import patch_cache_control
from django.utils.translation import gettext_lazy as _
from django.views.decorators.gzip import gzip_page
from django.views.decorators.http import require_GET, require_http_methods, require_POST

from annotation.access import access_project, project_item
from annotation.labeling.assignment import item_skip, next_item_claim, skip_undo
from annotation.labeling.eligibility import is_editable
from annotation.labeling.selectors import (
    access_item_for_labeling,
    item_view,
    my_annotations,
    my_skips,
    own_annotation,
    volunteer_progress,
)
from annotation.labeling.services import annotation_submit, label_node
from annotation.models import Annotation, Item, Project, Stage
from annotation.project_nodes import foreign_node_ids
from concord.errors import ConcordError, Conflict
from taxonomy.selectors import (
    OPTION_KEYS,
    label_picker_versioned,
    picker_details,
    picker_levels,
)

LABEL_KEYS = [
    ("1\u20139, a\u2013z", _("choose the option showing that key and go one level down")),
    (
        "↑ ↓",
        _(
            "move between options without choosing (the focused one shows its "
            "definition and examples); Enter chooses it"
        ),
    ),
    ("Backspace", _("go up a level; on a fresh item: undo your last label or skip")),
    ("u", _("undo your last label or skip (while the item is not complete)")),
    ("/", _("search the categories (keys pick a result, Enter takes the first)")),
    ("Enter", _("submit; the next item shows at once while the label is saved")),
    ("s", _("skip this item (asks why)")),
    ("Esc", _("leave the summary box, so the keys choose categories again")),
]
# What the page's script says; translated here, handed to it as JSON (json_script).
LABEL_PAGE_TEXT = {
    "by": _("by %(author)s"),
    "noDescription": _("(no description)"),
    "comments": _("Comments"),
    "someone": _("someone"),
    "keywords": _("Keywords:"),
    "openOriginal": _("open the original"),
    "chooseType": _("Choose a type (%(keys)s)"),
    "upHint": _("(Backspace: up a level)"),
    "missingType": _("Nothing chosen yet: choose a type, then a category under it."),
    "missingBelow": _("Only %(path)s so far: choose one of the categories under it."),
    "missingSummary": _("Write a one-line summary: this project requires one with every label."),
    "matching": _("%(n)s matching; the keys pick a result, Enter takes the first."),
    "noMatch": _("Nothing matches “%(q)s”."),
    "draftKept": _("Draft kept on this device."),
    "draftRestored": _("Draft restored."),
    "saving": _("Saving your label on %(issue)s…"),
    "saved": _("Saved: %(code)s on %(issue)s."),
    "edited": _("Your label on %(issue)s is %(code)s."),
    "refused": _("Not saved: %(reason)s"),
    "offline": _(
        "Not saved: the server did not answer. Your label is kept on this device; "
        "press Enter to send it again."
    ),
    "skipped": _("Skipped %(issue)s; you will not be sent it again. u: undo."),
    "skipRefused": _("Not skipped: %(reason)s"),
    "nothingToUndo": _("Nothing to undo."),
    "undoLabel": _("Back to your label on %(issue)s: change it and press Enter."),
    "undoSkip": _("Skip taken back: %(issue)s is yours again."),
    "undoRefused": _("Cannot undo: %(reason)s"),
    "undoComplete": _("%(issue)s already has all its labels; your label can no longer change."),
    "loading": _("Loading the next item…"),
    # the title labeling/label.html gives the page, for each item after the first
    "pageTitle": _("Label %(issue)s · %(project)s"),
    "goOn": _("Go on to the next item"),
    "labelNotice": _(
        "Your label on %(issue)s was not saved (your words are kept as a draft for it): %(reason)s"
    ),
    "skipNotice": _("Your skip of %(issue)s did not go through: %(reason)s"),
    "noAnswer": _("the server did not answer"),
    "goBack": _("Go back to it"),
    "signInExpired": _("Your sign-in has expired; what you type stays on this device as a draft."),
    "signInExpiredUnsaved": _(
        "Your sign-in has expired, so your label on %(issue)s was not saved; it stays on "
        "this device as a draft."
    ),
    "signIn": _("Sign in again"),
    "submit": _("Submit"),
    "saveChange": _("Save the change"),
    "yourLabel": _("Your label"),
    "editLabel": _("Edit your label"),
    "includes": _("Includes: %(names)s"),
    "hosts": {"github": "GitHub", "gitee": "Gitee"},
}
MY_LABELS_PER_PAGE = 25


def reverse_or_none(name: str, *args) -> str | None:
    """A URL of another part of Concord that may not be installed yet (the lead's pages)."""
    try:
        return reverse(name, args=args)
    except NoReverseMatch:
        return None


def _picker(project: Project):
    exclude = foreign_node_ids(project)
    return label_picker_versioned(project.taxonomy, project.label_depth, exclude=exclude)


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
    version, picker = _picker(project)
    return {
        "project": project,
        "view": view,
        "issue": item.issue,
        "levels": picker_levels(picker),
        "picker_version": version,
        "option_keys": OPTION_KEYS,
        "page_text": {**LABEL_PAGE_TEXT, "project": project.name},
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


@gzip_page
@login_required
@require_GET
def label_categories(request, slug: str):
    """The definitions and examples of the project's categories, for the labeling page (which
    lists only their codes and names): fetched once under the picker's version (`v`), so the
    browser keeps it until the taxonomy changes instead of receiving it with every item."""
    project = access_project(request.user, slug)
    version, picker = _picker(project)
    response = JsonResponse({"version": version, "categories": picker_details(picker)})
    if request.GET.get("v") == version:
        patch_cache_control(response, private=True, max_age=365 * 24 * 3600, immutable=True)
    else:
        patch_cache_control(response, private=True, no_cache=True)
    return response


@gzip_page
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


@gzip_page
@login_required
@require_http_methods(["GET", "POST"])
def label_item(request, slug: str, item_id: int):
    """GET: an item I hold or labeled (to edit, or to see the others' labels once revealed); any
    other id leads on to the next item.
    POST: submit or edit my label; a repeat is harmless, a stale edit is refused (409)."""
    project = access_project(request.user, slug)
    if request.method == "GET":
        access = access_item_for_labeling(project=project, item_id=item_id, viewer=request.user)
        if access is None:
            # The labeling page's URL follows the item: a reload after its hold ran out (or an
            # item never mine) leads on to the next item. The same answer for every such id,
            # so ids still reveal nothing.
            messages.info(
                request, _("That item is not held for you (any more); here is your next one.")
            )
            return redirect("label-next", slug=project.slug)
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
        error, status = str(_("The form's version is not a number; reload the page.")), 400
        stored = None
    except ConcordError as exc:
        error, status = exc.message, exc.http_status
        stored = own_annotation(item=item, volunteer=request.user)
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
@require_POST
def label_unskip(request, slug: str, item_id: int):
    """Take a skip back (My labels): the item is reserved for me again and opens to label."""
    project = access_project(request.user, slug)
    item = project_item(project, item_id)
    try:
        skip_undo(item=item, volunteer=request.user)
    except ConcordError as exc:
        messages.error(request, exc.message)
        return redirect("my-labels", slug=project.slug)
    return redirect("label-item", slug=project.slug, item_id=item.pk)


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
        "skips": my_skips(project=project, volunteer=request.user),
        "progress": volunteer_progress(project=project, volunteer=request.user),
    }
    return render(request, "labeling/my_labels.html", context)
