"""Ingest pages, for site staff: sources and their harvests, keyword sets, URL-list uploads.
Each view checks access, calls one service, and shows a ConcordError's message beside the form."""

from __future__ import annotations

from django.conf import settings
from django.contrib import messages
from django.core.paginator import Paginator
from django.shortcuts import get_object_or_404, redirect, render
from django.utils.safestring import mark_safe
from django.utils.translation import gettext as _
from django.utils.translation import ngettext
from django.views.decorators.http import require_POST

from concord.errors import ConcordError
from concord.tasks import NOT_SENT
from ingest.access import ingest_admin_required
from ingest.candidates import keyword_set_save, keyword_sets_save
from ingest.forms import (
    KeywordFileForm,
    KeywordPreviewForm,
    KeywordSetForm,
    SourceForm,
    UrlListForm,
)
from ingest.harvest import harvest_cancel, harvest_queue
from ingest.importers import url_list_import
from ingest.keywords import KeywordMatcher, marked_html, parse_filter_keywords
from ingest.models import HarvestRun, KeywordSet, Source
from ingest.selectors import run_progress, sources_overview
from ingest.sources import source_create

SOURCES_PER_PAGE = 25
RUNS_SHOWN = 50


@ingest_admin_required
def source_list(request):
    page = Paginator(sources_overview(), SOURCES_PER_PAGE).get_page(request.GET.get("page"))
    return render(request, "ingest/source_list.html", {"page": page})


@ingest_admin_required
def source_create_page(request):
    form = SourceForm(request.POST or None)
    if request.method == "POST" and form.is_valid():
        data = dict(form.cleaned_data)
        owner, repo = data.pop("repository")
        try:
            source = source_create(owner=owner, repo=repo, **data)
        except ConcordError as exc:
            form.add_error(None, exc.message)
        else:
            messages.success(request, _("Source %(source)s added.") % {"source": source})
            return redirect("ingest-source-detail", pk=source.pk)
    return render(request, "ingest/source_form.html", {"form": form})


@ingest_admin_required
def source_detail(request, pk: int):
    source = get_object_or_404(Source.objects.select_related("keyword_set"), pk=pk)
    runs = source.runs.select_related("started_by")[:RUNS_SHOWN]
    context = {"source": source, "runs": runs, "n_issues": source.issues.count()}
    return render(request, "ingest/source_detail.html", context)


@require_POST
@ingest_admin_required
def source_harvest(request, pk: int):
    source = get_object_or_404(Source, pk=pk)
    try:
        queued = harvest_queue(source=source, user=request.user)
    except ConcordError as exc:
        messages.error(request, exc.message)
        return redirect("ingest-source-detail", pk=source.pk)
    if not queued.sent:
        messages.warning(request, NOT_SENT)
    return redirect("ingest-run-detail", pk=queued.run.pk)


@ingest_admin_required
def run_detail(request, pk: int):
    run = get_object_or_404(HarvestRun.objects.select_related("source", "started_by"), pk=pk)
    return render(request, "ingest/run_detail.html", {"run": run, "progress": run_progress(run)})


@require_POST
@ingest_admin_required
def run_cancel(request, pk: int):
    run = get_object_or_404(HarvestRun, pk=pk)
    if run.is_active:
        harvest_cancel(run=run)
        messages.info(request, _("Cancel requested: the run stops before its next page."))
    else:
        messages.info(
            request,
            _("Run %(run)d had already finished (%(status)s).")
            % {"run": run.pk, "status": run.get_status_display()},
        )
    return redirect("ingest-run-detail", pk=run.pk)


@ingest_admin_required
def keyword_set_list(request):
    keyword_sets = KeywordSet.objects.order_by("name")
    context = {"keyword_sets": keyword_sets, "import_form": KeywordFileForm(), "problems": []}
    if request.method == "POST":
        form = KeywordFileForm(request.POST, request.FILES)
        context["import_form"] = form
        if form.is_valid():
            name = request.FILES["file"].name
            try:
                saved = keyword_sets_save(parse_filter_keywords(form.cleaned_data["file"], name))
            except ConcordError as exc:
                context["problems"] = [exc]
            else:
                summary = ", ".join(f"{n} ({count} keywords)" for n, count in saved.items())
                messages.success(
                    request,
                    ngettext(
                        "Imported %(n)d keyword set: %(summary)s.",
                        "Imported %(n)d keyword sets: %(summary)s.",
                        len(saved),
                    )
                    % {"n": len(saved), "summary": summary},
                )
                return redirect("ingest-keyword-sets")
    return render(request, "ingest/keyword_set_list.html", context)


@ingest_admin_required
def keyword_set_edit(request, pk: int | None = None):
    keyword_set = get_object_or_404(KeywordSet, pk=pk) if pk is not None else None
    form = KeywordSetForm(request.POST or None, keyword_set=keyword_set)
    if request.method == "POST" and form.is_valid():
        data = form.cleaned_data
        saved = keyword_set_save(
            name=data["name"],
            keywords=data["keywords"],
            description=data["description"],
            keyword_set=keyword_set,
        )
        messages.success(
            request,
            ngettext(
                "Keyword set %(name)s saved: %(n)d keyword.",
                "Keyword set %(name)s saved: %(n)d keywords.",
                len(saved.keywords),
            )
            % {"name": saved.name, "n": len(saved.keywords)},
        )
        return redirect("ingest-keyword-sets")
    return render(
        request, "ingest/keyword_set_form.html", {"form": form, "keyword_set": keyword_set}
    )


@ingest_admin_required
def keyword_set_preview(request, pk: int):
    """Paste text, see which of the set's keywords match it, where and why (read-only: the
    form posts only so that long text need not travel in a URL)."""
    keyword_set = get_object_or_404(KeywordSet, pk=pk)
    form = KeywordPreviewForm(request.POST or None)
    context: dict = {"keyword_set": keyword_set, "form": form, "hits": None}
    if request.method == "POST" and form.is_valid():
        text = form.cleaned_data["text"]
        matcher = KeywordMatcher(keyword_set.keywords)
        hits = matcher.hits(text)
        context.update(
            hits=[{"hit": h, "matched": text[h.start : h.end]} for h in hits],
            found=matcher.found(text),
            marked=mark_safe(marked_html(text, matcher.spans(text))),  # noqa: S308 - escaped
        )
    return render(request, "ingest/keyword_set_preview.html", context)


@ingest_admin_required
def url_list_upload(request):
    form = UrlListForm(request.POST or None, request.FILES or None)
    report = name = None
    if request.method == "POST" and form.is_valid():
        name, text = form.cleaned_data["file"]
        report = url_list_import(text=text, name=name)
    context = {
        "form": form,
        "report": report,
        "name": name,
        # Without a broker, url_list_import leaves details to the command (see its comment).
        "details_in_background": not settings.CELERY_TASK_ALWAYS_EAGER,
    }
    return render(request, "ingest/url_list_upload.html", context)
