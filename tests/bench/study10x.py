"""The 10x study in the study's label format: `python -m tests.bench.study10x --out FILE`.

387,420 issues (ten times the study's 38,742) in the 11 repositories of tests.bench.run's
REPOSITORIES at their shares, each row the labels of a real row of the study's label files
(`labels/*.csv`, resampled per repository as tests.bench.run.generate_csv does): the study's label
distribution and agreement structure, and its cell lengths (codes of 3 and 4 characters in the
study's proportions; 7 labels and a Final_Label a row, about 2.7 million labels). Issue numbers
look real (GitHub numbers, Gitee ids like IBDZ87).

Repeated rows: the importer keeps a file's first row for an issue URL and reports later rows that
repeat it (annotation.projects.importers). The four label files in the shared study data hold none,
so REPEAT_SHARE is a guess: 0.3 % of the rows come again further down their repository's part of
the file, every other one with other labels. They add lines, not issues.

`--scale 0.05` writes 5 % of it (for trying the benchmark out); `--seed` changes the draw. The
same options give the same bytes. `make bench-scale` (tests.bench.scale) writes it into
var/bench/ when it is missing.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

from tests.bench.run import REPOSITORIES, SEED, STUDY_ROWS, generate_csv

SCALE_ROWS = 10 * STUDY_ROWS  # 387,420
REPEAT_SHARE = 0.003


def study10x_rows(scale: float) -> int:
    return max(len(REPOSITORIES), round(SCALE_ROWS * scale))  # one issue per repository at least


def study10x_path(var_dir: Path, *, scale: float, seed: int) -> Path:
    return var_dir / "bench" / f"study-10x-{study10x_rows(scale)}-seed{seed}.csv"


def study10x_csv(path: Path, *, scale: float, seed: int, labels_dir: Path) -> dict[str, int]:
    """Write the file; returns its issues per repository."""
    return generate_csv(
        path,
        rows=study10x_rows(scale),
        seed=seed,
        labels_dir=labels_dir,
        repeat_share=REPEAT_SHARE,
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m tests.bench.study10x", description=__doc__.split("\n")[0]
    )
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--scale", type=float, default=1.0, help="share of the 10x study")
    parser.add_argument("--seed", type=int, default=SEED)
    args = parser.parse_args(argv)
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "concord.settings")
    os.environ.setdefault("DEBUG", "1")  # settings load without a SECRET_KEY; nothing is served
    from django.conf import settings

    started = time.perf_counter()
    labels_dir = Path(settings.STUDY_DATA_DIR) / "labels"
    per_repo = study10x_csv(args.out, scale=args.scale, seed=args.seed, labels_dir=labels_dir)
    lines = sum(1 for _ in args.out.open(encoding="utf-8")) - 1
    print(
        f"wrote {args.out}: {sum(per_repo.values()):,} issues in {len(per_repo)} repositories, "
        f"{lines:,} rows ({lines - sum(per_repo.values()):,} repeated), "
        f"{args.out.stat().st_size / 1e6:.1f} MB in {time.perf_counter() - started:.1f} s"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
