"""Triangulation (issue 27): per theme, the final labels beside what the interviewed users and
developers raised, with ranks, Spearman's rho and its interval, and the themes whose ranks part;
the same numbers on the page, the CSV, the API and `manage.py triangulation`. Expectations are
counted from the study's files and the database, not from the report."""

from __future__ import annotations

import csv
import io
import json
from collections import Counter, defaultdict
from io import StringIO

import numpy as np
import pytest
from django.core.management import call_command
from rest_framework.test import APIClient

from annotation.gate import OPERATOR
from annotation.interviews.priorities import ranking_save
from annotation.interviews.triangulation import project_triangulation
from annotation.models import Resolution
from taxonomy.interviews.files import node_codes
from taxonomy.interviews.models import Participant
from taxonomy.models import Level
from tests.annotation.test_interviews import codebook_rows, study_import


@pytest.fixture
def study(labeled_project):
    study_import(labeled_project)
    return labeled_project


def _raised_in_codebook(project) -> dict[str, Counter]:
    """Per kind, how many participants link a quote to each theme (a sub-theme's theme)."""
    themes = set(project.taxonomy.nodes.filter(level=Level.THEME).values_list("code", flat=True))
    people: dict[str, dict[str, set]] = {"user": defaultdict(set), "developer": defaultdict(set)}
    for _line, row in codebook_rows():
        for code in node_codes(row["Linked Taxonomy Node(s)"]):
            if code in themes:
                people[row["Type"].lower()][code].add(row["Participant"])
    return {kind: Counter({c: len(p) for c, p in codes.items()}) for kind, codes in people.items()}


def test_every_theme_with_its_labels_and_the_practitioners_who_raised_it(study):
    report = project_triangulation(study)
    themes = list(study.taxonomy.nodes.filter(level=Level.THEME).values_list("code", flat=True))
    assert sorted(r.code for r in report.themes) == sorted(themes)
    finals = Counter(
        (r.node.code if r.node.level == Level.THEME else r.node.parent.code)
        for r in Resolution.objects.filter(item__project=study).select_related("node__parent")
        if r.node.level != Level.TYPE
    )
    raised = _raised_in_codebook(study)
    for row in report.themes:
        assert row.issues == finals.get(row.code, 0), row.code
        assert row.users == raised["user"].get(row.code, 0), row.code
        assert row.developers == raised["developer"].get(row.code, 0), row.code
    assert report.total_issues == sum(finals.values())
    assert (report.users, report.developers) == (11, 8)


def test_ranks_correlations_and_disagreements_follow_the_counts(study):
    report = project_triangulation(study)
    most = max(r.users for r in report.themes)
    assert {r.user_rank for r in report.themes if r.users == most} == {
        (1 + sum(1 for r in report.themes if r.users == most)) / 2
    }
    issues = np.array([r.issue_rank for r in report.themes])
    users = np.array([r.user_rank for r in report.themes])
    pearson_of_ranks = float(np.corrcoef(issues, users)[0, 1])
    issues_users = next(c.correlation for c in report.comparisons if c.key == "issues-users")
    assert issues_users.rho == pytest.approx(pearson_of_ranks)
    assert issues_users.low < issues_users.rho < issues_users.high
    assert issues_users.n == len(report.themes)
    for r in report.stressed_by_practitioners:
        assert r.issue_rank - r.practitioner_rank >= report.gap
    for r in report.frequent_in_issues:
        assert r.practitioner_rank - r.issue_rank >= report.gap
    far_apart = {
        r.code
        for r in report.themes
        if r.issues and r.practitioner_rank - r.issue_rank >= report.gap
    }
    assert {r.code for r in report.frequent_in_issues} == far_apart


def test_a_participants_ranking_replaces_their_quotes_in_the_counts(study):
    before = {r.code: r for r in project_triangulation(study).themes}
    u1 = Participant.objects.get(project=study, code="U1")  # quotes link A.1, B.1, C.1
    ranking_save(participant=u1, actor=OPERATOR, choices={"C": ["C.9", "C.2"]})
    after = {r.code: r for r in project_triangulation(study).themes}
    assert after["C.9"].users == before["C.9"].users + 1
    assert after["C.1"].users == before["C.1"].users - 1
    assert after["A.1"].users == before["A.1"].users - 1


def test_the_page_the_csv_the_api_and_the_command_agree(client, personas, study):
    client.force_login(personas["lead"])
    page = client.get(f"/projects/{study.slug}/interviews/triangulation/").content.decode()
    report = project_triangulation(study)
    for row in report.themes:
        assert f">{row.code}</a>" in page
    assert 'class="report-svg triangulation-chart"' in page
    download = client.get(f"/projects/{study.slug}/interviews/triangulation.csv")
    out = StringIO()
    call_command("triangulation", "--project", study.slug, "--format", "csv", stdout=out)
    assert download.content.decode() == out.getvalue()
    rows = list(csv.DictReader(io.StringIO(out.getvalue())))
    assert [r["theme"] for r in rows] == [r.code for r in report.themes]
    api = APIClient()
    api.force_authenticate(personas["lead"])
    body = api.get(f"/api/projects/{study.slug}/interviews/triangulation/").json()
    out = StringIO()
    call_command("triangulation", "--project", study.slug, stdout=out)
    assert body == json.loads(out.getvalue())
    assert {c["between"] for c in body["correlations"]} == {
        "users-developers",
        "issues-users",
        "issues-developers",
        "issues-practitioners",
    }


def test_empty_states_and_roles(client, personas, project):
    client.force_login(personas["lead"])
    page = client.get(f"/projects/{project.slug}/interviews/triangulation/").content.decode()
    assert 'id="no-interviews"' in page
    assert 'id="no-final-labels"' in page
    assert "not defined" in page
    client.force_login(personas["volunteer_a"])
    response = client.get(f"/projects/{project.slug}/interviews/triangulation/")
    assert response.status_code == 403
