"""Study label files that repeat an issue URL: the first row is kept, each later row is skipped
and reported (line, the line it repeats, whether its labels differ) and recorded, so Reports and
the repositories export can say how many rows were merged; refuse_repeats refuses the file and
leaves every row as it was."""

import csv
import io
from pathlib import Path

import pytest
from django.core.management import CommandError, call_command

from annotation.models import Annotation, MergedRepeat, Resolution
from annotation.projects.importers import ImportFailed, study_labels_import
from annotation.reporting.exports import export_options, export_rows
from annotation.reporting.reports import project_distribution
from tests.annotation.test_import_labels import LABEL_FILES, database_fingerprint, read_study_file

MEGATRON = "https://github.com/NVIDIA/Megatron-LM/issues/"
MINDSPEED = "https://gitee.com/ascend/MindSpeed/issues/"
HEADER = "Issue_URL,Label1,Label2,Final_Label\n"


def write(tmp_path: Path, text: str, name: str = "repeats.csv") -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def repeating_file(tmp_path: Path) -> Path:
    return write(
        tmp_path,
        HEADER
        + f"{MEGATRON}1,C.9,C.9,C.9\n"  # line 2
        + f"{MEGATRON}1,C.9,C.9,C.9\n"  # line 3: identical repeat of 2
        + f"{MINDSPEED}IBZ414,B.2,B.2,B.2\n"  # line 4
        + f"{MEGATRON}1,C.9,A.3,C.9\n"  # line 5: repeat of 2 with a different label
        + f"{MINDSPEED}IBZ414,B.2,B.2,B.1\n",  # line 6: repeat of 4, different final
    )


def test_shared_files_have_no_repeats_and_import_with_none_skipped(project):
    for path in LABEL_FILES:
        _, rows = read_study_file(path)
        report = study_labels_import(project=project, path=path)
        assert (report.rows, report.repeats) == (len(rows), ())
    assert not MergedRepeat.objects.exists()


def test_repeats_are_skipped_and_each_reported_with_its_line(project, tmp_path):
    report = study_labels_import(project=project, path=repeating_file(tmp_path))

    assert report.rows == 2
    assert [(r.line, r.first_line, r.labels_differ) for r in report.repeats] == [
        (3, 2, False),
        (5, 2, True),
        (6, 4, True),
    ]
    assert str(report.repeats[1]) == "line 5: skipped, repeats line 2 with different labels"
    # the first row is the one kept
    first = project.items.get(issue__number="1")
    assert sorted(first.annotations.values_list("node__code", flat=True)) == ["C.9", "C.9"]
    mindspeed = project.items.get(issue__number="IBZ414")
    assert mindspeed.resolution.node.code == "B.2"
    assert Annotation.objects.filter(item__project=project).count() == 4
    assert sorted(MergedRepeat.objects.values_list("file", "line", "item__issue__number")) == [
        ("repeats.csv", 3, "1"),
        ("repeats.csv", 5, "1"),
        ("repeats.csv", 6, "IBZ414"),
    ]


def test_importing_a_file_with_repeats_again_changes_nothing(project, tmp_path):
    path = repeating_file(tmp_path)
    study_labels_import(project=project, path=path)
    before = (database_fingerprint(), list(MergedRepeat.objects.values_list("file", "line")))
    again = study_labels_import(project=project, path=path)
    assert (again.items_created, again.annotations_created, len(again.repeats)) == (0, 0, 3)
    assert (database_fingerprint(), list(MergedRepeat.objects.values_list("file", "line"))) == (
        before
    )


def test_refusing_repeats_names_each_line_and_leaves_every_row_as_it_was(project, tmp_path):
    study_labels_import(
        project=project, path=write(tmp_path, HEADER + f"{MEGATRON}7,A.3,A.3,A.3\n", "first.csv")
    )
    before = (database_fingerprint(), list(MergedRepeat.objects.values_list("pk")))
    path = repeating_file(tmp_path)
    with pytest.raises(ImportFailed) as caught:
        study_labels_import(project=project, path=path, refuse_repeats=True)
    where = [(e.where.line, e.where.column, e.message) for e in caught.value.errors]
    assert where == [
        (3, "Issue_URL", "duplicate of line 2"),
        (5, "Issue_URL", "duplicate of line 2 with different labels"),
        (6, "Issue_URL", "duplicate of line 4 with different labels"),
    ]
    assert (database_fingerprint(), list(MergedRepeat.objects.values_list("pk"))) == before


def test_a_bad_row_elsewhere_refuses_a_file_with_repeats_and_records_none(project, tmp_path):
    path = write(
        tmp_path, HEADER + f"{MEGATRON}1,C.9,C.9,C.9\n{MEGATRON}1,C.9,C.9,C.9\n{MEGATRON}2,C.99,,\n"
    )
    with pytest.raises(ImportFailed, match="line 4"):
        study_labels_import(project=project, path=path)
    assert not project.items.exists()
    assert not MergedRepeat.objects.exists()


def test_reports_and_repositories_export_count_the_merged_rows(project, tmp_path):
    study_labels_import(project=project, path=repeating_file(tmp_path))

    assert project_distribution(project).merged_repeats == {
        "ascend/MindSpeed": 1,
        "NVIDIA/Megatron-LM": 2,
    }
    table = list(export_rows(project, export_options(project, format="repositories")))
    merged = {row[0]: row[-1] for row in table}
    assert table[0][-1] == "Merged_Repeated_Rows"
    assert merged == {
        "Repository": "Merged_Repeated_Rows",
        "ascend/MindSpeed": "1",
        "NVIDIA/Megatron-LM": "2",
        "Total": "3",
    }
    # the source file's data rows = issues in the export + rows merged
    source_rows = len(list(csv.reader(io.StringIO(repeating_file(tmp_path).read_text())))) - 1
    assert source_rows == project.items.count() + int(merged["Total"])


def test_reports_page_shows_the_merged_rows(project, tmp_path, client, admin_user):
    study_labels_import(project=project, path=repeating_file(tmp_path))
    client.force_login(admin_user)
    page = client.get(f"/projects/{project.slug}/reports/distribution/").content.decode()
    assert 'id="merged-repeats-table"' in page
    assert 'NVIDIA/Megatron-LM</th><td class="num">2</td>' in page


def test_command_reports_repeats_and_refuses_on_request(project, tmp_path, capsys):
    path = repeating_file(tmp_path)
    with pytest.raises(CommandError, match="1 of 1 file"):
        call_command("import_labels", "--project", project.slug, "--refuse-repeats", str(path))
    assert "line 3, column Issue_URL: duplicate of line 2" in capsys.readouterr().err
    assert not project.items.exists()

    call_command("import_labels", "--project", project.slug, str(path))
    out = capsys.readouterr().out
    assert "2 rows, 2 new items, 4 new labels, 2 new resolutions, 3 repeated rows skipped" in out
    assert f"{path}: line 6: skipped, repeats line 4 with different labels" in out
    assert Resolution.objects.filter(item__project=project).count() == 2


def test_rows_without_labels_enter_as_the_project_says(project, tmp_path):
    """A file may only list issues (no label yet): they are open for labeling in a project that
    does not screen, and candidates to screen in one that does, as items added from a source."""
    path = write(tmp_path, HEADER + f"{MEGATRON}5,,,\n")
    project.screening_enabled = False
    project.save()
    study_labels_import(project=project, path=path)
    assert project.items.get().stage == "open"
