"""The Reports section: the agreement dashboard, the confusion view, the distribution and the
volunteers' throughput, checked against statsmodels, the krippendorff package and small examples
worked out by hand; then the pages, the SVG downloads and the API."""

from __future__ import annotations

import datetime as dt
from collections import Counter

import krippendorff
import numpy as np
import pytest
from statsmodels.stats.inter_rater import fleiss_kappa as statsmodels_fleiss_kappa

from annotation.figures.labels import items_by_week
from annotation.models import Annotation, Method, Resolution, Stage
from annotation.reporting.agreement import ALL_ITEMS
from annotation.reporting.charts import Scale, kappa_bands
from annotation.reporting.reports import (
    project_confusion,
    project_dashboard,
    project_distribution,
    volunteer_throughput,
)
from tests.annotation.lead_helpers import labeled_item, node, trio_fixture  # noqa: F401
from tests.annotation.test_import_labels import read_study_file
from tests.conftest import STUDY

UTC = dt.UTC


def table(rows: list[list[str]]) -> np.ndarray:
    codes = sorted({c for r in rows for c in r})
    return np.array([[Counter(r)[c] for c in codes] for r in rows])


def cell(rows, group: str, level: str):
    return next(r[level] for r in rows if r[level].group == group)


# ---------------------------------------------------------------- dashboard on the study's labels


@pytest.fixture
def mindspeed_rows():
    _, rows = read_study_file(STUDY / "labels" / "MindSpeed.csv")
    return rows


def test_dashboard_type_by_level_matches_statsmodels_on_the_csv(labeled_project, mindspeed_rows):
    dashboard = project_dashboard(labeled_project)
    themes = [r[1:-1] for r in mindspeed_rows]
    types = [[c.split(".")[0] for c in r] for r in themes]
    overall = cell(dashboard.by_type, ALL_ITEMS, "theme")
    assert overall.kappa == pytest.approx(statsmodels_fleiss_kappa(table(themes)))
    assert (overall.n_items, overall.fleiss.n_raters, overall.left_out) == (80, 7, 0)
    assert cell(dashboard.by_type, ALL_ITEMS, "type").kappa == pytest.approx(
        statsmodels_fleiss_kappa(table(types))
    )
    for code, name in [("A", "Question"), ("B", "Requirement"), ("C", "Bug")]:
        mine = [r[1:-1] for r in mindspeed_rows if r[-1].startswith(code)]
        assert cell(dashboard.by_type, f"{code} {name}", "theme").kappa == pytest.approx(
            statsmodels_fleiss_kappa(table(mine))
        )
    # the repository table has the whole project in its one repository
    repository = cell(dashboard.by_repository, "ascend/MindSpeed", "theme")
    assert repository.kappa == pytest.approx(overall.kappa)
    assert overall.ci_low < overall.kappa < overall.ci_high


def test_subtheme_level_without_ratings_explains_itself(labeled_project):
    dashboard = project_dashboard(labeled_project)
    for row in dashboard.by_type:
        sub = row["subtheme"]
        assert (sub.fleiss, sub.alpha, sub.n_items) == (None, None, 0)
        assert sub.problem == "No labels reach sub-theme level; try a coarser level."


def test_dashboard_takes_a_handful_of_queries(labeled_project, django_assert_max_num_queries):
    # the first read after labels written around the services rebuilds the tallies
    with django_assert_max_num_queries(11):
        project_dashboard(labeled_project)
    with django_assert_max_num_queries(4):  # the tree, the tallies, the types' names
        project_dashboard(labeled_project)


# ---------------------------------------------------------------- uneven coverage: alpha


@pytest.fixture
def uneven(project, trio):
    """k = 3; the fourth item has only two labels."""
    patterns = [["C.1", "C.1", "C.1"], ["C.2", "C.2", "C.1"], ["B.1", "B.1", "B.1"], ["C.2", "C.2"]]
    for codes in patterns:
        labeled_item(project, trio[: len(codes)], codes, cross_check=False)
    return patterns


def test_uneven_coverage_leaves_items_out_of_fleiss_and_says_why(project, uneven):
    overall = cell(project_dashboard(project).by_type, ALL_ITEMS, "theme")
    assert overall.left_out == 1
    assert overall.left_out_why == "1 item has fewer than 3 labels at theme level"
    assert overall.fleiss.n_items == 3
    assert overall.kappa == pytest.approx(statsmodels_fleiss_kappa(table(uneven[:3])))
    # alpha takes every item with two labels or more, as the krippendorff package does
    codes = sorted({c for r in uneven for c in r})
    counts = np.array([[Counter(r)[c] for c in codes] for r in uneven])
    expected = krippendorff.alpha(value_counts=counts, level_of_measurement="nominal")
    assert overall.alpha.n_items == 4
    assert overall.alpha_value == pytest.approx(expected)


def test_uneven_coverage_is_named_on_the_page(client, personas, project, uneven):
    client.force_login(personas["lead"])
    html = client.get(f"/projects/{project.slug}/reports/").content.decode()
    assert "Uneven coverage" in html
    assert "1 item has fewer than 3 labels at theme level" in html
    assert "(1 left out of Fleiss)" in html


# ---------------------------------------------------------------- weekly grouping


def _label_times(item, moments):
    for annotation, moment in zip(item.annotations.order_by("pk"), moments, strict=True):
        Annotation.objects.filter(pk=annotation.pk).update(created_at=moment)


def at(day: int, hour: int = 12) -> dt.datetime:
    return dt.datetime(2025, 1, day, hour, tzinfo=UTC)  # 2025-01-06 is the Monday of W02


@pytest.fixture
def weekly(project, trio):
    """k = 3. Items 1-3 get their third label in W02, items 4-5 in W03 (item 4's first labels
    were in W02), item 6 has two labels only and is in no week."""
    plan = [
        (["C.1", "C.1", "C.1"], [at(6), at(7), at(8)]),
        (["C.2", "C.2", "C.1"], [at(6), at(6), at(12, 23)]),  # Sunday 23:00 UTC: still W02
        (["B.1", "B.1", "C.1"], [at(7), at(9), at(10)]),
        (["C.1", "C.2", "C.2"], [at(8), at(9), at(13, 0)]),  # Monday 00:00: W03
        (["B.1", "B.1", "B.1"], [at(14), at(14), at(15)]),
        (["C.2", "C.2"], [at(14), at(15)]),
    ]
    items = []
    for codes, moments in plan:
        item = labeled_item(project, trio[: len(codes)], codes, cross_check=False)
        _label_times(item, moments)
        items.append(item)
    return items, plan


def test_items_fall_in_the_iso_week_of_their_kth_label(project, weekly):
    items, _ = weekly
    weeks = items_by_week(project, 3)
    assert {week: sorted(ids.tolist()) for week, ids in weeks.items()} == {
        dt.date(2025, 1, 6): [items[0].pk, items[1].pk, items[2].pk],
        dt.date(2025, 1, 13): [items[3].pk, items[4].pk],
    }


def test_weekly_kappa_is_fleiss_of_that_weeks_items(project, weekly):
    _, plan = weekly
    dashboard = project_dashboard(project)
    assert [(w.week, w.start, w.n_items) for w in dashboard.by_week] == [
        ("2025-W02", dt.date(2025, 1, 6), 3),
        ("2025-W03", dt.date(2025, 1, 13), 2),
    ]
    w02 = dashboard.by_week[0].cells["theme"]
    assert w02.kappa == pytest.approx(statsmodels_fleiss_kappa(table([p[0] for p in plan[:3]])))
    w03 = dashboard.by_week[1].cells["type"]
    types = [[c[0] for c in p[0]] for p in plan[3:5]]
    assert w03.kappa == pytest.approx(statsmodels_fleiss_kappa(table(types)))


# ---------------------------------------------------------------- confusion: three items


@pytest.fixture
def three_items(project, trio):
    return [
        labeled_item(project, trio, codes, cross_check=False)
        for codes in (["C.1", "C.1", "C.2"], ["C.1", "C.2", "B.1"], ["B.1", "B.1", "B.1"])
    ]


def test_confusion_counts_items_with_both_labels(project, three_items):
    confusion = project_confusion(project, level="theme")
    codes = [c.code for c in confusion.categories]
    assert codes == ["B.1", "C.1", "C.2"]
    # item 1: C.1+C.2; item 2: C.1+C.2, B.1+C.1, B.1+C.2; item 3: one category only
    assert confusion.counts == [[2, 1, 1], [1, 2, 2], [1, 2, 2]]
    assert [(p.a.code, p.b.code, p.items) for p in confusion.pairs] == [
        ("C.1", "C.2", 2),
        ("B.1", "C.1", 1),
        ("B.1", "C.2", 1),
    ]
    assert (confusion.n_items, confusion.n_mixed) == (3, 2)
    by_type = project_confusion(project, level="type")
    assert [(p.a.code, p.b.code, p.items) for p in by_type.pairs] == [("B", "C", 1)]


def test_confusion_page_links_cells_to_the_items_list(client, personas, project, three_items):
    client.force_login(personas["lead"])
    html = client.get(f"/projects/{project.slug}/reports/confusion/?level=theme").content.decode()
    items = f"/projects/{project.slug}/reports/items/"
    assert html.count(f"{items}?a=C.1&amp;b=C.2") == 2  # heat-map cell C.1 x C.2 and the pair row
    assert html.count(f"{items}?a=C.2&amp;b=C.1") == 1  # the mirror cell C.2 x C.1
    page = client.get(f"/projects/{project.slug}/reports/items/?a=C.2&b=C.1")
    assert page.status_code == 200
    shown = [row.pk for row, _ in page.context["rows"]]
    assert shown == [three_items[0].pk, three_items[1].pk]
    assert page.context["page"].paginator.count == 2


def test_items_list_refuses_codes_of_different_levels(client, personas, project, three_items):
    client.force_login(personas["lead"])
    response = client.get(f"/projects/{project.slug}/reports/items/?a=C&b=C.2")
    assert response.status_code == 400
    assert "same level" in response.content.decode()


def test_items_list_is_paginated(client, personas, project, trio):
    for _ in range(52):
        labeled_item(project, trio[:2], ["C.1", "C.2"], cross_check=False)
    client.force_login(personas["lead"])
    url = f"/projects/{project.slug}/reports/items/?a=C.1&b=C.2"
    first = client.get(url)
    assert len(first.context["rows"]) == 50
    assert "Page 1 of 2" in first.content.decode()
    assert len(client.get(url + "&page=2").context["rows"]) == 2


# ---------------------------------------------------------------- distribution, throughput


def test_distribution_counts_final_labels_like_the_csv(labeled_project, mindspeed_rows):
    finals = Counter(r[-1] for r in mindspeed_rows)
    distribution = project_distribution(labeled_project)
    per_type = Counter()
    for code, n in finals.items():
        per_type[code.split(".")[0]] += n
    assert {t.code: t.items for t in distribution.by_type} == {
        "A": per_type["A"],
        "B": per_type["B"],
        "C": per_type["C"],
    }
    assert {t.code: t.items for t in distribution.by_theme} == dict(finals)
    assert [(r.repository, r.total) for r in distribution.by_repository] == [
        ("ascend/MindSpeed", 80)
    ]
    assert distribution.total == 80


def test_distribution_per_repository_by_type(project, trio):
    for codes, final, repo in [
        (["C.1"] * 3, "C.1", "Megatron-LM"),
        (["C.2"] * 3, "C.2", "Megatron-LM"),
        (["B.1"] * 3, "B.1", "Megatron-LM"),
        (["A.1"] * 3, "A.1", "apex"),
    ]:
        item = labeled_item(project, trio, codes, cross_check=False, repo=repo)
        Resolution.objects.create(item=item, node=node(project, final), method=Method.UNANIMOUS)
        project.items.filter(pk=item.pk).update(stage=Stage.FINAL)
    rows = project_distribution(project).by_repository
    assert [(r.repository, r.by_type, r.total) for r in rows] == [
        ("NVIDIA/apex", {"A": 1, "B": 0, "C": 0}, 1),
        ("NVIDIA/Megatron-LM", {"A": 0, "B": 1, "C": 2}, 3),
    ]


def test_throughput_counts_labels_per_volunteer_per_week(project, weekly, trio):
    names = {v.pk: v.username for v in trio}
    throughput = volunteer_throughput(project, names)
    assert throughput.weeks == [dt.date(2025, 1, 6), dt.date(2025, 1, 13)]
    assert [name for _, name in throughput.volunteers] == [
        "volunteer_a",
        "volunteer_b",
        "volunteer_c",
    ]
    # labels per week, from the plan in `weekly` (label i of an item is volunteer i's)
    assert throughput.labels == [[4, 2], [4, 2], [3, 2]]


# ---------------------------------------------------------------- chart geometry: bands


def test_bands_cover_the_axis_with_their_names():
    positive = kappa_bands(Scale(0.0, 1.0, 100, 500))
    assert [b.name for b in positive] == [
        "slight",
        "fair",
        "moderate",
        "substantial",
        "almost perfect",
    ]
    assert [(b.start, b.size) for b in positive] == [(100 + 100 * i, 100) for i in range(5)]
    negative = kappa_bands(Scale(-0.2, 1.0, 0, 600))
    assert (negative[0].name, negative[0].start, negative[0].size) == ("poor", 0, 100)


# ---------------------------------------------------------------- pages and downloads


TABS = ["", "confusion/", "distribution/", "volunteers/"]
CHARTS = [
    "kappa_by_type",
    "kappa_by_repository",
    "kappa_by_week",
    "confusion",
    "final_by_type",
    "final_by_theme",
    "final_by_repository",
    "volunteer_kappa",
    "throughput",
]


@pytest.mark.parametrize("tab", TABS)
def test_every_tab_shows_charts_with_their_tables(client, personas, labeled_project, tab):
    client.force_login(personas["lead"])
    response = client.get(f"/projects/{labeled_project.slug}/reports/{tab}")
    assert response.status_code == 200
    html = response.content.decode()
    assert html.count('class="chart report-chart"') >= 1
    assert html.count("<table") >= html.count('class="chart report-chart"')
    assert 'class="secondary chart-png"' in html
    assert "<script>" not in html  # CSP: scripts come from files only


def test_agreement_tab_names_the_bands_and_prints_the_values(client, personas, labeled_project):
    client.force_login(personas["lead"])
    response = client.get(f"/projects/{labeled_project.slug}/reports/")
    html = response.content.decode()
    for band in ("slight", "fair", "moderate", "substantial", "almost perfect"):
        assert f">{band}</text>" in html
    overall = cell(response.context["dashboard"].by_type, ALL_ITEMS, "theme")
    assert f"{overall.kappa:.3f} [{overall.ci_low:.2f}, {overall.ci_high:.2f}]" in html
    assert "No labels reach sub-theme level" in html


@pytest.mark.parametrize("name", CHARTS)
def test_chart_downloads_as_an_svg_file(client, personas, labeled_project, name):
    client.force_login(personas["lead"])
    response = client.get(f"/projects/{labeled_project.slug}/reports/charts/{name}.svg")
    assert response.status_code == 200
    assert response["Content-Type"].startswith("image/svg+xml")
    assert response["Content-Disposition"] == (
        f'attachment; filename="{labeled_project.slug}-{name}.svg"'
    )
    body = response.content.decode()
    assert body.startswith('<?xml version="1.0" encoding="UTF-8"?>\n<svg xmlns=')


def test_svg_download_holds_the_values(client, personas, labeled_project, mindspeed_rows):
    client.force_login(personas["lead"])
    base = f"/projects/{labeled_project.slug}/reports/charts/"
    kappa = project_dashboard(labeled_project).by_type[0]["type"].kappa
    assert f"{kappa:.3f}" in client.get(base + "kappa_by_type.svg").content.decode()
    finals = Counter(r[-1][0] for r in mindspeed_rows)
    svg = client.get(base + "final_by_type.svg").content.decode()
    for n in finals.values():
        assert f">{n} ({100 * n / 80:.1f}%)</text>" in svg
    level = client.get(base + "confusion.svg?level=type")
    assert level["Content-Disposition"].endswith('-confusion-type.svg"')


@pytest.mark.parametrize("name", ["final_by_type", "final_by_theme", "final_by_repository"])
def test_charts_name_the_categories_in_the_readers_language(
    client, personas, labeled_project, name
):
    """In the Chinese interface a chart names each category in Chinese (#26; its table beside
    gives the English too); in English, by the study's names."""
    client.force_login(personas["lead"])
    url = f"/projects/{labeled_project.slug}/reports/charts/{name}.svg"
    nodes = list(labeled_project.taxonomy.nodes.all())
    client.cookies["django_language"] = "zh-hans"
    chinese = client.get(url).content.decode()
    client.cookies["django_language"] = "en"
    english = client.get(url).content.decode()
    shown = [n for n in nodes if f"{n.code} {n.name_zh}" in chinese]
    assert shown, "no category named in Chinese"
    assert all(f"{n.code} {n.name}" in english for n in shown)
    assert not any(n.name_zh in english for n in nodes)
    assert not any(n.name in chinese for n in nodes)


def test_unknown_chart_is_404(client, personas, labeled_project):
    client.force_login(personas["lead"])
    assert client.get(f"/projects/{labeled_project.slug}/reports/charts/pie.svg").status_code == 404


def test_reports_link_on_the_project_page_for_leads_only(client, personas, project):
    url = f"/projects/{project.slug}/"
    client.force_login(personas["lead"])
    assert f"/projects/{project.slug}/reports/" in client.get(url).content.decode()
    client.force_login(personas["volunteer_a"])
    assert f"/projects/{project.slug}/reports/" not in client.get(url).content.decode()


@pytest.mark.parametrize(
    ("who", "code"), [("volunteer_a", 403), ("outsider", 404), ("lead", 200), ("admin", 200)]
)
def test_reports_are_for_leads_and_admins(client, personas, project, who, code):
    client.force_login(personas[who])
    assert client.get(f"/projects/{project.slug}/reports/").status_code == code
    assert client.get(f"/api/projects/{project.slug}/reports/agreement/").status_code == code


# ---------------------------------------------------------------- API


def test_api_agreement(client, personas, labeled_project, mindspeed_rows):
    client.force_login(personas["lead"])
    data = client.get(f"/api/projects/{labeled_project.slug}/reports/agreement/").json()
    assert data["levels"] == ["type", "theme", "subtheme"]
    overall = next(c for c in data["by_type"] if c["group"] == ALL_ITEMS and c["level"] == "theme")
    themes = [r[1:-1] for r in mindspeed_rows]
    assert overall["kappa"] == pytest.approx(statsmodels_fleiss_kappa(table(themes)))
    assert overall["band"] in {"fair", "moderate", "substantial"}
    sub = next(c for c in data["by_type"] if c["group"] == ALL_ITEMS and c["level"] == "subtheme")
    assert sub["kappa"] is None
    assert "No labels reach" in sub["problem"]
    assert {c["group"] for c in data["by_repository"]} == {ALL_ITEMS, "ascend/MindSpeed"}
    assert [w["week"] for w in data["by_week"]] == [
        w.week for w in project_dashboard(labeled_project).by_week
    ]
    assert [c["level"] for c in data["by_week"][0]["cells"]] == ["type", "theme", "subtheme"]


def test_api_confusion(client, personas, project, three_items):
    client.force_login(personas["lead"])
    url = f"/api/projects/{project.slug}/reports/confusion/?level=theme"
    data = client.get(url).json()
    assert [c["code"] for c in data["categories"]] == ["B.1", "C.1", "C.2"]
    assert data["counts"] == [[2, 1, 1], [1, 2, 2], [1, 2, 2]]
    assert data["pairs"][0] == {"a": "C.1", "b": "C.2", "items": 2}
    bad = client.get(f"/api/projects/{project.slug}/reports/confusion/?level=nope")
    assert bad.status_code == 400


def test_api_distribution(client, personas, labeled_project):
    client.force_login(personas["lead"])
    data = client.get(f"/api/projects/{labeled_project.slug}/reports/distribution/").json()
    assert data["total"] == 80
    assert sum(t["items"] for t in data["by_type"]) == 80
    assert data["by_repository"][0]["repository"] == "ascend/MindSpeed"
