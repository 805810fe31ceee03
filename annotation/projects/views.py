"""The project pages: my projects, one project's overview, adding a source's or a URL list's
issues as items, creating a project, editing its settings, archiving it."""

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.db.models import Count
from django.shortcuts import redirect, render
from django.utils.translation import ngettext
from django.views.decorators.http import require_POST

from annotation.access import (
    access_project,
    may_create_projects,
    projects_of,
    require_project_creator,
    user_role,
)
from annotation.blindness import stage_counts_seen
from annotation.models import Project, Role
from annotation.projects.forms import (
    CANDIDATES,
    ItemsFromSourceForm,
    ItemsFromUrlListForm,
    ProjectForm,
)
from annotation.projects.services import project_items_from_source, project_items_from_url_list
from annotation.projects.settings import project_archive, project_create, project_update
from annotation.rendering import markdown_to_html
from concord.errors import ConcordError


@login_required
def home(request):
    projects = projects_of(request.user).annotate(n_items=Count("items", distinct=True))
    context = {"projects": projects, "may_create": may_create_projects(request.user)}
    return render(request, "annotation/home.html", context)


@login_required
def project_detail(request, slug: str):
    project = access_project(request.user, slug)
    role = user_role(request.user, project)
    counts = dict(project.items.values_list("stage").annotate(n=Count("pk")).order_by())
    stages = stage_counts_seen(counts, project, role)
    context = {"project": project, "role": role, "stages": stages, "total": sum(stages.values())}
    return render(request, "annotation/project_detail.html", context)


@login_required
def project_items_from_source_page(request, slug: str):
    """Leads and admins add a harvested source's issues (all, or keyword candidates) as items."""
    project = access_project(request.user, slug, at_least=Role.LEAD)
    form = ItemsFromSourceForm(request.POST or None, initial={"source": request.GET.get("source")})
    if request.method == "POST" and form.is_valid():
        source = form.cleaned_data["source"]
        try:
            added = project_items_from_source(
                project=project,
                actor=request.user,
                source=source,
                candidates_only=form.cleaned_data["which"] == CANDIDATES,
            )
        except ConcordError as exc:
            form.add_error("which", exc.message)
        else:
            messages.success(
                request,
                ngettext(
                    "Added %(n)d new item from %(source)s.",
                    "Added %(n)d new items from %(source)s.",
                    added,
                )
                % {"n": added, "source": source},
            )
            return redirect("project-detail", slug=project.slug)
    context = {"project": project, "form": form}
    return render(request, "annotation/project_items_add.html", context)


@login_required
def project_items_from_url_list_page(request, slug: str):
    """Admins add the issues of a URL list (all, or a keyword set's candidates) as items."""
    project = access_project(request.user, slug, at_least=Role.ADMIN)
    form = ItemsFromUrlListForm(request.POST or None, request.FILES or None)
    result = None
    if request.method == "POST" and form.is_valid():
        name, text = form.cleaned_data["file"]
        try:
            result = project_items_from_url_list(
                project=project,
                actor=request.user,
                text=text,
                name=name,
                keyword_set=form.cleaned_data["keyword_set"],
            )
        except ConcordError as exc:
            form.add_error("file", exc.message)
    context = {"project": project, "form": form, "result": result}
    return render(request, "annotation/project_items_from_url_list.html", context)


def _settings_page(request, form: ProjectForm, save, *, project=None):
    """The create and edit pages: "Preview" shows the guidelines as volunteers will see them
    (sanitized like every Markdown in Concord) and saves nothing; "Save" calls `save`."""
    preview = None
    if request.method == "POST" and "preview" in request.POST:
        preview = markdown_to_html(request.POST.get("guidelines", ""))
    elif request.method == "POST" and form.is_valid():
        try:
            saved = save(form.cleaned_data)
        except ConcordError as exc:
            form.add_error(None, exc.message)
        else:
            messages.success(request, f"Project {saved.name} saved.")
            return redirect("project-detail", slug=saved.slug)
    context = {"form": form, "project": project, "preview": preview}
    return render(request, "annotation/project_form.html", context)


@login_required
def project_create_page(request):
    require_project_creator(request.user)
    form = ProjectForm(request.POST or None)
    return _settings_page(request, form, lambda data: project_create(creator=request.user, **data))


@login_required
def project_edit_page(request, slug: str):
    project = access_project(request.user, slug, at_least=Role.ADMIN)
    form = ProjectForm(request.POST or None, instance=Project.objects.get(pk=project.pk))
    return _settings_page(
        request,
        form,
        lambda data: project_update(project=project, actor=request.user, **data),
        project=project,
    )


@require_POST
@login_required
def project_archive_page(request, slug: str):
    """Archive (archive=1) or restore (archive=0) the project."""
    project = access_project(request.user, slug, at_least=Role.ADMIN)
    archived = request.POST.get("archive") == "1"
    project_archive(project=project, actor=request.user, archived=archived)
    messages.success(request, f"Project {project.name} {'archived' if archived else 'restored'}.")
    return redirect("project-detail", slug=project.slug)
