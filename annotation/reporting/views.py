"""The Reports section of a project (leads and admins): the agreement dashboard, the confusion
view, the distribution of final labels and the volunteers' statistics, one tab each. Every chart
is server-side SVG with its table beside it, and downloads as an SVG file (report_chart) or, in
the browser, as PNG (static/js/chart-download.js). Also the project's agreement page and its
kappa chart as an SVG download (project_agreement_page, project_agreement_chart)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any
from urllib.parse import urlencode

from django.contrib.auth.decorators import login_required
from django.contrib.humanize.templatetags.humanize import ordinal
from django.core.paginator import Paginator
from django.http import Http404, QueryDict
from django.shortcuts import render
from django.urls import reverse
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy, ngettext

from annotation.access import access_project
from annotation.duplicates.selectors import duplicates_by_repository
from annotation.models import Project, Role
from annotation.reporting.agreement import GROUPINGS, project_agreement
from annotation.reporting.charts import (
    bar_chart,
    dot_chart,
    heat_grid,
    kappa_chart,
    stacked_chart,
    week_chart,
)
from annotation.reporting.reports import (
    UnknownPair,
    iso_week,
    items_with_pair,
    labels_of,
    names_by_code,
    pair_level,
    project_confusion,
    project_dashboard,
    project_distribution,
    volunteer_throughput,
)
from annotation.reporting.stats import (
    MIN_SHARED_ITEMS,
    kappa_heatmap,
    pairwise_kappa,
    volunteer_stats,
)
from annotation.reporting.words import band_name, level_name
from taxonomy.agreement import LANDIS_KOCH_BANDS
from taxonomy.models import Level, bilingual_name

ITEMS_PER_PAGE = 50
CI = "95%"  # a placeholder in the captions: a bare "%" would read as a format directive
TABS = (
    ("agreement", gettext_lazy("Agreement"), "project-reports"),
    ("confusion", gettext_lazy("Confusion"), "project-reports-confusion"),
    ("distribution", gettext_lazy("Distribution"), "project-reports-distribution"),
    ("volunteers", gettext_lazy("Volunteers"), "project-reports-volunteers"),
)


@dataclass(frozen=True)
class Chart:
    name: str  # also the download's URL part
    template: str
    geometry: Any
    caption: str


def _level(params: QueryDict, default: str = Level.THEME) -> str:
    level = params.get("level", default)
    return level if level in Level.values else default


def agreement_context(project: Project, params: QueryDict) -> dict:
    dashboard = project_dashboard(project)
    level = _level(params)
    week_level = level_name(level)
    charts = [
        Chart(
            "kappa_by_type",
            "reports/_dot_chart.svg",
            dot_chart(_("Fleiss' kappa per final type and level"), dashboard.rows("type")),
            _(
                "Fleiss' kappa with its %(ci)s confidence interval per final label's type, at "
                "each level (circle: type, square: theme, diamond: sub-theme; hollow: "
                "Krippendorff's alpha where Fleiss' kappa is undefined)."
            )
            % {"ci": CI},
        ),
        Chart(
            "kappa_by_repository",
            "reports/_dot_chart.svg",
            dot_chart(_("Fleiss' kappa per repository and level"), dashboard.rows("repository")),
            _("Fleiss' kappa with its %(ci)s confidence interval per repository, at each level.")
            % {"ci": CI},
        ),
        Chart(
            "kappa_by_week",
            "reports/_week_chart.svg",
            week_chart(
                _("Fleiss' kappa per week, %(level)s level") % {"level": week_level},
                dashboard.by_week,
                level,
            ),
            _(
                "Fleiss' kappa (%(level)s level) of the items whose %(ordinal)s label was "
                "given in each ISO week, with its 95%% confidence interval."
            )
            % {"level": week_level, "ordinal": ordinal(dashboard.k)},
        ),
    ]
    return {
        "dashboard": dashboard,
        "level": level,
        "level_name": week_level,
        "type_rows": dashboard.rows("type"),
        "repository_rows": dashboard.rows("repository"),
        "week_rows": [(w, w.cells[level]) for w in dashboard.by_week],
        "uneven": [cell for cell in dashboard.by_type[0].values() if cell.uneven],
        "charts": {c.name: c for c in charts},
    }


def confusion_context(project: Project, params: QueryDict) -> dict:
    level = _level(params)
    confusion = project_confusion(project, level=level)
    shown = confusion.heat_categories()
    cats = confusion.categories
    items_url = reverse("project-reports-items", args=[project.slug])
    values, titles, hrefs = [], [], []
    for i in shown:
        values.append([confusion.counts[i][j] if i != j else None for j in shown])
        titles.append(
            [
                _pair_title(cats[i].code, cats[i].items)
                if i == j
                else _pair_title(cats[i].code, confusion.counts[i][j], cats[j].code)
                for j in shown
            ]
        )
        hrefs.append(
            [
                f"{items_url}?{urlencode({'a': cats[i].code, 'b': cats[j].code})}"
                if i != j and confusion.counts[i][j]
                else ""
                for j in shown
            ]
        )
    grid = heat_grid(
        _("Labels mixed up on the same item, %(level)s level") % {"level": level_name(level)},
        [f"{cats[i].code} {cats[i].chart_name}" for i in shown],
        [cats[i].code for i in shown],
        values,
        titles=titles,
        hrefs=hrefs,
    )
    caption = _(
        "Items carrying a label in both the row's and the column's category (from different "
        "volunteers). Every cell prints its count and links to those items."
    )
    if len(shown) < len(cats):
        caption += " " + _("Showing the %(shown)d most confused of %(all)d categories.") % {
            "shown": len(shown),
            "all": len(cats),
        }
    pairs = [
        (pair, f"{items_url}?{urlencode({'a': pair.a.code, 'b': pair.b.code})}")
        for pair in confusion.pairs[:25]
    ]
    return {
        "level": level,
        "level_name": level_name(level),
        "confusion": confusion,
        "pairs": pairs,
        "charts": {"confusion": Chart("confusion", "reports/_heat_grid.svg", grid, caption)},
    }


def distribution_context(project: Project, params: QueryDict) -> dict:
    distribution = project_distribution(project)
    types = distribution.by_type
    charts = [
        Chart(
            "final_by_type",
            "reports/_bar_chart.svg",
            bar_chart(
                _("Final labels per type"), [(f"{t.code} {t.chart_name}", t.items) for t in types]
            ),
            _("Final labels per type; every bar prints its count and share."),
        ),
        Chart(
            "final_by_theme",
            "reports/_bar_chart.svg",
            bar_chart(
                _("Final labels per theme"),
                [(f"{t.code} {t.chart_name}", t.items) for t in distribution.by_theme],
            ),
            _("Final labels per theme, most first (final labels at type depth have no theme)."),
        ),
        Chart(
            "final_by_repository",
            "reports/_stacked_chart.svg",
            stacked_chart(
                _("Final labels per repository and type"),
                "final-by-repository",
                [f"{t.code} {t.chart_name}" for t in types],
                [
                    (r.repository, [r.by_type[t.code] for t in types])
                    for r in distribution.by_repository
                ],
            ),
            _(
                "Final labels per repository, stacked by type (each type has its own fill "
                "pattern, named in the legend); segments print their counts where they fit."
            ),
        ),
    ]
    return {
        "distribution": distribution,
        "charts": {c.name: c for c in charts},
        "duplicates": duplicates_by_repository(project),  # near-duplicate issues (#29)
    }


def volunteers_context(project: Project, params: QueryDict) -> dict:
    rows = volunteer_stats(project)
    matrix = pairwise_kappa(project, rows) if len(rows) > 1 else None
    throughput = volunteer_throughput(project, {s.user_id: s.name for s in rows})
    charts = []
    if matrix is not None:
        charts.append(
            Chart(
                "volunteer_kappa",
                "reports/_volunteer_heatmap.svg",
                kappa_heatmap(matrix),
                _(
                    "Cohen's kappa between each pair of volunteers on the items both labelled "
                    "(a dash: fewer than %(n)d shared items, or undefined)."
                )
                % {"n": MIN_SHARED_ITEMS},
            )
        )
    charts.append(
        Chart(
            "throughput",
            "reports/_heat_grid.svg",
            heat_grid(
                _("Labels per volunteer per week"),
                [name for _, name in throughput.volunteers],
                [iso_week(week) for week in throughput.weeks],
                throughput.labels,
                cell=52,
            ),
            _("Labels given per ISO week (UTC); every cell prints its count."),
        )
    )
    return {
        "rows": rows,
        "kappa_rows": list(zip(rows, matrix.kappa, strict=True)) if matrix else [],
        "throughput": throughput,
        "throughput_weeks": [iso_week(week) for week in throughput.weeks],
        "throughput_rows": list(zip(throughput.volunteers, throughput.labels, strict=True)),
        "charts": {c.name: c for c in charts},
    }


CONTEXTS = {
    "agreement": agreement_context,
    "confusion": confusion_context,
    "distribution": distribution_context,
    "volunteers": volunteers_context,
}
CHART_TABS = {
    "kappa_by_type": "agreement",
    "kappa_by_repository": "agreement",
    "kappa_by_week": "agreement",
    "confusion": "confusion",
    "final_by_type": "distribution",
    "final_by_theme": "distribution",
    "final_by_repository": "distribution",
    "volunteer_kappa": "volunteers",
    "throughput": "volunteers",
}


def _tab_page(request, slug: str, tab: str):
    project = access_project(request.user, slug, at_least=Role.LEAD)
    context = CONTEXTS[tab](project, request.GET)
    context.update(
        project=project,
        tab=tab,
        tabs=TABS,
        levels=Level.choices,
        bands=_band_legend(),
        query=request.GET.urlencode(),
    )
    return render(request, f"reports/{tab}.html", context)


def _pair_title(code: str, n: int, other: str = "") -> str:
    """A heat-grid cell's tooltip: a category's own count, or a pair's."""
    if not other:
        return ngettext("%(code)s: %(n)d item", "%(code)s: %(n)d items", n) % {"code": code, "n": n}
    return ngettext(
        "%(code)s and %(other)s: %(n)d item labelled both",
        "%(code)s and %(other)s: %(n)d items labelled both",
        n,
    ) % {"code": code, "other": other, "n": n}


def _band_legend() -> list[tuple[str, str, str]]:
    """Landis & Koch's bands with their ranges, for the page's legend."""
    out, lower = [], None
    for upper, name in LANDIS_KOCH_BANDS:
        span = (
            _("up to %(upper).2f") % {"upper": upper}
            if lower is None
            else _("%(lower).2f to %(upper).2f") % {"lower": lower, "upper": upper}
        )
        out.append((name, band_name(name), span))
        lower = upper
    return out


@login_required
def reports_agreement(request, slug: str):
    return _tab_page(request, slug, "agreement")


@login_required
def reports_confusion(request, slug: str):
    return _tab_page(request, slug, "confusion")


@login_required
def reports_distribution(request, slug: str):
    return _tab_page(request, slug, "distribution")


@login_required
def reports_volunteers(request, slug: str):
    return _tab_page(request, slug, "volunteers")


@login_required
def report_chart(request, slug: str, name: str):
    """One report chart as a standalone SVG file (the same geometry as on its tab)."""
    project = access_project(request.user, slug, at_least=Role.LEAD)
    if name not in CHART_TABS:
        raise Http404(_("No chart named %(name)s.") % {"name": repr(name)})
    charts = CONTEXTS[CHART_TABS[name]](project, request.GET)["charts"]
    if name not in charts:
        raise Http404(_("This chart has no data yet."))
    chart = charts[name]
    response = render(
        request,
        chart.template,
        {"chart": chart.geometry, "standalone": True},
        content_type="image/svg+xml",
    )
    level = f"-{request.GET['level']}" if request.GET.get("level") in Level.values else ""
    response["Content-Disposition"] = f'attachment; filename="{project.slug}-{name}{level}.svg"'
    return response


@login_required
def report_items(request, slug: str):
    """The items that carry a label in category `a` and one in `b` (from the confusion view)."""
    project = access_project(request.user, slug, at_least=Role.LEAD)
    a, b = request.GET.get("a", "").strip(), request.GET.get("b", "").strip()
    context = {"project": project, "a": a, "b": b, "tab": "confusion", "tabs": TABS, "level": ""}
    try:
        level = pair_level(project, a, b)
    except UnknownPair as exc:
        context["error"] = str(exc)
        return render(request, "reports/items.html", context, status=400)
    page = Paginator(items_with_pair(project, a, b), ITEMS_PER_PAGE).get_page(
        request.GET.get("page")
    )
    items = list(page.object_list)
    labels = labels_of(items)
    names = names_by_code(project.taxonomy.nodes.filter(code__in=[a, b]))
    context.update(
        level=level,
        name_a=bilingual_name(*names.get(a, ("", ""))),
        name_b=bilingual_name(*names.get(b, ("", ""))),
        page=page,
        rows=[(item, labels.get(item.pk, [])) for item in items],
        pair_query=urlencode({"a": a, "b": b}),
        confusion_query=urlencode({"level": level}),
    )
    return render(request, "reports/items.html", context)


# ---------------------------------------------------------------- the agreement page


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
