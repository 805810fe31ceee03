"""The lead's pages (disputes, resolving, pilot, proposals, statistics) and the two pages every
member shares with the lead: an item's discussion and the proposals. Each view checks access,
calls one service, and shows a ConcordError's message on the page."""

from __future__ import annotations

from typing import cast

from django import forms
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.paginator import Paginator
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy, ngettext
from django.views.decorators.http import require_POST

from annotation.access import access_project, project_item, role_reaches, user_role
from annotation.duplicates.selectors import duplicates_of
from annotation.models import PilotStatus, Proposal, Role, Stage
from annotation.project_nodes import project_nodes
from annotation.reporting.stats import kappa_heatmap, pairwise_kappa, volunteer_stats
from annotation.review.discussion import labels_revealed, post_add
from annotation.review.pilot import PILOT_MAX, pilot_close, pilot_examples, pilot_items, pilot_start
from annotation.review.proposals import (
    electorate,
    my_votes,
    proposal_add_node,
    proposal_create,
    proposal_send_back,
    proposal_vote,
    proposals_overview,
)
from annotation.review.selectors import (
    QueueFilters,
    annotated_queue_page,
    disputed_items,
    item_review,
    parent_choices,
    picker_nodes,
    queue_neighbours,
    queue_repositories,
    vote_chart,
)
from annotation.review.services import RESOLVABLE_STAGES, item_reopen, item_resolve
from concord.errors import ConcordError
from concord.input_checks import id_param
from concord.next_page import local_next
from taxonomy.models import Level, Node

QUEUE_PER_PAGE = 50


def _queue_url(project, filters: QueueFilters, item_id: int | None = None) -> str:
    if item_id is None:
        url = reverse("disputed-queue", args=[project.slug])
    else:
        url = reverse("item-resolve", args=[project.slug, item_id])
    return f"{url}?{filters.querystring}" if filters.querystring else url


# ---------------------------------------------------------------- disputes


@login_required
def disputed_queue(request, slug: str):
    project = access_project(request.user, slug, at_least=Role.LEAD)
    filters = QueueFilters.from_query(request.GET)
    paginator = Paginator(disputed_items(project, filters), QUEUE_PER_PAGE)
    page = paginator.get_page(request.GET.get("page"))
    nodes = project_nodes(project, live=False).filter(level__in=[Level.TYPE, Level.THEME])
    nodes = nodes.order_by("position")
    context = {
        "project": project,
        "filters": filters,
        "page": page,
        "rows": annotated_queue_page(list(page.object_list)),
        "types": [n for n in nodes if n.level == Level.TYPE],
        "themes": [n for n in nodes if n.level == Level.THEME],
        "repositories": queue_repositories(project),
    }
    return render(request, "lead/disputed_queue.html", context)


class ResolveForm(forms.Form):
    node = forms.ModelChoiceField(queryset=Node.objects.none())
    reason = forms.CharField(required=False, widget=forms.Textarea)
    expected_stage = forms.CharField(required=False)
    expected_version = forms.IntegerField(required=False)

    def __init__(self, *args, project, **kwargs):
        super().__init__(*args, **kwargs)
        # any node of the taxonomy: item_resolve explains a wrong depth or a retired node
        node = cast(forms.ModelChoiceField, self.fields["node"])
        node.queryset = project.taxonomy.nodes.all()


@login_required
def item_resolve_page(request, slug: str, item_id: int):
    project = access_project(request.user, slug, at_least=Role.LEAD)
    item = project_item(project, item_id)
    filters = QueueFilters.from_query(request.GET)
    prev_id, next_id = queue_neighbours(project, filters, item)
    error, status = None, 200
    if request.method == "POST":
        form = ResolveForm(request.POST, project=project)
        if form.is_valid():
            data = form.cleaned_data
            try:
                resolution = item_resolve(
                    item=item,
                    lead=request.user,
                    node=data["node"],
                    reason=data["reason"],
                    expected_stage=data["expected_stage"] or None,
                    expected_version=data["expected_version"],
                )
            except ConcordError as exc:
                error, status = exc.message, exc.http_status
            else:
                messages.success(
                    request,
                    _("%(issue)s resolved: %(code)s %(name)s (%(method)s).")
                    % {
                        "issue": item.issue,
                        "code": resolution.node.code,
                        "name": resolution.node.name,
                        "method": resolution.get_method_display().lower(),
                    },
                )
                return redirect(_queue_url(project, filters, next_id))
        else:
            error, status = _("Pick the final label from the taxonomy."), 400
        item.refresh_from_db()
    review = item_review(item)
    context = {
        "project": project,
        "item": item,
        "issue": item.issue,
        "review": review,
        "votes_chart": vote_chart(review.distribution, review.suggestion),
        "majority_ids": [v.node_id for v in review.distribution if v.n == _top(review)],
        "picker": picker_nodes(project),
        "resolvable": item.stage in RESOLVABLE_STAGES,
        "error": error,
        "posted": request.POST if error else {},
        "filters": filters,
        "prev_url": _queue_url(project, filters, prev_id) if prev_id else "",
        "next_url": _queue_url(project, filters, next_id) if next_id else "",
        "queue_url": _queue_url(project, filters),
        "duplicates": duplicates_of(item, request.user),  # near-duplicates (#29)
    }
    return render(request, "lead/item_resolve.html", context, status=status)


def _top(review) -> int:
    return max((v.n for v in review.distribution), default=0)


@require_POST
@login_required
def item_reopen_page(request, slug: str, item_id: int):
    project = access_project(request.user, slug, at_least=Role.LEAD)
    item = project_item(project, item_id)
    try:
        item_reopen(item=item, lead=request.user, reason=request.POST.get("reason", ""))
    except ConcordError as exc:
        messages.error(request, exc.message)
    else:
        messages.success(
            request,
            _("%(issue)s re-opened: it is back in the disputed queue.") % {"issue": item.issue},
        )
    return redirect("item-resolve", slug=project.slug, item_id=item.pk)


# ---------------------------------------------------------------- discussion


@login_required
def item_discussion_page(request, slug: str, item_id: int):
    """The item's thread for every member; volunteers see labels and posts only once the item
    is revealed (cross-check or later, if the project reveals then)."""
    project = access_project(request.user, slug)
    item = project_item(project, item_id)
    role = user_role(request.user, project)
    here = reverse("item-discussion", args=[project.slug, item.pk])
    if request.method == "POST":
        try:
            post_add(item=item, author=request.user, text=request.POST.get("text", ""))
        except ConcordError as exc:
            messages.error(request, exc.message)
        return redirect(local_next(request, here) + "#posts")
    revealed = labels_revealed(item, role)
    review = item_review(item) if revealed else None
    context = {
        "project": project,
        "item": item,
        "issue": item.issue,
        "role": role,
        "revealed": revealed,
        "review": review,
        "is_lead": role_reaches(role, Role.LEAD),
    }
    return render(request, "lead/item_discussion.html", context)


# ---------------------------------------------------------------- pilot


@login_required
def pilot_page(request, slug: str):
    """Leads start and close the pilot here; once closed, every member reads its worked examples
    (its final items, with the lead's labels and summaries: pilot_items says what each role
    sees)."""
    if request.method == "POST":
        project = access_project(request.user, slug, at_least=Role.LEAD)
        try:
            if request.POST.get("action") == "close":
                pilot_close(project=project, lead=request.user)
                messages.success(request, _("Pilot closed: volunteers get items again."))
            else:
                n = int(request.POST.get("n", "") or 0)
                taken = pilot_start(project=project, lead=request.user, n=n)
                messages.success(
                    request,
                    ngettext(
                        "Pilot started with %(n)d item: label it from the project page.",
                        "Pilot started with %(n)d items: label them from the project page.",
                        taken,
                    )
                    % {"n": taken},
                )
        except ValueError:
            messages.error(
                request, _("Give a number of items between 1 and %(max)d.") % {"max": PILOT_MAX}
            )
        except ConcordError as exc:
            messages.error(request, exc.message)
        return redirect("project-pilot", slug=project.slug)
    project = access_project(request.user, slug)
    role = user_role(request.user, project)
    is_lead = role_reaches(role, Role.LEAD)
    shown = is_lead or project.pilot_status == PilotStatus.CLOSED
    examples: dict[int, list] = {}
    for label in pilot_examples(project, role):
        examples.setdefault(label.item_id, []).append(label)
    items = list(pilot_items(project, role))
    context = {
        "project": project,
        "is_lead": is_lead,
        "shown": shown,
        "rows": [(item, examples.get(item.pk, [])) for item in items],
        "labeled": sum(1 for item in items if item.pk in examples),
        "pilot_max": PILOT_MAX,
    }
    return render(request, "lead/pilot.html", context)


# ---------------------------------------------------------------- proposals


@login_required
def proposal_list(request, slug: str):
    project = access_project(request.user, slug)
    role = user_role(request.user, project)
    context = {
        "project": project,
        "proposals": proposals_overview(project, request.user),
        "mine": my_votes(project, request.user),
        "voters": electorate(project).count(),
        "is_lead": role_reaches(role, Role.LEAD),
    }
    return render(request, "lead/proposal_list.html", context)


class ProposalForm(forms.Form):
    parent = forms.ModelChoiceField(
        queryset=Node.objects.none(),
        required=False,
        label=gettext_lazy("Where it goes"),
        empty_label=gettext_lazy("(none: a new type)"),
        help_text=gettext_lazy(
            "Where the new category goes: under a type (a new theme) or a theme."
        ),
    )
    name = forms.CharField(max_length=200, label=gettext_lazy("Name"))
    definition = forms.CharField(
        required=False,
        label=gettext_lazy("Definition"),
        widget=forms.Textarea(attrs={"rows": 3}),
    )
    reason = forms.CharField(
        required=False,
        label=gettext_lazy("Reason"),
        widget=forms.Textarea(attrs={"rows": 3}),
        help_text=gettext_lazy("Why no existing category fits."),
    )

    def __init__(self, *args, project, **kwargs):
        super().__init__(*args, **kwargs)
        parent = cast(forms.ModelChoiceField, self.fields["parent"])
        parent.queryset = project_nodes(project).filter(level__in=[Level.TYPE, Level.THEME])


@login_required
def proposal_new(request, slug: str):
    """Propose a missing category; `?item=<id>` attaches the item no category fitted."""
    project = access_project(request.user, slug)
    item_id = id_param(request.POST.get("item") or request.GET.get("item"), "item")
    item = project_item(project, item_id) if item_id else None
    form = ProposalForm(request.POST or None, project=project)
    if request.method == "POST" and form.is_valid():
        try:
            proposal = proposal_create(
                project=project, proposer=request.user, item=item, **form.cleaned_data
            )
        except ConcordError as exc:
            form.add_error(None, exc.message)
        else:
            messages.success(
                request,
                _("Proposal “%(name)s” is open: every member must approve it.")
                % {"name": proposal.name},
            )
            return redirect("proposal-list", slug=project.slug)
    context = {
        "project": project,
        "form": form,
        "item": item,
        "parents": parent_choices(project),
        "chosen_parent": form["parent"].value(),
    }
    return render(request, "lead/proposal_new.html", context)


def _proposal(project, pk: int) -> Proposal:
    return get_object_or_404(Proposal, project=project, pk=pk)


def _back_to(project, proposal: Proposal):
    """The proposal list, scrolled to this proposal."""
    return redirect(reverse("proposal-list", args=[project.slug]) + f"#proposal-{proposal.pk}")


@require_POST
@login_required
def proposal_vote_page(request, slug: str, pk: int):
    project = access_project(request.user, slug)
    proposal = _proposal(project, pk)
    try:
        proposal_vote(
            proposal=proposal, member=request.user, approve=request.POST.get("approve") == "1"
        )
    except ConcordError as exc:
        messages.error(request, exc.message)
    return _back_to(project, proposal)


@require_POST
@login_required
def proposal_add_node_page(request, slug: str, pk: int):
    project = access_project(request.user, slug, at_least=Role.LEAD)
    proposal = _proposal(project, pk)
    try:
        node = proposal_add_node(proposal=proposal, lead=request.user)
    except ConcordError as exc:
        messages.error(request, exc.message)
    else:
        messages.success(
            request,
            _("Added %(code)s %(name)s to the taxonomy.") % {"code": node.code, "name": node.name},
        )
    return _back_to(project, proposal)


@require_POST
@login_required
def proposal_send_back_page(request, slug: str, pk: int):
    project = access_project(request.user, slug, at_least=Role.LEAD)
    proposal = _proposal(project, pk)
    try:
        n = proposal_send_back(proposal=proposal, lead=request.user)
    except ConcordError as exc:
        messages.error(request, exc.message)
    else:
        messages.success(
            request,
            ngettext(
                "%(n)d item sent back for relabeling.", "%(n)d items sent back for relabeling.", n
            )
            % {"n": n},
        )
    return _back_to(project, proposal)


# ---------------------------------------------------------------- statistics


@login_required
def stats_page(request, slug: str):
    """Leads and admins see every volunteer and the pairwise kappa; a volunteer sees their own
    numbers only."""
    project = access_project(request.user, slug)
    role = user_role(request.user, project)
    is_lead = role_reaches(role, Role.LEAD)
    rows = volunteer_stats(project, user=None if is_lead else request.user)
    matrix = pairwise_kappa(project, rows) if is_lead and len(rows) > 1 else None
    context = {
        "project": project,
        "is_lead": is_lead,
        "rows": rows,
        "matrix": matrix,
        "kappa_rows": list(zip(rows, matrix.kappa, matrix.shared, strict=True)) if matrix else [],
        "heatmap": kappa_heatmap(matrix) if matrix else None,
        "final_count": project.items.filter(stage=Stage.FINAL).count(),
    }
    return render(request, "lead/stats.html", context)
