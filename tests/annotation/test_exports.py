"""The four CSV exports: study format (round trip with the importer on the study's own files),
long, final labels, per-repository statistics; filters, level roll-up and the formula guard."""

from __future__ import annotations

import csv
import io
import itertools
from datetime import UTC, date, datetime

import pytest

from annotation.models import Annotation, Item, Method, Resolution, Role, ScreeningVote, Stage
from annotation.projects.importers import study_labels_import
from annotation.reporting import exports
from annotation.reporting.exports import (
    FINAL_HEADER,
    LONG_HEADER,
    export_count,
    export_lines,
    export_options,
    export_rows,
    study_columns,
)
from concord.errors import ConcordError
from tests.conftest import STUDY
from tests.factories import IssueFactory, MembershipFactory, ProjectFactory, UserFactory

LABEL_FILES = sorted(p.name for p in (STUDY / "labels").glob("*.csv"))
HYPERLINK = '=HYPERLINK("http://evil.example","click")'
MEGATRON = "https://github.com/NVIDIA/Megatron-LM/issues/"
MINDFORMERS = "https://gitee.com/mindspore/mindformers/issues/"


def text_of(project, **options) -> str:
    return "".join(export_lines(project, export_options(project, **options)))


def rows_of(project, **options) -> list[list[str]]:
    """The rows as a CSV reader sees them (a spreadsheet reads the byte-order mark as such)."""
    text = text_of(project, **options).removeprefix("\ufeff")
    return list(csv.reader(io.StringIO(text, newline="")))


def read_csv(path) -> list[list[str]]:
    with path.open(encoding="utf-8-sig", newline="") as handle:
        return [row for row in csv.reader(handle) if any(cell.strip() for cell in row)]


# ---------------------------------------------------------------- study format round trip


@pytest.mark.parametrize("name", LABEL_FILES)
def test_study_export_round_trips_the_shared_label_files(study_taxonomy, tmp_path, name):
    """Import a study file, export it: the same rows in the same order (the export's only
    normalisation is `\\r\\n` line ends). Import that export into an empty project and export
    again: the same bytes."""
    assert len(LABEL_FILES) == 4
    original = STUDY / "labels" / name
    first = ProjectFactory(taxonomy=study_taxonomy, slug="first", label_depth="theme")
    study_labels_import(project=first, path=original)
    exported = text_of(first, format="study")
    assert list(csv.reader(io.StringIO(exported, newline=""))) == read_csv(original)
    assert exported.endswith("\r\n")

    copy = tmp_path / name
    copy.write_text(exported, encoding="utf-8", newline="")
    second = ProjectFactory(taxonomy=study_taxonomy, slug="second", label_depth="theme")
    study_labels_import(project=second, path=copy)
    assert text_of(second, format="study").encode() == exported.encode()


def test_bom_is_written_once_and_the_importer_reads_it(labeled_project, tmp_path, study_taxonomy):
    text = text_of(labeled_project, format="study", bom=True)
    data = text.encode("utf-8")
    assert data.startswith(b"\xef\xbb\xbfIssue_URL,Label1,")
    assert data.count(b"\xef\xbb\xbf") == 1
    path = tmp_path / "with-bom.csv"
    path.write_bytes(data)
    other = ProjectFactory(taxonomy=study_taxonomy, slug="bom", label_depth="theme")
    report = study_labels_import(project=other, path=path)
    assert report.rows == 80
    assert text_of(other, format="study", bom=True) == text


@pytest.mark.parametrize("format", ["long", "final", "repositories"])
def test_formats_with_people_s_words_open_in_excel_by_default(labeled_project, format):
    """Excel takes a CSV for UTF-8 only after a byte-order mark: titles, summaries and Chinese
    names come out as written. Asked not to, the file is plain UTF-8."""
    assert text_of(labeled_project, format=format).startswith("\ufeff")
    assert not text_of(labeled_project, format=format, bom=False).startswith("\ufeff")


def test_the_study_format_has_no_mark_by_default_so_it_matches_the_study_byte_for_byte(
    labeled_project,
):
    text = text_of(labeled_project, format="study")
    assert text.startswith("Issue_URL,")
    assert text_of(labeled_project, format="study", bom=True).startswith("\ufeffIssue_URL,")


# ---------------------------------------------------------------- a small hand-made project


def at(text: str) -> datetime:
    return datetime.fromisoformat(text).replace(tzinfo=UTC)


@pytest.fixture
def small(study_taxonomy):
    """Six items over two repositories, labelled at different depths by three volunteers (two
    with study columns), two resolved, one excluded in screening, one screened in."""
    project = ProjectFactory(taxonomy=study_taxonomy, slug="small", label_depth="subtheme")
    people = {}
    for name, column, role in [
        ("carol", None, Role.VOLUNTEER),  # no column: after the columns, by username
        ("bob", 2, Role.VOLUNTEER),
        ("alice", 1, Role.VOLUNTEER),
        ("lead", None, Role.LEAD),
    ]:
        people[name] = UserFactory(username=name)
        MembershipFactory(project=project, user=people[name], role=role, column=column)
    nodes = dict(study_taxonomy.nodes.values_list("code", "pk"))

    def item(host, owner, repo, number, created, stage):
        issue = IssueFactory(
            host=host,
            owner=owner,
            repo=repo,
            number=number,
            url=(MEGATRON if repo == "Megatron-LM" else MINDFORMERS) + number,
            created_at=at(created) if created else None,
        )
        return Item.objects.create(project=project, issue=issue, stage=stage)

    def label(item, who, code, summary="", when="2025-03-01T10:00:00"):
        annotation = Annotation.objects.create(
            item=item, volunteer=people[who], node_id=nodes[code], summary=summary
        )
        Annotation.objects.filter(pk=annotation.pk).update(created_at=at(when))

    i1 = item("github", "NVIDIA", "Megatron-LM", "101", "2023-05-01T08:00:00", Stage.FINAL)
    label(i1, "alice", "C.1.i", HYPERLINK, "2025-03-01T10:00:00")
    label(i1, "bob", "C.1.ii", "-2 GPUs hang", "2025-03-01T11:00:00")
    label(i1, "carol", "C.1", "", "2025-03-01T12:00:00")
    Resolution.objects.create(
        item=i1,
        node_id=nodes["C.1.i"],
        method=Method.LEAD,
        resolver=people["lead"],
        reason="+1 for the build failure",
    )
    i2 = item("github", "NVIDIA", "Megatron-LM", "102", "2024-02-10T00:00:00", Stage.FINAL)
    label(i2, "bob", "A.3.i", "docs unclear")
    label(i2, "alice", "A.3.i", "  how to resume  ")
    Resolution.objects.create(item=i2, node_id=nodes["A.3.i"], method=Method.UNANIMOUS)
    i3 = item("gitee", "mindspore", "mindformers", "IAB123", "2024-12-31T23:30:00", Stage.LABELING)
    label(i3, "alice", "B.2.i", "wants an API")
    i4 = item("gitee", "mindspore", "mindformers", "IAB124", None, Stage.EXCLUDED)
    for who in ("alice", "bob"):
        ScreeningVote.objects.create(item=i4, volunteer=people[who], relevant=False)
    i5 = item("github", "NVIDIA", "Megatron-LM", "103", "2025-01-02T00:00:00", Stage.OPEN)
    for who in ("alice", "bob"):
        ScreeningVote.objects.create(item=i5, volunteer=people[who], relevant=True)
    i6 = item("gitee", "mindspore", "mindformers", "IAB125", None, Stage.LABELING)
    label(i6, "carol", "B.2")
    return project


def test_study_columns_follow_membership_column_then_username(small):
    assert study_columns(small) == [("Label1", "alice"), ("Label2", "bob"), ("Label3", "carol")]


def test_study_format_at_each_level(small):
    header = ["Issue_URL", "Label1", "Label2", "Label3", "Final_Label"]
    assert rows_of(small, format="study") == [  # the project's depth: sub-theme
        header,
        [MEGATRON + "101", "C.1.i", "C.1.ii", "", "C.1.i"],  # carol's theme label is coarser
        [MEGATRON + "102", "A.3.i", "A.3.i", "", "A.3.i"],
        [MINDFORMERS + "IAB123", "B.2.i", "", "", ""],
        [MINDFORMERS + "IAB125", "", "", "", ""],  # labelled, but only at theme depth
    ]
    assert rows_of(small, format="study", level="theme")[1:] == [
        [MEGATRON + "101", "C.1", "C.1", "C.1", "C.1"],
        [MEGATRON + "102", "A.3", "A.3", "", "A.3"],
        [MINDFORMERS + "IAB123", "B.2", "", "", ""],
        [MINDFORMERS + "IAB125", "", "", "B.2", ""],
    ]
    assert rows_of(small, format="study", level="type")[1:] == [
        [MEGATRON + "101", "C", "C", "C", "C"],
        [MEGATRON + "102", "A", "A", "", "A"],
        [MINDFORMERS + "IAB123", "B", "", "", ""],
        [MINDFORMERS + "IAB125", "", "", "B", ""],
    ]


def names(small, *codes):
    found = dict(small.taxonomy.nodes.values_list("code", "name"))
    cells = []
    for code in codes:
        cells += [code, found[code] if code else ""]
    return cells


def test_long_format_has_one_row_per_label_with_each_level_in_its_columns(small):
    rows = rows_of(small, format="long")
    assert rows[0] == LONG_HEADER
    megatron, mindformers = "NVIDIA/Megatron-LM", "mindspore/mindformers"
    assert rows[1:] == [
        [
            MEGATRON + "101",
            megatron,
            "2023-05-01",
            "alice",
            *names(small, "C", "C.1", "C.1.i"),
            "'" + HYPERLINK,  # neutralised
            "2025-03-01T10:00:00Z",
            "1",
        ],
        [
            MEGATRON + "101",
            megatron,
            "2023-05-01",
            "bob",
            *names(small, "C", "C.1", "C.1.ii"),
            "'-2 GPUs hang",
            "2025-03-01T11:00:00Z",
            "1",
        ],
        [
            MEGATRON + "101",
            megatron,
            "2023-05-01",
            "carol",
            *names(small, "C", "C.1", ""),  # a theme label: sub-theme blank
            "",
            "2025-03-01T12:00:00Z",
            "1",
        ],
        [
            MEGATRON + "102",
            megatron,
            "2024-02-10",
            "alice",
            *names(small, "A", "A.3", "A.3.i"),
            "  how to resume  ",
            "2025-03-01T10:00:00Z",
            "1",
        ],
        [
            MEGATRON + "102",
            megatron,
            "2024-02-10",
            "bob",
            *names(small, "A", "A.3", "A.3.i"),
            "docs unclear",
            "2025-03-01T10:00:00Z",
            "1",
        ],
        [
            MINDFORMERS + "IAB123",
            mindformers,
            "2024-12-31",
            "alice",
            *names(small, "B", "B.2", "B.2.i"),
            "wants an API",
            "2025-03-01T10:00:00Z",
            "1",
        ],
        [
            MINDFORMERS + "IAB125",
            mindformers,
            "",
            "carol",
            *names(small, "B", "B.2", ""),
            "",
            "2025-03-01T10:00:00Z",
            "1",
        ],
    ]


@pytest.mark.parametrize("chunk", [1, 2])
def test_the_long_format_reads_the_same_in_pages_of_any_size(small, monkeypatch, chunk):
    """The labelled items are read CHUNK at a time, each page after the last (flat memory at
    any size): a page boundary anywhere, between labelled items or across the unlabelled ones,
    neither drops nor repeats a label."""
    labels = Annotation.objects.filter(item__project=small).count()

    def read() -> list[list[str]]:
        # a line more than the export has at most: a paging that repeats a page fails, not hangs
        lines = itertools.islice(
            export_lines(small, export_options(small, format="long")), labels + 2
        )
        return list(csv.reader(io.StringIO("".join(lines).removeprefix("\ufeff"), newline="")))

    whole = read()
    assert len(whole) == 1 + labels  # the header and a row per label
    monkeypatch.setattr(exports, "CHUNK", chunk)
    assert read() == whole


def test_final_format_has_one_row_per_resolved_item(small):
    rows = rows_of(small, format="final")
    assert rows[0] == FINAL_HEADER
    assert rows[1:] == [
        [
            MEGATRON + "101",
            "NVIDIA/Megatron-LM",
            "2023-05-01",
            *names(small, "C", "C.1", "C.1.i"),
            "lead",
            "lead",
            "'+1 for the build failure",
            "3",
            "'" + HYPERLINK + " | -2 GPUs hang",  # carol's empty summary is left out
        ],
        [
            MEGATRON + "102",
            "NVIDIA/Megatron-LM",
            "2024-02-10",
            *names(small, "A", "A.3", "A.3.i"),
            "unanimous",
            "",
            "",
            "2",
            "how to resume | docs unclear",  # column order: alice before bob
        ],
    ]


def test_repository_statistics_like_table_one(small):
    assert text_of(small, format="repositories", bom=False).split("\r\n") == [
        "Repository,Host,2023,2024,2025,Year_Unknown,Issues,"
        "Question,Requirement,Bug,Screened,Excluded,False_Positive_Rate,Merged_Repeated_Rows",
        # the excluded item counts in neither a year nor Issues, only in screening
        "mindspore/mindformers,gitee,0,1,0,1,2,0,0,0,1,1,1.0000,0",
        "NVIDIA/Megatron-LM,github,1,1,1,0,3,1,0,1,1,0,0.0000,0",
        "Total,,1,2,1,1,5,1,0,1,2,1,0.5000,0",
        "",
    ]


def test_filters_narrow_every_format(small):
    def urls(**options):
        return [row[0] for row in rows_of(small, **options)[1:]]

    assert urls(format="study", repository="nvidia/megatron-lm") == [
        MEGATRON + "101",
        MEGATRON + "102",
    ]
    assert urls(format="final", type="A") == [MEGATRON + "102"]
    labeling = [MINDFORMERS + "IAB123", MINDFORMERS + "IAB125"]
    assert urls(format="study", stage="labeling") == labeling
    # The window is inclusive and in UTC: 23:30 on its last day is in.
    assert urls(format="long", created_from="2024-01-01", created_until="2024-12-31") == [
        MEGATRON + "102",
        MEGATRON + "102",
        MINDFORMERS + "IAB123",
    ]
    table = rows_of(small, format="repositories", repository="mindspore/mindformers")
    assert [row[0] for row in table] == ["Repository", "mindspore/mindformers", "Total"]
    # The estimate behind the progress bar counts the same rows.
    for format, expected in [("study", 4), ("long", 7), ("final", 2), ("repositories", 3)]:
        options = export_options(small, format=format)
        rows = list(export_rows(small, options))
        assert export_count(small, options) == expected == len(rows) - 1


def test_formula_cells_are_neutralised_in_the_raw_text(small):
    text = text_of(small, format="final")
    assert "'=HYPERLINK(" in text
    assert "\r\n=" not in text
    assert ",=" not in text
    assert ',"=' not in text
    long = text_of(small, format="long")
    assert long.count("'=HYPERLINK(") == 1
    assert all(line.endswith("\r\n") for line in io.StringIO(long, newline=""))


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"format": "xml"}, "Unknown export format"),
        ({"format": "study", "level": "deep"}, "Unknown level"),
        ({"format": "study", "repository": "Megatron-LM"}, "owner/repo"),
        ({"format": "final", "type": "Z"}, "not a type of"),
        ({"format": "final", "type": "C.1"}, "not a type of"),
        ({"format": "long", "stage": "done"}, "Unknown stage"),
        ({"format": "long", "created_from": "2024-13-01"}, "YYYY-MM-DD"),
        ({"format": "long", "created_from": "2025-01-01", "created_until": "2024-01-01"}, "empty"),
    ],
)
def test_bad_options_are_refused_with_the_reason(small, options, message):
    with pytest.raises(ConcordError, match=message):
        export_options(small, **options)


def test_options_round_trip_through_json(small):
    options = export_options(
        small, format="long", repository="NVIDIA/Megatron-LM", created_from=date(2024, 1, 1)
    )
    assert options.as_json()["created_from"] == "2024-01-01"
    assert export_options(small, **options.as_json()) == options
