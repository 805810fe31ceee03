"""Export benchmarks at study scale on PostgreSQL: `python -m tests.bench.exports` (`make bench`).

On its own database (default `concord_bench_exports`, created if missing, kept between runs),
the project holds tests/bench/run.py's generated study file (38,742 issues x 7 labels + final
labels, 11 repositories), imported once; issues get creation dates spread over 2023-2025 so the
per-repository table has year columns. Then, medians of several runs:

* study        - `manage.py export --format study` equivalent (export_to_file). Target <= 3 s.
* long         - one row per label, 271,194 rows. Target <= 10 s, with flat memory: its peak
                 (tracemalloc, one extra run) is compared with that of a quarter of the rows.
* final        - one row per resolved issue (no target; for the record).
* repositories - per-repository statistics (Table I). Target <= 1 s.
* long, sparse - the long format of a project early in a study: every one of the 38,742 issues is
                 an item, 1,001 labels on 143 of them (issue 17: it read every item, 1.8 s).
                 Target <= 0.5 s.

Peak memory is measured in separate runs under tracemalloc (it slows Python down, so the timed
runs go without it); the RSS high-water mark of the process is printed too.

Options: --repeats N, --rows N, --seed S, --force (a database not named *bench*), --reimport,
--sparse-only (only the long export of the sparse project).
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
import tracemalloc
from pathlib import Path

from tests.bench.run import (
    SEED,
    STUDY_ROWS,
    Figure,
    configure_environment,
    ensure_database,
    imported_study_project,
    load_taxonomy,
    print_table,
    setup_django,
    timed,
)

DEFAULT_DATABASE_URL = "postgres://postgres@127.0.0.1:5432/concord_bench_exports"
TARGETS = {"study": 3.0, "long": 10.0, "final": None, "repositories": 1.0}
LABEL_COLUMNS = 7
# The repository behind about a quarter of the labels, for the flat-memory comparison.
QUARTER_REPOSITORY = "pytorch/pytorch"


def spread_issue_dates() -> None:
    """Creation dates the study file does not carry: spread deterministically over 2023-2025, so
    the per-repository table has year columns."""
    from django.db import connection

    with connection.cursor() as cursor:
        cursor.execute(
            "UPDATE ingest_issue SET created_at = timestamptz '2023-01-01 00:00Z' "
            "+ ((id * 7919) % 850) * interval '1 day' + (id % 86400) * interval '1 second'"
        )
        cursor.execute("ANALYZE")


SPARSE_SLUG = "bench-sparse"
SPARSE_ITEMS_LABELLED = 143  # x 7 labels: 1,001 labels


def sparse_project(full):
    """A project with every issue as an item and the labels of the full project's first
    SPARSE_ITEMS_LABELLED items, (re)built when it does not hold exactly that."""
    from annotation.gate import OPERATOR, Write
    from annotation.models import Annotation, Project
    from annotation.projects.services import project_items_add
    from ingest.models import Issue

    labelled = list(full.items.order_by("pk").values_list("pk", "issue_id")[:SPARSE_ITEMS_LABELLED])
    labels = Annotation.objects.filter(item_id__in=[pk for pk, _ in labelled])
    project = Project.objects.filter(slug=SPARSE_SLUG, taxonomy=full.taxonomy).first()
    expected = (Issue.objects.count(), labels.count())
    if project is not None:
        held = (project.items.count(), Annotation.objects.filter(item__project=project).count())
        if held == expected:
            return project
        project.delete()
    project = Project.objects.create(
        name="Bench (sparse)", slug=SPARSE_SLUG, taxonomy=full.taxonomy
    )
    project_items_add(
        project=project,
        actor=OPERATOR,
        write=Write.ITEMS_IMPORT,
        issue_ids=list(Issue.objects.values_list("pk", flat=True)),
    )
    item_of_issue = dict(project.items.values_list("issue_id", "pk"))
    issue_of_item = dict(labelled)
    Annotation.objects.bulk_create(
        Annotation(
            item_id=item_of_issue[issue_of_item[a.item_id]],
            volunteer_id=a.volunteer_id,
            node_id=a.node_id,
            summary=a.summary,
        )
        for a in labels
    )
    return project


def export_once(project, options, folder: Path) -> int:
    from annotation.reporting.exports import export_to_file

    return export_to_file(project, options, folder / f"{options.format}.csv")


def peak_mib(fn) -> float:
    tracemalloc.start()
    try:
        fn()
        return tracemalloc.get_traced_memory()[1] / 2**20
    finally:
        tracemalloc.stop()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m tests.bench.exports", description=__doc__.split("\n")[0]
    )
    parser.add_argument("--rows", type=int, default=STUDY_ROWS)
    parser.add_argument("--seed", type=int, default=SEED)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--force", action="store_true", help="allow a database not named *bench*")
    parser.add_argument("--reimport", action="store_true", help="empty and import again")
    parser.add_argument(
        "--sparse-only", action="store_true", help="only the long export of the sparse project"
    )
    args = parser.parse_args(argv)

    os.environ.setdefault("DATABASE_URL", DEFAULT_DATABASE_URL)
    configure_environment()
    db_name = ensure_database(os.environ["DATABASE_URL"], args.force)
    setup_django()

    from annotation.reporting.exports import export_count, export_options

    print(f"database {db_name}; Python {sys.version.split()[0]}; {os.cpu_count()} CPU(s)")
    project = imported_study_project(
        load_taxonomy(),
        rows=args.rows,
        seed=args.seed,
        reimport=args.reimport,
        label_columns=LABEL_COLUMNS,
        after_import=spread_issue_dates,
    )

    figures: list[Figure] = []
    problems: list[str] = []
    sizes: dict[str, int] = {}
    memory: list[tuple[str, int, float, float]] = []  # name, rows, output MB, peak MiB
    with tempfile.TemporaryDirectory(prefix="concord-bench-exports-") as tmp:
        folder = Path(tmp)
        for format, target in {} if args.sparse_only else TARGETS.items():
            options = export_options(project, format=format)
            expected = export_count(project, options)
            runs = []
            for i in range(args.repeats):
                seconds, rows = timed(lambda options=options: export_once(project, options, folder))
                runs.append(seconds)
                print(f"  {format} run {i + 1}: {seconds:.2f} s, {rows} rows")
                if rows != expected:
                    problems.append(f"{format} wrote {rows} rows, counted {expected}")
            sizes[format] = (folder / f"{format}.csv").stat().st_size
            figures.append(Figure(f"export {format} ({expected} rows)", runs, target))

        sparse = sparse_project(project)
        options = export_options(sparse, format="long")
        expected = export_count(sparse, options)
        runs = []
        for i in range(args.repeats):
            seconds, rows = timed(lambda: export_once(sparse, options, folder))
            runs.append(seconds)
            print(f"  long, sparse run {i + 1}: {seconds:.3f} s, {rows} rows")
            if rows != expected:
                problems.append(f"long, sparse wrote {rows} rows, counted {expected}")
        figures.append(
            Figure(
                f"export long, sparse ({sparse.items.count()} items, {expected} rows)", runs, 0.5
            )
        )

        def measure(name: str, **filters) -> None:
            options = export_options(project, **filters)
            rows = export_count(project, options)
            peak = peak_mib(lambda: export_once(project, options, folder))
            size = (folder / f"{options.format}.csv").stat().st_size / 1e6
            memory.append((name, rows, size, peak))

        for format in {} if args.sparse_only else TARGETS:
            measure(format, format=format)
        if not args.sparse_only:
            measure(
                f"long, {QUARTER_REPOSITORY} only", format="long", repository=QUARTER_REPOSITORY
            )

    print_table(figures)
    if args.sparse_only:
        return report_problems(problems, figures)
    print()
    print(f"{'peak memory (tracemalloc)':<34} {'rows':>8} {'file MB':>8} {'peak MiB':>9}")
    print("-" * 62)
    for name, rows, size, peak in memory:
        print(f"{name:<34} {rows:>8} {size:>8.1f} {peak:>9.2f}")
    print("-" * 62)
    long_peak = next(p for n, _, _, p in memory if n == "long")
    quarter_peak = memory[-1][3]
    flat = long_peak <= max(2 * quarter_peak, quarter_peak + 8)
    print(
        f"long format memory is {'flat' if flat else 'NOT flat'}: {long_peak:.1f} MiB for all "
        f"rows vs {quarter_peak:.1f} MiB for a quarter (output {sizes['long'] / 1e6:.0f} MB)"
    )
    if not flat:
        problems.append("long export memory grows with the rows")
    return report_problems(problems, figures)


def report_problems(problems: list[str], figures: list[Figure]) -> int:
    for problem in problems:
        print(f"PROBLEM: {problem}")
    failed = [f.name for f in figures if f.verdict == "FAIL"]
    print("targets: " + ("all PASS" if not failed else "FAIL: " + ", ".join(failed)))
    print("(the machine is shared: figures vary with what else runs)")
    return 1 if failed or problems else 0


if __name__ == "__main__":
    start = time.perf_counter()
    code = main()
    print(f"bench took {time.perf_counter() - start:.0f} s")
    sys.exit(code)
