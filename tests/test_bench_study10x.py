"""The 10x study file of `make bench-scale` (tests.bench.study10x): the study's label rows
resampled, issues distinct, repeated rows after the row they repeat, the same bytes each time."""

import csv
from pathlib import Path

from django.conf import settings

from tests.bench.run import REPOSITORIES, read_label_patterns
from tests.bench.study10x import REPEAT_SHARE, study10x_csv, study10x_rows

SCALE = 0.01  # 3,874 issues


def written(path: Path, seed: int = 7) -> list[list[str]]:
    labels = Path(settings.STUDY_DATA_DIR) / "labels"
    study10x_csv(path, scale=SCALE, seed=seed, labels_dir=labels)
    with path.open(newline="", encoding="utf-8") as handle:
        return list(csv.reader(handle))


def test_every_row_is_a_real_rows_labels_and_issues_are_the_scaled_count(tmp_path):
    header, *rows = written(tmp_path / "s.csv")
    patterns = read_label_patterns(Path(settings.STUDY_DATA_DIR) / "labels")
    real = {tuple(row) for pattern_rows in patterns.values() for row in pattern_rows}
    assert header == ["Issue_URL", *(f"Label{j}" for j in range(1, 8)), "Final_Label"]
    assert all(tuple(row[1:]) in real for row in rows)
    assert len({row[0] for row in rows}) == study10x_rows(SCALE)
    assert len({row[0].split("/")[4] for row in rows}) == len(REPOSITORIES)


def test_repeated_rows_come_after_the_row_they_repeat(tmp_path):
    _, *rows = written(tmp_path / "s.csv")
    first: dict[str, int] = {}
    repeats = 0
    for line, row in enumerate(rows):
        if row[0] in first:
            repeats += 1
            assert line > first[row[0]]
        else:
            first[row[0]] = line
    assert repeats == len(rows) - len(first)
    assert abs(repeats - REPEAT_SHARE * len(first)) <= len(REPOSITORIES)


def test_the_same_options_give_the_same_bytes(tmp_path):
    written(tmp_path / "a.csv")
    written(tmp_path / "b.csv")
    assert (tmp_path / "a.csv").read_bytes() == (tmp_path / "b.csv").read_bytes()
