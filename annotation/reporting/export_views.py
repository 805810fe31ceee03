"""Export pages, for project admins and site staff: choose a format and filters, watch the job,
download the file. Volunteers and leads get 403, non-members 404 (access_project)."""

from __future__ import annotations

from typing import cast

from django import forms
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import FileResponse, Http404
from django.shortcuts import get_object_or_404, redirect, render
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy

from annotation.access import access_project
from annotation.models import ExportFormat, ExportJob, Project, Role, Stage
from annotation.project_nodes import project_nodes
from annotation.reporting.export_jobs import (
    export_content_type,
    export_job_file,
    export_job_progress,
    export_job_queue,
)
from annotation.reporting.exports import export_options, study_columns
from concord.errors import ConcordError
from concord.tasks import NOT_SENT
from taxonomy.models import Level

JOBS_SHOWN = 20


class ExportForm(forms.Form):
    format = forms.ChoiceField(
        label=gettext_lazy("Format"), choices=ExportFormat.choices, initial=ExportFormat.STUDY
    )
    level = forms.ChoiceField(
        required=False,
        label=gettext_lazy("Level"),
        help_text=gettext_lazy(
            "Study format only: deeper labels count as their ancestor, coarser are blank."
        ),
    )
    repository = forms.ChoiceField(required=False, label=gettext_lazy("Repository"))
    type = forms.ChoiceField(required=False, label=gettext_lazy("Final type"))
    stage = forms.ChoiceField(
        required=False,
        choices=[("", gettext_lazy("Any stage")), *Stage.choices],
        label=gettext_lazy("Stage"),
    )
    created_from = forms.DateField(
        required=False,
        label=gettext_lazy("Issues created from"),
        widget=forms.DateInput(attrs={"type": "date"}),
        help_text=gettext_lazy(
            "On the tracker, UTC, inclusive. Issues imported without details have no date."
        ),
    )
    created_until = forms.DateField(
        required=False,
        label=gettext_lazy("Issues created until"),
        widget=forms.DateInput(attrs={"type": "date"}),
    )
    bom = forms.TypedChoiceField(
        required=False,
        label=gettext_lazy("For Excel"),
        choices=[
            ("", gettext_lazy("Yes, except the study format")),
            ("on", gettext_lazy("Yes: start with a byte-order mark")),
            ("off", gettext_lazy("No: plain UTF-8")),
        ],
        coerce=lambda choice: choice == "on",
        empty_value=None,
        help_text=gettext_lazy(
            "A byte-order mark lets Excel read the file as UTF-8 (Chinese titles and summaries "
            "show as written). The study format, URLs and codes only, goes without it by "
            "default, byte for byte like the study's own files."
        ),
    )

    def __init__(self, *args, project: Project, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        depth = Level(project.label_depth).label.lower()
        cast(forms.ChoiceField, self.fields["level"]).choices = [
            ("", _("As labelled (%(depth)s)") % {"depth": depth}),
            *Level.choices,
        ]
        repositories = (
            project.items.values_list("issue__owner", "issue__repo")
            .distinct()
            .order_by("issue__owner", "issue__repo")
        )
        cast(forms.ChoiceField, self.fields["repository"]).choices = [
            ("", _("All repositories")),
            *((f"{o}/{r}", f"{o}/{r}") for o, r in repositories),
        ]
        types = project_nodes(project, live=False).filter(level=Level.TYPE)
        types = types.order_by("position", "code")
        cast(forms.ChoiceField, self.fields["type"]).choices = [
            ("", _("Any (or none yet)")),
            *((code, f"{code} {name}") for code, name in types.values_list("code", "name")),
        ]


@login_required
def project_exports_page(request, slug: str):
    project = access_project(request.user, slug, at_least=Role.ADMIN)
    form = ExportForm(request.POST or None, project=project)
    if request.method == "POST" and form.is_valid():
        try:
            options = export_options(project, **form.cleaned_data)
        except ConcordError as exc:
            form.add_error(None, exc.message)
        else:
            queued = export_job_queue(project=project, user=request.user, options=options)
            if not queued.sent:
                messages.warning(request, NOT_SENT)
            return redirect("project-export-job", slug=project.slug, pk=queued.job.pk)
    jobs = project.export_jobs.select_related("requested_by")[:JOBS_SHOWN]
    context = {"project": project, "form": form, "jobs": jobs}
    return render(request, "exports/project_exports.html", context)


@login_required
def export_job_page(request, slug: str, pk: int):
    project = access_project(request.user, slug, at_least=Role.ADMIN)
    job = get_object_or_404(
        ExportJob.objects.select_related("requested_by"), project=project, pk=pk
    )
    context = {
        "project": project,
        "job": job,
        "progress": export_job_progress(job),
        "has_file": export_job_file(job) is not None,
        "columns": study_columns(project) if job.format == ExportFormat.STUDY else None,
        "options": options_shown(job),
    }
    return render(request, "exports/export_job.html", context)


def options_shown(job: ExportJob) -> list[tuple[object, object]]:
    """The job's options named as the form names them, with choices in words."""
    words: dict[str, dict] = {
        "format": dict(ExportFormat.choices),
        "level": dict(Level.choices),
        "stage": dict(Stage.choices),
        "bom": {True: _("Yes"), False: _("No")},
    }
    return [
        (
            ExportForm.base_fields[key].label if key in ExportForm.base_fields else key,
            words.get(key, {}).get(value, value),
        )
        for key, value in job.options.items()
    ]


@login_required
def export_job_download(request, slug: str, pk: int):
    project = access_project(request.user, slug, at_least=Role.ADMIN)
    job = get_object_or_404(ExportJob, project=project, pk=pk)
    path = export_job_file(job)
    if path is None:
        raise Http404(
            _("Export %(n)d has no file to download (%(status)s).")
            % {"n": job.pk, "status": job.get_status_display()}
        )
    return FileResponse(
        path.open("rb"),
        as_attachment=True,
        filename=job.file,
        content_type=export_content_type(job),
    )
