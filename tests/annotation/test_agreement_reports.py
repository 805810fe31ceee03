"""Agreement on a real study project: the selector, the page, the API, the command, and roles."""

import json
from collections import Counter

import numpy as np
import pytest
from django.core.management import call_command
from statsmodels.stats.inter_rater import fleiss_kappa as statsmodels_fleiss_kappa

from annotation.reporting.agreement import ALL_ITEMS, project_agreement
from tests.annotation.test_import_labels import read_study_file
from tests.conftest import STUDY


def study_kappa(rows, group_type=None):
    """Fleiss' kappa at theme level straight from the CSV, as the study computed it."""
    if group_type:
        rows = [r for r in rows if r[-1].startswith(group_type)]
    codes = sorted({c for r in rows for c in r[1:-1]})
    table = np.array([[Counter(r[1:-1])[c] for c in codes] for r in rows])
    return statsmodels_fleiss_kappa(table, method="fleiss")


def test_theme_kappa_per_final_type_matches_statsmodels_on_the_csv(labeled_project):
    _, rows = read_study_file(STUDY / "labels" / "MindSpeed.csv")
    report = project_agreement(labeled_project, level="theme", by="type")
    groups = {g.group: g for g in report.groups}
    assert groups[ALL_ITEMS].fleiss.kappa == pytest.approx(study_kappa(rows))
    assert groups[ALL_ITEMS].fleiss.n_items == 80
    assert groups[ALL_ITEMS].fleiss.n_raters == 7
    for code, name in [("A", "Question"), ("B", "Requirement"), ("C", "Bug")]:
        group = groups[f"{code} {name}"]
        assert group.fleiss.kappa == pytest.approx(study_kappa(rows, code))
        assert group.n_items == sum(r[-1].startswith(code) for r in rows)


def test_type_level_rolls_themes_up_to_their_type(labeled_project):
    _, rows = read_study_file(STUDY / "labels" / "MindSpeed.csv")
    typed = [[r[0], *[c.split(".")[0] for c in r[1:]]] for r in rows]
    report = project_agreement(labeled_project, level="type", by="none")
    assert [g.group for g in report.groups] == [ALL_ITEMS]
    assert report.groups[0].fleiss.kappa == pytest.approx(study_kappa(typed))


def test_subtheme_level_explains_that_no_label_reaches_it(labeled_project):
    report = project_agreement(labeled_project, level="subtheme", by="type")
    assert report.groups[0].fleiss is None
    assert "No labels reach sub-theme level" in report.groups[0].problem


def test_by_repository_groups_items_by_their_repository(labeled_project):
    report = project_agreement(labeled_project, level="theme", by="repository")
    assert [(g.group, g.n_items) for g in report.groups] == [
        (ALL_ITEMS, 80),
        ("ascend/MindSpeed", 80),
    ]


def test_missing_labels_leave_items_out_of_fleiss_with_the_reason(project, tmp_path):
    from annotation.projects.importers import study_labels_import

    path = tmp_path / "partial.csv"
    path.write_text(
        "Issue_URL,Label1,Label2,Label3,Final_Label\n"
        "https://github.com/NVIDIA/Megatron-LM/issues/1,C.1,C.1,C.1,C.1\n"
        "https://github.com/NVIDIA/Megatron-LM/issues/2,C.2,C.2,,C.2\n"
        "https://github.com/NVIDIA/Megatron-LM/issues/3,B.1,B.2,B.1,B.1\n"
    )
    study_labels_import(project=project, path=path)
    overall = project_agreement(project, level="theme", by="none").groups[0]
    # as on the Reports dashboard: Fleiss on the two items with all k = 3 labels, the third
    # counted and explained, alpha on all three
    assert overall.problem is None
    assert (overall.fleiss.n_items, overall.ratings, overall.left_out) == (2, 3, 1)
    assert overall.left_out_why == "1 item has fewer than 3 labels at theme level"
    assert overall.fleiss.kappa == pytest.approx(
        statsmodels_fleiss_kappa(np.array([[3, 0, 0], [0, 2, 1]]), method="fleiss")
    )
    assert overall.alpha.n_items == 3


def test_agreement_query_count_is_flat(labeled_project, django_assert_max_num_queries):
    # the first read after labels written around the services rebuilds the tallies
    with django_assert_max_num_queries(11):
        project_agreement(labeled_project, level="theme", by="type")
    with django_assert_max_num_queries(3):  # the tree, the tallies, the types' names
        project_agreement(labeled_project, level="theme", by="type")


# ---------------------------------------------------------------- who may see it

PAGE = "/projects/study/agreement/"
API = "/api/projects/study/agreement/"


@pytest.mark.parametrize(
    ("who", "page", "api"),
    [("volunteer_a", 403, 403), ("outsider", 404, 404), ("lead", 200, 200), ("admin", 200, 200)],
)
def test_agreement_is_for_leads_and_admins_of_the_project(
    client, labeled_project, personas, who, page, api
):
    client.force_login(personas[who])
    assert client.get(PAGE).status_code == page
    assert client.get(API).status_code == api
    assert client.get(PAGE + "chart.svg").status_code == page


def test_anonymous_users_are_sent_to_sign_in(client, labeled_project):
    assert client.get(PAGE)["Location"].startswith("/accounts/login/")
    assert client.get(API).status_code == 401


def test_page_shows_table_and_chart(client, labeled_project, personas):
    client.force_login(personas["lead"])
    html = client.get(PAGE + "?level=theme&by=type").content.decode()
    assert 'id="agreement-table"' in html
    assert "C Bug" in html
    assert html.count('class="bar"') == 4  # all items + three types
    assert "Landis" in html


def test_chart_downloads_as_svg(client, labeled_project, personas):
    client.force_login(personas["admin"])
    response = client.get(PAGE + "chart.svg?level=type&by=none")
    assert response["Content-Type"] == "image/svg+xml"
    assert 'filename="study-kappa-type-by-none.svg"' in response["Content-Disposition"]
    assert response.content.startswith(b"<?xml")


def test_api_returns_the_report(client, labeled_project, personas):
    client.force_login(personas["lead"])
    body = client.get(API, {"level": "theme", "by": "type"}).json()
    expected = project_agreement(labeled_project, level="theme", by="type")
    assert [g["group"] for g in body["groups"]] == [g.group for g in expected.groups]
    assert body["groups"][0]["fleiss"]["kappa"] == pytest.approx(expected.groups[0].fleiss.kappa)
    assert body["groups"][0]["fleiss"]["band"] == expected.groups[0].fleiss.band


def test_api_rejects_an_unknown_level(client, labeled_project, personas):
    client.force_login(personas["lead"])
    response = client.get(API, {"level": "chapter"})
    assert response.status_code == 400
    assert "level" in response.json()["fields"]


def test_command_prints_table_and_json(labeled_project, capsys):
    call_command("agreement", "--project", "study", "--level", "theme", "--by", "type")
    table = capsys.readouterr().out
    assert "All items" in table
    assert "C Bug" in table
    call_command("agreement", "--project", "study", "--format", "json")
    data = json.loads(capsys.readouterr().out)
    assert data["groups"][0]["fleiss"]["n_items"] == 80


def test_type_level_kappa_within_a_final_type_is_not_given_as_a_finding(
    labeled_project, personas, client
):
    """Items grouped by their final type nearly all carry that type: at type level chance
    agreement is about 1 and kappa about 0 (or undefined: every final Bug item of MindSpeed was
    typed C by all seven), whatever the volunteers did. Not computed, and the page says why."""
    report = project_agreement(labeled_project, level="type", by="type")
    overall, *per_type = report.groups
    assert overall.fleiss is not None
    assert per_type
    for group in per_type:
        assert group.omitted
        assert group.fleiss is None
        assert group.alpha is None
        assert "share their final type" in group.problem
    client.force_login(personas["lead"])
    html = client.get(PAGE + "?level=type&by=type").content.decode()
    assert "nan" not in html
    assert "share their final type" in html
    assert "clipped to kappa's range" in html


def test_confidence_interval_stays_within_kappa_s_range(labeled_project):
    """MindSpeed's type-level kappa is 0.962 with a standard error that reached 1.005."""
    fleiss = project_agreement(labeled_project, level="type", by="none").groups[0].fleiss
    assert fleiss.kappa + 1.96 * fleiss.se > 1
    assert fleiss.ci_high == 1.0
    assert -1.0 <= fleiss.ci_low < fleiss.kappa


def test_forbidden_page_says_which_role_is_needed(client, labeled_project, personas):
    client.force_login(personas["volunteer_a"])
    response = client.get(PAGE)
    assert response.status_code == 403
    assert "This needs the lead annotator role" in response.content.decode()


def test_a_pilot_label_is_a_worked_example_not_a_rating(labeled_project, personas):
    from annotation.models import Annotation, Stage
    from tests.factories import IssueFactory

    before = project_agreement(labeled_project, level="theme", by="none").groups[0]
    pilot_item = labeled_project.items.create(
        issue=IssueFactory(), stage=Stage.FINAL, in_pilot=True, label_count=1
    )
    Annotation.objects.create(
        item=pilot_item,
        volunteer=personas["lead"],
        node=labeled_project.taxonomy.nodes.get(code="C.1"),
        is_pilot=True,
    )
    after = project_agreement(labeled_project, level="theme", by="none").groups[0]
    assert after.n_items == before.n_items
    assert after.fleiss.kappa == before.fleiss.kappa
