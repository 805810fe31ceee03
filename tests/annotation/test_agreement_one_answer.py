"""One answer for a project's agreement: the agreement page, its API, `manage.py agreement` and the
Reports dashboard all go through annotation.reporting.agreement.agreement_cell, so they give the
same Fleiss' kappa - with every item at k labels, and where a few items have fewer (or more)
labels (Fleiss on the items with k labels, the others counted and explained, alpha on all)."""

from __future__ import annotations

import io
import json
from collections import Counter

import numpy as np
import pytest
from django.core.management import call_command
from statsmodels.stats.inter_rater import fleiss_kappa as statsmodels_fleiss_kappa

from annotation.reporting.agreement import ALL_ITEMS, GroupAgreement, agreement_cell
from annotation.reporting.reports import Cell, project_dashboard
from tests.annotation.lead_helpers import labeled_item, trio_fixture  # noqa: F401

MEGATRON = ("NVIDIA", "Megatron-LM")
MINDSPEED = ("ascend", "MindSpeed")

# k = 3 (the project factory's overlap); every item has three labels
EQUAL = [
    (MEGATRON, ["C.1", "C.1", "C.1"]),
    (MEGATRON, ["C.2", "C.2", "C.1"]),
    (MEGATRON, ["B.1", "B.1", "B.1"]),
    (MEGATRON, ["A.1", "A.1", "C.1"]),
    (MINDSPEED, ["B.1", "B.2", "B.1"]),
    (MINDSPEED, ["C.2", "C.2", "C.2"]),
    (MINDSPEED, ["A.2", "A.2", "A.2"]),
]
# ... and three items off k: two with fewer labels, one with a fourth
UNEQUAL = [
    *EQUAL,
    (MEGATRON, ["C.2", "C.2"]),
    (MINDSPEED, ["B.1"]),
    (MINDSPEED, ["C.1", "C.1", "C.2", "C.1"]),
]
REPOSITORIES = [f"{owner}/{repo}" for owner, repo in (MEGATRON, MINDSPEED)]


@pytest.fixture(params=["equal", "unequal"])
def case(request, project, personas, trio):
    items = EQUAL if request.param == "equal" else UNEQUAL
    raters = [*trio, personas["lead"]]
    for (owner, repo), codes in items:
        labeled_item(
            project, raters[: len(codes)], codes, cross_check=False, owner=owner, repo=repo
        )
    return request.param, items


def at_level(codes: list[str], level: str) -> list[str]:
    return [code.split(".")[0] for code in codes] if level == "type" else codes


def statsmodels_kappa(items, level: str, k: int = 3) -> float:
    """Fleiss' kappa on the items with exactly k labels, straight from the patterns."""
    rows = [at_level(codes, level) for _, codes in items if len(codes) == k]
    categories = sorted({c for r in rows for c in r})
    table = np.array([[Counter(r)[c] for c in categories] for r in rows])
    return float(statsmodels_fleiss_kappa(table, method="fleiss"))


def same(a: float | None, b: float | None) -> bool:
    return (a is None and b is None) or (a is not None and b is not None and a == pytest.approx(b))


@pytest.mark.parametrize("level", ["type", "theme"])
def test_page_api_command_and_reports_give_the_same_kappa(client, personas, project, case, level):
    which, items = case
    slug = project.slug
    query = {"level": level, "by": "repository"}

    # the Reports dashboard: by repository, all items first
    dashboard = project_dashboard(project)
    reports = {row[level].group: row[level] for row in dashboard.by_repository}
    assert list(reports) == [ALL_ITEMS, *REPOSITORIES]
    overall = reports[ALL_ITEMS]
    assert overall.kappa == pytest.approx(statsmodels_kappa(items, level))  # a number, not an error
    assert overall.fleiss.n_items == 7
    assert overall.ratings == 3
    assert cell_of(dashboard.by_type, ALL_ITEMS, level) == overall

    # the API
    client.force_login(personas["lead"])
    body = client.get(f"/api/projects/{slug}/agreement/", query).json()
    api = {g["group"]: g for g in body["groups"]}
    assert list(api) == list(reports)

    # the command, as JSON and as a table
    out = io.StringIO()
    call_command("agreement", "--project", slug, "--level", level, "--by", "repository",
                 "--format", "json", stdout=out)  # fmt: skip
    command = {g["group"]: g for g in json.loads(out.getvalue())["groups"]}
    assert list(command) == list(reports)
    out = io.StringIO()
    call_command("agreement", "--project", slug, "--level", level, "--by", "repository", stdout=out)
    table = out.getvalue()

    # the page
    html = client.get(f"/projects/{slug}/agreement/", query).content.decode()
    reports_html = client.get(f"/projects/{slug}/reports/").content.decode()

    for group, cell in reports.items():
        kappa = cell.kappa
        assert same(api[group]["fleiss"] and api[group]["fleiss"]["kappa"], kappa), group
        assert same(command[group]["fleiss"] and command[group]["fleiss"]["kappa"], kappa), group
        for source in (api[group], command[group]):
            assert source["n_items"] == cell.n_items
            assert source["ratings"] == cell.ratings
            assert source["left_out"] == cell.left_out
            assert source["left_out_why"] == cell.left_out_why
            assert same(source["alpha"] and source["alpha"]["alpha"], cell.alpha_value)
        if kappa is not None:
            assert f"{kappa:.3f}" in html, group
            assert f"{kappa:.3f}" in table, group
    assert f"{overall.kappa:.3f}" in reports_html

    if which == "equal":
        assert overall.left_out == 0
        assert overall.left_out_why == ""
        assert "left out of Fleiss" not in html
        assert "Fleiss on" not in html
        assert "left out" not in table
        assert overall.alpha.n_items == 7
    else:
        why = f"2 items have fewer than 3 labels at {level} level; 1 item has more than 3 labels"
        assert (overall.left_out, overall.left_out_why) == (3, why)
        assert overall.problem is None
        assert api[ALL_ITEMS]["problem"] is None
        assert overall.alpha.n_items == 9  # every item with two labels or more
        stated = f"Fleiss on 7 items with 3 labels; 3 left out: {why}"
        assert stated in html
        assert stated in table
        assert f"{overall.alpha_value:.3f}" in html
        assert f"alpha {overall.alpha_value:.3f}" in table
        assert "(3 left out of Fleiss)" in reports_html


def cell_of(rows, group: str, level: str) -> Cell:
    return next(row[level] for row in rows if row[level].group == group)


def test_group_agreement_is_the_reports_cell():
    """No second copy of the rule: the page's row type is the dashboard's cell."""
    assert GroupAgreement is Cell
    assert agreement_cell.__module__ == "annotation.reporting.agreement"
