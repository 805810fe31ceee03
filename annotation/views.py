from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.db.models import Count
from django.shortcuts import redirect, render

from annotation.access import access_project, projects_of, user_role
from annotation.charts import kappa_chart
from annotation.forms import CANDIDATES, ItemsFromSourceForm
from annotation.intake import project_items_from_source
from annotation.models import Role
from annotation.selectors import GROUPINGS, project_agreement
from concord.errors import ConcordError
from taxonomy.models import Level


@login_required
def home(request):
    projects = projects_of(request.user).annotate(n_items=Count("items", distinct=True))
    return render(request, "annotation/home.html", {"projects": projects})


@login_required
def project_detail(request, slug: str):
    project = access_project(request.user, slug)
    role = user_role(request.user, project)
    stages = dict(project.items.values_list("stage").annotate(n=Count("pk")).order_by())
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
                source=source,
                candidates_only=form.cleaned_data["which"] == CANDIDATES,
            )
        except ConcordError as exc:
            form.add_error("which", exc.message)
        else:
            messages.success(request, f"Added {added} new items from {source}.")
            return redirect("project-detail", slug=project.slug)
    context = {"project": project, "form": form}
    return render(request, "annotation/project_items_add.html", context)


def _agreement_query(request) -> tuple[str, str]:
    level = request.GET.get("level", Level.THEME)
    by = request.GET.get("by", "type")
    if level not in Level.values:
        level = Level.THEME
    if by not in GROUPINGS:
        by = "type"
    return level, by


@login_required
def project_agreement_page(request, slug: str):
    project = access_project(request.user, slug, at_least=Role.LEAD)
    level, by = _agreement_query(request)
    report = project_agreement(project, level=level, by=by)
    context = {
        "project": project,
        "report": report,
        "chart": kappa_chart(report),
        "levels": Level.choices,
        "groupings": GROUPINGS,
        "query": request.GET.urlencode(),
    }
    return render(request, "annotation/project_agreement.html", context)


@login_required
def project_agreement_chart(request, slug: str):
    """The same chart as a standalone SVG file, for download."""
    project = access_project(request.user, slug, at_least=Role.LEAD)
    level, by = _agreement_query(request)
    chart = kappa_chart(project_agreement(project, level=level, by=by))
    response = render(
        request,
        "annotation/_kappa_chart.svg",
        {"chart": chart, "standalone": True},
        content_type="image/svg+xml",
    )
    response["Content-Disposition"] = (
        f'attachment; filename="{project.slug}-kappa-{level}-by-{by}.svg"'
    )
    return response
