"""The interview pages (leads and admins): the overview (participants, guideline, codes to map),
the import upload and its job's report, and the quotes, searched and filtered."""

from __future__ import annotations

from dataclasses import asdict
from urllib.parse import urlencode

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.paginator import Paginator
from django.http import HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.utils.translation import gettext as _
from django.views.decorators.http import require_POST

from annotation.access import access_project
from annotation.gate import Write, may_write
from annotation.interviews.forms import (
    CodeMapForm,
    InterviewFilesForm,
    QuoteFilterForm,
    RankingForm,
    RankingsFileForm,
)
from annotation.interviews.jobs import interview_import_progress, interview_import_queue
from annotation.interviews.priorities import (
    participant_rankings,
    ranking_choices,
    ranking_link_create,
    ranking_link_valid,
    ranking_save,
    ranking_submit,
    rankings_import,
)
from annotation.interviews.qdc import taxonomy_qdc
from annotation.interviews.selectors import (
    QuoteFilters,
    project_frameworks,
    project_participants,
    project_quotes,
    unresolved_codes,
)
from annotation.interviews.services import InterviewFile, unresolved_code_map
from annotation.interviews.triangulation import (
    project_triangulation,
    triangulation_chart,
    triangulation_csv,
)
from annotation.models import Role
from annotation.projects.importers import ImportFailed
from annotation.rendering import markdown_to_html
from concord.errors import ConcordError
from concord.tasks import NOT_SENT
from taxonomy.interviews.models import InterviewGuide, InterviewImportJob, Participant, Quote

JOBS_SHOWN = 20
QUOTES_PER_PAGE = 20


@login_required
def interviews_page(request, slug: str):
    project = access_project(request.user, slug, at_least=Role.LEAD)
    guide = InterviewGuide.objects.filter(project=project).first()
    context = {
        "project": project,
        "participants": project_participants(project),
        "unresolved": unresolved_codes(project),
        "guide": guide,
        "guide_html": markdown_to_html(guide.text) if guide else "",
        "may_write": may_write(request.user, project, Write.INTERVIEWS),
        "rankings_form": RankingsFileForm(),
    }
    return render(request, "interviews/overview.html", context)


@login_required
def interview_imports_page(request, slug: str):
    project = access_project(request.user, slug, at_least=Role.LEAD)
    form = InterviewFilesForm(request.POST or None, request.FILES or None)
    if request.method == "POST" and form.is_valid():
        files = {
            part: InterviewFile(upload.name, upload.read())
            for part, upload in form.cleaned_data.items()
            if upload
        }
        try:
            queued = interview_import_queue(project=project, user=request.user, files=files)
        except ConcordError as exc:
            form.add_error("codebook", exc.message)
        else:
            if not queued.sent:
                messages.warning(request, NOT_SENT)
            return redirect("interview-import", slug=project.slug, pk=queued.job.pk)
    jobs = InterviewImportJob.objects.filter(project=project).select_related("requested_by")
    context = {"project": project, "form": form, "jobs": jobs[:JOBS_SHOWN]}
    return render(request, "interviews/imports.html", context)


@login_required
def interview_import_page(request, slug: str, pk: int):
    project = access_project(request.user, slug, at_least=Role.LEAD)
    job = get_object_or_404(
        InterviewImportJob.objects.select_related("requested_by"), project=project, pk=pk
    )
    context = {"project": project, "job": job, "progress": interview_import_progress(job)}
    return render(request, "interviews/import_job.html", context)


@login_required
@require_POST
def interview_code_map(request, slug: str):
    """Map a code the taxonomy lacks to one of the project's categories (the overview's form)."""
    project = access_project(request.user, slug, at_least=Role.LEAD)
    form = CodeMapForm(request.POST)
    if not form.is_valid():
        messages.error(request, _("Say which category the code stands for."))
        return redirect("interviews", slug=project.slug)
    code, node = form.cleaned_data["code"], form.cleaned_data["node"]
    try:
        n = unresolved_code_map(project=project, actor=request.user, code=code, node_code=node)
    except ConcordError as exc:
        messages.error(request, exc.message)
    else:
        messages.success(
            request,
            _("%(code)s now stands for %(node)s (%(n)d links).")
            % {"code": code, "node": node.strip(), "n": n},
        )
    return redirect("interviews", slug=project.slug)


@login_required
def interview_quotes_page(request, slug: str):
    project = access_project(request.user, slug, at_least=Role.LEAD)
    form = QuoteFilterForm(request.GET or None)
    filters = QuoteFilters(**form.cleaned_data) if form.is_valid() else QuoteFilters()
    page = Paginator(project_quotes(project, filters), QUOTES_PER_PAGE).get_page(
        request.GET.get("page")
    )
    query = urlencode({k: v for k, v in asdict(filters).items() if v})
    context = {
        "project": project,
        "form": form,
        "filters": filters,
        "page": page,
        "query": query,
        "frameworks": project_frameworks(project),
        "has_quotes": Quote.objects.filter(participant__project=project).exists(),
    }
    return render(request, "interviews/quotes.html", context)


@login_required
def triangulation_page(request, slug: str):
    project = access_project(request.user, slug, at_least=Role.LEAD)
    report = project_triangulation(project)
    context = {
        "project": project,
        "report": report,
        "chart": triangulation_chart(report),
        "has_interviews": report.users + report.developers > 0,
    }
    return render(request, "interviews/triangulation.html", context)


@login_required
def triangulation_csv_download(request, slug: str):
    project = access_project(request.user, slug, at_least=Role.LEAD)
    response = HttpResponse(
        triangulation_csv(project_triangulation(project)), content_type="text/csv; charset=utf-8"
    )
    response["Content-Disposition"] = f'attachment; filename="{project.slug}-triangulation.csv"'
    return response


# ---------------------------------------------------------------- practitioner priorities


@login_required
def participant_page(request, slug: str, pk: int):
    """A participant: background, quotes, and their ranking (a lead fills it in, or makes a
    one-time link the participant opens on their phone)."""
    project = access_project(request.user, slug, at_least=Role.LEAD)
    participant = get_object_or_404(Participant, project=project, pk=pk)
    choices = ranking_choices(project)
    form = RankingForm(
        request.POST or None, choices=choices, initial_ranking=participant_rankings(participant)
    )
    link = ""
    if request.method == "POST" and request.POST.get("action") == "link":
        try:
            _link, token = ranking_link_create(participant=participant, creator=request.user)
        except ConcordError as exc:
            messages.error(request, exc.message)
        else:
            link = request.build_absolute_uri(reverse("ranking-link", args=[token]))
    elif request.method == "POST" and form.is_valid():
        try:
            ranking_save(participant=participant, actor=request.user, choices=form.ranking())
        except ConcordError as exc:
            form.add_error(None, exc.message)
        else:
            messages.success(
                request, _("The ranking of %(code)s is saved.") % {"code": participant.code}
            )
            return redirect("interview-participant", slug=project.slug, pk=participant.pk)
    context = {
        "project": project,
        "participant": participant,
        "quotes": project_quotes(project, QuoteFilters()).filter(participant=participant),
        "form": form,
        "link": link,
        "may_write": may_write(request.user, project, Write.INTERVIEWS),
    }
    return render(request, "interviews/participant.html", context)


def ranking_link_page(request, token: str):
    """The participant's own ranking form, opened from a one-time link: no account needed. It
    says nothing of the project beyond its categories."""
    try:
        link = ranking_link_valid(token)
    except ConcordError as exc:
        return render(request, "interviews/ranking_link.html", {"refusal": exc.message}, status=410)
    form = RankingForm(request.POST or None, choices=ranking_choices(link.participant.project))
    if request.method == "POST" and form.is_valid():
        try:
            ranking_submit(token=token, choices=form.ranking())
        except ConcordError as exc:
            form.add_error(None, exc.message)
        else:
            return render(request, "interviews/ranking_link.html", {"thanks": True})
    return render(request, "interviews/ranking_link.html", {"form": form})


@login_required
@require_POST
def rankings_import_page(request, slug: str):
    project = access_project(request.user, slug, at_least=Role.LEAD)
    form = RankingsFileForm(request.POST, request.FILES)
    if not form.is_valid():
        messages.error(request, _("Choose a rankings CSV file."))
        return redirect("interviews", slug=project.slug)
    upload = form.cleaned_data["rankings"]
    try:
        n = rankings_import(
            project=project, actor=request.user, data=upload.read(), name=upload.name
        )
    except ImportFailed as exc:
        for error in exc.errors[:20]:
            messages.error(request, str(error))
    except ConcordError as exc:
        messages.error(request, exc.message)
    else:
        messages.success(request, _("%(n)d ranked places imported.") % {"n": n})
    return redirect("interviews", slug=project.slug)


@login_required
def codebook_qdc_download(request, slug: str):
    """The taxonomy as a REFI-QDA codebook, for qualitative tools (annotation.interviews.qdc)."""
    project = access_project(request.user, slug, at_least=Role.LEAD)
    response = HttpResponse(taxonomy_qdc(project), content_type="application/xml; charset=utf-8")
    response["Content-Disposition"] = f'attachment; filename="{project.slug}-codebook.qdc"'
    return response
