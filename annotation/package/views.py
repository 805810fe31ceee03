"""The replication package from the browser (the project's admins): upload a .zip into an empty
project, follow the background job, read its report by file and line."""

from __future__ import annotations

from django import forms
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.shortcuts import get_object_or_404, redirect, render
from django.utils.translation import gettext_lazy as _
from django.views.decorators.http import require_http_methods

from annotation.access import access_project
from annotation.models import PackageImport, Role
from annotation.package.jobs import package_import_progress, package_import_queue
from concord.errors import ConcordError
from concord.tasks import NOT_SENT

JOBS_SHOWN = 20


class PackageForm(forms.Form):
    package = forms.FileField(
        label=_("Replication package (.zip)"),
        help_text=_(
            "The study's layout: label files, yearly URL lists, taxonomy details, keyword "
            "lists; UTF-8. All or nothing."
        ),
    )


@login_required
@require_http_methods(["GET", "POST"])
def project_package_imports_page(request, slug: str):
    project = access_project(request.user, slug, at_least=Role.ADMIN)
    form = PackageForm(request.POST or None, request.FILES or None)
    if request.method == "POST" and form.is_valid():
        upload = form.cleaned_data["package"]
        try:
            queued = package_import_queue(
                project=project, user=request.user, name=upload.name, data=upload.read()
            )
        except ConcordError as exc:
            form.add_error("package", exc.message)
        else:
            if not queued.sent:
                messages.warning(request, NOT_SENT)
            return redirect("project-package-import", slug=project.slug, pk=queued.job.pk)
    context = {
        "project": project,
        "form": form,
        "jobs": project.package_imports.select_related("requested_by")[:JOBS_SHOWN],
        "has_items": project.items.exists(),
    }
    return render(request, "annotation/package_imports.html", context)


@login_required
def project_package_import_page(request, slug: str, pk: int):
    project = access_project(request.user, slug, at_least=Role.ADMIN)
    job = get_object_or_404(
        PackageImport.objects.select_related("requested_by"), project=project, pk=pk
    )
    context = {"project": project, "job": job, "progress": package_import_progress(job)}
    return render(request, "annotation/package_import_job.html", context)
