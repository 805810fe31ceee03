"""Importing labels in the study format: the four shared files, idempotence, and every error."""

import csv
from collections import Counter
from pathlib import Path

import pytest
from django.core.management import CommandError, call_command

from annotation.models import Annotation, Item, Membership, Resolution, Stage
from annotation.projects.importers import ImportFailed, placeholder_username, study_labels_import
from ingest.models import Issue
from tests.conftest import STUDY

LABEL_FILES = sorted((STUDY / "labels").glob("*.csv"))


def read_study_file(path: Path):
    with path.open(newline="", encoding="utf-8") as handle:
        rows = list(csv.reader(handle))
    return rows[0], rows[1:]


def expected_methods(rows) -> Counter:
    """Derived here from the raw CSV, independently of the importer."""
    methods = Counter()
    for row in rows:
        labels, final = [c for c in row[1:-1] if c], row[-1]
        if set(labels) == {final}:
            methods["unanimous"] += 1
        else:
            top = Counter(labels).most_common()
            best = top[0][1]
            methods["majority" if Counter(labels)[final] == best else "lead"] += 1
    return methods


def database_fingerprint():
    return (
        sorted(Issue.objects.values_list("host", "owner", "repo", "number")),
        sorted(Item.objects.values_list("project_id", "issue_id", "stage", "label_count")),
        sorted(Annotation.objects.values_list("item_id", "volunteer_id", "node_id")),
        sorted(Resolution.objects.values_list("item_id", "node_id", "method")),
        sorted(Membership.objects.values_list("project_id", "user_id", "role", "column")),
    )


@pytest.mark.parametrize("path", LABEL_FILES, ids=lambda p: p.stem)
def test_each_shared_label_file_imports_completely(project, path):
    _, rows = read_study_file(path)
    report = study_labels_import(project=project, path=path)

    assert report.rows == len(rows)
    assert project.items.count() == len(rows)
    assert Annotation.objects.filter(item__project=project).count() == 7 * len(rows)
    methods = Counter(
        Resolution.objects.filter(item__project=project).values_list("method", flat=True)
    )
    assert methods == expected_methods(rows)
    assert set(project.items.values_list("stage", flat=True)) == {Stage.FINAL}


def test_labels_land_on_the_right_issue_volunteer_and_node(project):
    path = STUDY / "labels" / "MindSpeed.csv"
    _, rows = read_study_file(path)
    study_labels_import(project=project, path=path)
    url, *labels, final = rows[1]  # IBY945: B.3,B.3,B.4,C.7,B.3,B.2,B.3 -> B.3
    issue = Issue.objects.get(url=url)
    assert (issue.host, issue.owner, issue.repo, issue.number) == (
        "gitee",
        "ascend",
        "MindSpeed",
        "IBY945",
    )
    item = project.items.get(issue=issue)
    by_column = {
        a.volunteer.username: a.node.code
        for a in item.annotations.select_related("volunteer", "node")
    }
    assert by_column == {
        placeholder_username(project, j + 1): code for j, code in enumerate(labels)
    }
    assert (item.resolution.node.code, item.resolution.method) == (final, "majority")


def test_all_four_files_share_the_same_seven_volunteers(project):
    for path in LABEL_FILES:
        study_labels_import(project=project, path=path)
    assert project.items.count() == 1114 + 80 + 1780 + 1826
    columns = project.memberships.exclude(column=None).values_list("column", flat=True)
    assert sorted(columns) == list(range(1, 8))


def test_importing_the_same_file_again_changes_nothing(project):
    path = STUDY / "labels" / "MindSpeed.csv"
    study_labels_import(project=project, path=path)
    before = database_fingerprint()
    report = study_labels_import(project=project, path=path)
    assert (report.items_created, report.annotations_created, report.resolutions_created) == (
        0,
        0,
        0,
    )
    assert database_fingerprint() == before


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "labels.csv"
    path.write_text(text, encoding="utf-8")
    return path


URL1 = "https://github.com/NVIDIA/Megatron-LM/issues/1516"
URL2 = "https://gitee.com/ascend/MindSpeed/issues/IBZ414"


def test_any_number_of_label_columns_and_blank_cells(project, tmp_path):
    path = write(
        tmp_path,
        f"Issue_URL,Label1,Label2,Label3,Final_Label\n{URL1},C.9,,C.9,C.9\n{URL2},B.2,B.1,,\n",
    )
    study_labels_import(project=project, path=path)
    first = project.items.get(issue__number="1516")
    second = project.items.get(issue__number="IBZ414")
    assert first.annotations.count() == 2
    assert first.resolution.method == "unanimous"
    assert second.annotations.count() == 2
    assert not Resolution.objects.filter(item=second).exists()
    assert second.stage == Stage.LABELING  # 2 labels, project wants k=3


def test_single_label_column_and_any_level_codes(project, tmp_path):
    path = write(tmp_path, f"Issue_URL,Label1,Final_Label\n{URL1},C.1.iii,C\n")
    study_labels_import(project=project, path=path)
    item = project.items.get()
    assert item.annotations.get().node.code == "C.1.iii"
    assert (item.resolution.node.code, item.resolution.method) == ("C", "lead")


@pytest.mark.parametrize(
    ("text", "line", "column", "message"),
    [
        (
            "URL,Label1,Final_Label\n",
            1,
            None,
            "header must be Issue_URL,Label1..LabelN,Final_Label",
        ),
        ("Issue_URL,Label1,Label3,Final_Label\n", 1, "Label3", "expected Label2 here"),
        (
            f"Issue_URL,Label1,Final_Label\n{URL1},C.99,C.9\n",
            2,
            "Label1",
            "unknown taxonomy code 'C.99'",
        ),
        (
            f"Issue_URL,Label1,Final_Label\n{URL1},C.9,X\n",
            2,
            "Final_Label",
            "unknown taxonomy code 'X'",
        ),
        (
            "Issue_URL,Label1,Final_Label\nhttps://gitlab.com/a/b/issues/1,C.9,C.9\n",
            2,
            "Issue_URL",
            "unknown host",
        ),
        (
            "Issue_URL,Label1,Final_Label\nhttps://github.com/a/b/pull/7,C.9,C.9\n",
            2,
            "Issue_URL",
            "pull request",
        ),
        (
            "Issue_URL,Label1,Final_Label\nhttps://gitee.com/a/b/issues/ibz414,C.9,C.9\n",
            2,
            "Issue_URL",
            "upper case",
        ),
        (f"Issue_URL,Label1,Final_Label\n{URL1},C.9\n", 2, None, "2 cells, header has 3"),
    ],
)
def test_bad_files_name_line_and_column_and_change_nothing(
    project, tmp_path, text, line, column, message
):
    good = write(tmp_path, f"Issue_URL,Label1,Final_Label\n{URL2},B.2,B.2\n")
    study_labels_import(project=project, path=good)
    before = database_fingerprint()
    bad = tmp_path / "bad.csv"
    bad.write_text(text + f"{URL2.replace('IBZ414', 'IBZ999')},B.2,B.2\n" if line > 1 else text)
    with pytest.raises(ImportFailed) as caught:
        study_labels_import(project=project, path=bad)
    first = caught.value.errors[0]
    assert (first.where.path, first.where.line, first.where.column) == (str(bad), line, column)
    assert message in first.message
    assert database_fingerprint() == before


def test_all_problems_are_reported_at_once(project, tmp_path):
    path = write(tmp_path, f"Issue_URL,Label1,Final_Label\n{URL1},Q,C.9\nnot-a-url,C.9,C.9\n")
    with pytest.raises(ImportFailed) as caught:
        study_labels_import(project=project, path=path)
    assert [e.where.line for e in caught.value.errors] == [2, 3]
    assert "2 problem(s); nothing was imported" in str(caught.value)


def test_a_label_that_contradicts_a_stored_one_is_refused(project, tmp_path):
    study_labels_import(
        project=project, path=write(tmp_path, f"Issue_URL,Label1,Final_Label\n{URL1},C.9,C.9\n")
    )
    before = database_fingerprint()
    changed = tmp_path / "changed.csv"
    changed.write_text(f"Issue_URL,Label1,Final_Label\n{URL2},B.2,B.2\n{URL1},C.1,C.9\n")
    with pytest.raises(ImportFailed) as caught:
        study_labels_import(project=project, path=changed)
    assert (caught.value.errors[0].where.line, caught.value.errors[0].where.column) == (3, "Label1")
    assert database_fingerprint() == before


def test_non_utf8_file_is_refused(project, tmp_path):
    path = tmp_path / "latin1.csv"
    path.write_bytes(b"Issue_URL,Label1,Final_Label\n" + URL1.encode() + b",C.9,caf\xe9\n")
    with pytest.raises(ImportFailed, match="not UTF-8") as caught:
        study_labels_import(project=project, path=path)
    (error,) = caught.value.errors
    assert error.where.line == 2
    assert f"byte {len(URL1) + 9} of the line (0xe9)" in error.message
    assert not Issue.objects.exists()


def test_imported_volunteers_cannot_sign_in_until_an_admin_maps_them(project):
    study_labels_import(project=project, path=STUDY / "labels" / "MindSpeed.csv")
    member = project.memberships.select_related("user").get(column=1)
    assert member.user.username == f"label:{project.pk}:1"
    assert not member.user.has_usable_password()


def test_command_imports_files_and_reports_failures(project, tmp_path, capsys):
    bad = write(tmp_path, "nonsense\n")
    with pytest.raises(CommandError, match="1 of 2 file"):
        call_command(
            "import_labels",
            "--project",
            project.slug,
            str(STUDY / "labels" / "MindSpeed.csv"),
            str(bad),
        )
    captured = capsys.readouterr()
    assert "80 rows, 80 new items, 560 new labels, 80 new resolutions" in captured.out
    assert "labels.csv, line 1" in captured.err
    assert project.items.count() == 80


def test_command_names_an_unknown_project(db):
    with pytest.raises(CommandError, match="no project with slug 'nope'"):
        call_command("import_labels", "--project", "nope", "x.csv")


def test_import_applies_the_rule_live_labeling_does(project, tmp_path):
    """k unanimous labels without a Final_Label: final, method unanimous, as the k-th live label
    makes it; mixed: disputed with its agreement for the lead's queue; fewer than k: labeling;
    a Final_Label is kept. Every stage an import gives an item has its audit row."""
    from annotation.models import Action, AuditEvent, Method

    path = tmp_path / "rule.csv"
    path.write_text(
        "Issue_URL,Label1,Label2,Label3,Final_Label\n"
        "https://github.com/NVIDIA/Megatron-LM/issues/1,C.1,C.1,C.1,\n"
        "https://github.com/NVIDIA/Megatron-LM/issues/2,C.1,C.1,C.2,\n"
        "https://github.com/NVIDIA/Megatron-LM/issues/3,C.1,,C.2,\n"
        "https://github.com/NVIDIA/Megatron-LM/issues/4,C.1,C.2,C.2,C.1\n"
    )
    study_labels_import(project=project, path=path)
    by_number = {item.issue.number: item for item in project.items.select_related("issue")}
    unanimous, mixed, partial, given = (by_number[n] for n in ("1", "2", "3", "4"))
    assert (unanimous.stage, unanimous.resolution.method) == (Stage.FINAL, Method.UNANIMOUS)
    assert unanimous.resolution.node.code == "C.1"
    assert (mixed.stage, mixed.agreement) == (Stage.DISPUTED, pytest.approx(2 / 3))
    assert not Resolution.objects.filter(item=mixed).exists()
    assert (partial.stage, partial.label_count) == (Stage.LABELING, 2)
    assert (given.stage, given.resolution.node.code) == (Stage.FINAL, "C.1")
    assert given.resolution.method == Method.LEAD
    for item in (unanimous, mixed, partial, given):
        event = AuditEvent.objects.get(item=item, action=Action.IMPORT)
        assert (event.before, event.after) == (
            {"stage": Stage.CANDIDATE},
            {"stage": item.stage, "file": str(path)},
        )
    # importing the same file again changes nothing and records nothing
    study_labels_import(project=project, path=path)
    assert AuditEvent.objects.filter(item__project=project).count() == 4


def test_a_file_of_issue_urls_alone_makes_items_to_label_and_says_their_text_is_missing(
    project, personas, client, tmp_path
):
    """The README's "a file of the Issue_URL column alone": items without labels, whose text
    Concord has not fetched; the labeling page says so instead of "(no description)"."""
    project.screening_enabled = False
    project.save()
    path = tmp_path / "urls.csv"
    path.write_text(
        "Issue_URL\n"
        "https://github.com/NVIDIA/Megatron-LM/issues/9\n"
        "https://gitee.com/ascend/MindSpeed/issues/I9K135\n"
    )
    report = study_labels_import(project=project, path=path)
    assert (report.items_created, report.annotations_created) == (2, 0)
    assert set(project.items.values_list("stage", flat=True)) == {Stage.OPEN}

    client.force_login(personas["volunteer_a"])
    page = client.get(f"/projects/{project.slug}/label/").text
    assert "holds only this issue&#x27;s address" in page
    assert '<p class="hint">(no description)</p>' not in page
