"""The transcript pages (issue 27): the list (and a lead's upload), and one transcript to code
in the browser, with the coders' agreement once blindness allows it."""

from __future__ import annotations

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.utils.translation import gettext as _
from django.views.decorators.http import require_POST

from annotation.access import access_project, has_role
from annotation.blindness import coding_revealed, passages_seen_by, sees_all_codes
from annotation.gate import Write, WriteForbidden, may_write
from annotation.interviews.coding import (
    coded_passages_csv,
    disagreement_settle,
    final_codes_csv,
    passage_code,
    passage_remove,
    project_transcripts,
    transcript_agreement,
    transcript_coder_assign,
    transcript_coder_join,
    transcript_done,
    transcript_final_codes,
    transcript_lines,
    transcript_upload,
)
from annotation.interviews.forms import (
    CoderAssignForm,
    PassageForm,
    SettleForm,
    TranscriptForm,
    UncodeForm,
)
from annotation.interviews.qdc import transcripts_qdpx
from annotation.models import Project, Role
from annotation.project_nodes import project_nodes
from concord.errors import ConcordError
from taxonomy.interviews.models import Participant, Transcript


def _transcript(project: Project, pk: int) -> Transcript:
    return get_object_or_404(
        Transcript.objects.select_related("participant").prefetch_related("coders__coder"),
        project=project,
        pk=pk,
    )


@login_required
def transcripts_page(request, slug: str):
    """Every member sees the transcripts and who codes them; a lead uploads new ones."""
    project = access_project(request.user, slug)
    lead = has_role(request.user, project, Role.LEAD)
    participants = Participant.objects.filter(project=project).order_by("-kind", "pk")
    form = TranscriptForm(request.POST or None, request.FILES or None, participants=participants)
    if request.method == "POST" and form.is_valid():
        upload = form.cleaned_data["transcript"]
        try:
            transcript = transcript_upload(
                project=project,
                actor=request.user,
                name=upload.name,
                data=upload.read(),
                participant=form.cleaned_data["participant"],
            )
        except WriteForbidden:
            raise  # a member below lead: 403, as the gate says
        except ConcordError as exc:
            form.add_error("transcript", str(exc))
        else:
            messages.success(request, _("%(name)s is uploaded.") % {"name": transcript.name})
            return redirect("interview-transcript", slug=project.slug, pk=transcript.pk)
    context = {
        "project": project,
        "lead": lead,
        "transcripts": project_transcripts(project),
        "form": form,
        "may_upload": may_write(request.user, project, Write.INTERVIEWS),
    }
    return render(request, "interviews/transcripts.html", context)


@login_required
def transcript_page(request, slug: str, pk: int):
    """One transcript, its lines to select passages from, the viewer's codes (everyone's once
    blindness allows), and then the agreement and the disagreements."""
    project = access_project(request.user, slug)
    transcript = _transcript(project, pk)
    coders = list(transcript.coders.all())
    mine = next((c for c in coders if c.coder_id == request.user.pk), None)
    sees_all = sees_all_codes(request.user, transcript, project)
    passages = list(
        passages_seen_by(request.user, transcript, project).select_related("node", "coder")
    )
    coding = mine is not None and mine.done_at is None
    revealed = coding_revealed(transcript)
    context = {
        "project": project,
        "transcript": transcript,
        "coders": coders,
        "mine": mine,
        "coding": coding and may_write(request.user, project, Write.CODE),
        "may_join": mine is None and not revealed and may_write(request.user, project, Write.CODE),
        "may_assign": not revealed and may_write(request.user, project, Write.INTERVIEWS),
        "may_settle": revealed and may_write(request.user, project, Write.INTERVIEWS),
        "lead": has_role(request.user, project, Role.LEAD),
        "sees_all": sees_all,
        "lines": transcript_lines(transcript, passages, names=sees_all),
        "passages": [(p, transcript.text[p.start : p.end]) for p in passages],
        "form": PassageForm(),
        "categories": project_nodes(project).order_by("code") if coding else [],
        "assign_form": CoderAssignForm(),
        "pairs": transcript_agreement(transcript) if sees_all else [],
        "final": transcript_final_codes(transcript) if revealed else None,
    }
    return render(request, "interviews/transcript.html", context)


def _back(project: Project, transcript: Transcript, anchor: str = ""):
    url = reverse("interview-transcript", args=[project.slug, transcript.pk])
    return redirect(url + anchor)


@login_required
@require_POST
def transcript_join(request, slug: str, pk: int):
    project = access_project(request.user, slug)
    transcript = _transcript(project, pk)
    try:
        transcript_coder_join(transcript=transcript, actor=request.user)
    except ConcordError as exc:
        messages.error(request, str(exc))
    return _back(project, transcript)


@login_required
@require_POST
def transcript_assign(request, slug: str, pk: int):
    project = access_project(request.user, slug, at_least=Role.LEAD)
    transcript = _transcript(project, pk)
    form = CoderAssignForm(request.POST)
    if not form.is_valid():
        messages.error(request, _("Name the member who codes it."))
        return _back(project, transcript)
    try:
        coder = transcript_coder_assign(
            transcript=transcript, actor=request.user, username=form.cleaned_data["username"]
        )
    except ConcordError as exc:
        messages.error(request, str(exc))
    else:
        messages.success(
            request, _("%(name)s codes this transcript.") % {"name": coder.coder.username}
        )
    return _back(project, transcript)


@login_required
@require_POST
def transcript_code(request, slug: str, pk: int):
    """Link the selected passage to a category (the coding form; saving again changes
    nothing)."""
    project = access_project(request.user, slug)
    transcript = _transcript(project, pk)
    form = PassageForm(request.POST)
    if not form.is_valid():
        messages.error(request, _("Select a passage and name its category."))
        return _back(project, transcript)
    try:
        passage = passage_code(transcript=transcript, actor=request.user, **form.cleaned_data)
    except ConcordError as exc:
        messages.error(request, str(exc))
        return _back(project, transcript)
    messages.success(request, _("Coded %(code)s.") % {"code": passage.node.code})
    return _back(project, transcript, "#coding-form")


@login_required
@require_POST
def transcript_uncode(request, slug: str, pk: int):
    project = access_project(request.user, slug)
    transcript = _transcript(project, pk)
    form = UncodeForm(request.POST)
    if not form.is_valid():
        messages.error(request, _("Say which code to take back."))
        return _back(project, transcript)
    try:
        passage_remove(
            transcript=transcript, actor=request.user, passage_id=form.cleaned_data["passage"]
        )
    except ConcordError as exc:
        messages.error(request, str(exc))
    return _back(project, transcript)


@login_required
@require_POST
def transcript_finish(request, slug: str, pk: int):
    project = access_project(request.user, slug)
    transcript = _transcript(project, pk)
    try:
        transcript_done(transcript=transcript, actor=request.user)
    except ConcordError as exc:
        messages.error(request, str(exc))
    else:
        messages.success(request, _("Your coding of this transcript is complete."))
    return _back(project, transcript)


@login_required
@require_POST
def transcript_settle(request, slug: str, pk: int):
    """A lead's word on one disagreement (the agreement section's Keep and Drop)."""
    project = access_project(request.user, slug, at_least=Role.LEAD)
    transcript = _transcript(project, pk)
    form = SettleForm(request.POST)
    if not form.is_valid():
        messages.error(request, _("Say which line and category, and whether to keep it."))
        return _back(project, transcript)
    try:
        disagreement_settle(transcript=transcript, actor=request.user, **form.cleaned_data)
    except ConcordError as exc:
        messages.error(request, str(exc))
        return _back(project, transcript)
    return _back(project, transcript, "#agreement")


@login_required
def final_codes_download(request, slug: str):
    """The final codes of the project's transcripts (agreed, or kept by the lead)."""
    project = access_project(request.user, slug, at_least=Role.LEAD)
    response = HttpResponse(final_codes_csv(project), content_type="text/csv; charset=utf-8")
    response["Content-Disposition"] = f'attachment; filename="{project.slug}-final-codes.csv"'
    return response


@login_required
def transcripts_qdpx_download(request, slug: str):
    """The transcripts and every coder's passages as a REFI-QDA project (interviews.qdc)."""
    project = access_project(request.user, slug, at_least=Role.LEAD)
    response = HttpResponse(transcripts_qdpx(project, request.user), content_type="application/zip")
    response["Content-Disposition"] = f'attachment; filename="{project.slug}-transcripts.qdpx"'
    return response


@login_required
def coded_passages_download(request, slug: str):
    """Every coder's coded passages of the project's transcripts (the lead's)."""
    project = access_project(request.user, slug, at_least=Role.LEAD)
    response = HttpResponse(
        coded_passages_csv(project, request.user), content_type="text/csv; charset=utf-8"
    )
    response["Content-Disposition"] = f'attachment; filename="{project.slug}-coded-passages.csv"'
    return response
