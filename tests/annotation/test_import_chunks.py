"""A study label file larger than a chunk (#31: the import holds CHUNK rows, not the file) is
written as it would be in one piece: repeats are found across chunks, a contradiction in a later
chunk leaves every row as it was, and a file whose lines end in a lone carriage return reads as
one ending in newlines."""

import pytest

from annotation.models import Annotation, MergedRepeat, Resolution
from annotation.projects import importers
from annotation.projects.importers import ImportFailed, study_labels_import
from tests.annotation.test_import_labels import database_fingerprint
from tests.annotation.test_import_repeats import HEADER, MEGATRON, repeating_file, write


@pytest.fixture
def small_chunks(monkeypatch):
    monkeypatch.setattr(importers, "CHUNK", 2)


def test_repeats_are_found_across_chunks(project, tmp_path, small_chunks):
    report = study_labels_import(project=project, path=repeating_file(tmp_path))

    assert (report.rows, report.items_created, report.annotations_created) == (2, 2, 4)
    assert [(r.line, r.first_line, r.labels_differ) for r in report.repeats] == [
        (3, 2, False),
        (5, 2, True),
        (6, 4, True),
    ]
    assert sorted(MergedRepeat.objects.values_list("line", "item__issue__number")) == [
        (3, "1"),
        (5, "1"),
        (6, "IBZ414"),
    ]
    assert Resolution.objects.filter(item__project=project).count() == 2


def test_a_contradiction_in_a_later_chunk_leaves_every_row_as_it_was(
    project, tmp_path, small_chunks
):
    study_labels_import(
        project=project, path=write(tmp_path, HEADER + f"{MEGATRON}9,C.9,C.9,C.9\n")
    )
    before = database_fingerprint()
    rows = "".join(f"{MEGATRON}{n},A.3,A.3,A.3\n" for n in range(1, 6))
    path = write(tmp_path, HEADER + rows + f"{MEGATRON}9,C.9,A.3,C.9\n", "later.csv")
    with pytest.raises(ImportFailed) as caught:
        study_labels_import(project=project, path=path)
    assert [(e.where.line, e.where.column) for e in caught.value.errors] == [(7, "Label2")]
    assert database_fingerprint() == before


def test_lines_ending_in_a_lone_carriage_return_read_as_lines(project, tmp_path):
    text = HEADER + f'{MEGATRON}1,C.9,C.9,C.9\n{MEGATRON}2,A.3,"A.3",\n'
    path = tmp_path / "mac.csv"
    path.write_bytes(text.replace("\n", "\r").encode())
    report = study_labels_import(project=project, path=path)
    assert (report.rows, report.annotations_created, len(report.repeats)) == (2, 4, 0)
    assert Annotation.objects.filter(item__project=project).count() == 4
