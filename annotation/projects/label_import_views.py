"""Study label files from the browser (the project's admins): upload one or many, follow the
background job's progress, read the per-file, per-line report."""

from __future__ import annotations

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.shortcuts import get_object_or_404, redirect, render

from annotation.access import access_project
from annotation.models import LabelImportJob, Role
from annotation.projects.forms import LabelFilesForm
from annotation.projects.label_imports import label_import_progress, label_import_queue
from concord.errors import ConcordError
from concord.tasks import NOT_SENT

JOBS_SHOWN = 20


@login_required
def project_label_imports_page(request, slug: str):
    project = access_project(request.user, slug, at_least=Role.ADMIN)
    form = LabelFilesForm(request.POST or None, request.FILES or None)
    if request.method == "POST" and form.is_valid():
        try:
            queued = label_import_queue(
                project=project,
                user=request.user,
                uploads=form.cleaned_data["label_files"],
                refuse_repeats=form.cleaned_data["refuse_repeats"],
            )
        except ConcordError as exc:
            form.add_error("label_files", exc.message)
        else:
            if not queued.sent:
                messages.warning(request, NOT_SENT)
            return redirect("project-label-import", slug=project.slug, pk=queued.job.pk)
    jobs = project.label_imports.select_related("requested_by")[:JOBS_SHOWN]
    context = {"project": project, "form": form, "jobs": jobs}
    return render(request, "annotation/label_imports.html", context)


@login_required
def project_label_import_page(request, slug: str, pk: int):
    project = access_project(request.user, slug, at_least=Role.ADMIN)
    job = get_object_or_404(
        LabelImportJob.objects.select_related("requested_by"), project=project, pk=pk
    )
    context = {"project": project, "job": job, "progress": label_import_progress(job)}
    return render(request, "annotation/label_import_job.html", context)
