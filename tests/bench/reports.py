"""Reports benchmarks at study scale on PostgreSQL: `python -m tests.bench.reports` (`make bench`).

On its own database (default `concord_bench_reports`, created if missing, kept between runs),
the project holds tests/bench/run.py's generated study file (38,742 issues x 7 labels + final
labels, 11 repositories), imported once. The import stamps every label with the same moment, so
label times are then spread deterministically over 26 weeks (each item's labels over a few
days), which gives the dashboard's weekly section ~26 weeks to compute. Then, medians of
several runs:

* dashboard    - annotation.reporting.reports.project_dashboard: Fleiss' kappa + CI and alpha for
                 every final type x level, repository x level and ISO week x level. Target <= 1 s.
* confusion    - annotation.reporting.reports.project_confusion at theme level.
* distribution - annotation.reporting.reports.project_distribution.

OpenBLAS runs with one thread unless OPENBLAS_NUM_THREADS says otherwise (see main()).

Options: --repeats N, --rows N, --seed S, --force (a database not named *bench*), --reimport.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from collections.abc import Callable

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

DEFAULT_DATABASE_URL = "postgres://postgres@127.0.0.1:5432/concord_bench_reports"
DASHBOARD_TARGET_S = 1.0
LABEL_COLUMNS = 7


def spread_label_times() -> None:
    """The import stamps every label with the same moment: spread them over 26 weeks."""
    from django.db import connection

    from annotation.models import Annotation

    table = Annotation._meta.db_table
    with connection.cursor() as cursor:
        # Label times the file does not carry: an item's labels start on one of 182 days
        # (26 weeks) and follow each other a few hours apart.
        cursor.execute(
            f"UPDATE {table} SET created_at = timestamptz '2024-03-04 08:00Z' "  # noqa: S608
            "+ ((item_id * 7919) % 182) * interval '1 day' "
            "+ ((id * 31) % 97) * interval '1 hour'"
        )
        cursor.execute("ANALYZE")


def report_cases() -> list[tuple[str, Callable, float | None]]:
    """(name, function of the project, target seconds) of every report timed."""
    from annotation.reporting.reports import (
        project_confusion,
        project_dashboard,
        project_distribution,
    )

    return [
        ("dashboard (type/repo/week x 3 levels)", project_dashboard, DASHBOARD_TARGET_S),
        ("confusion, theme level", lambda p: project_confusion(p, level="theme"), None),
        ("distribution", project_distribution, None),
    ]


def report_runs(project, repeats: int) -> tuple[list[Figure], dict]:
    """Each report `repeats` times after a warm-up: its figure and its last result by name."""
    cases = report_cases()
    cases[0][1](project)  # warm-up: imports, first-query costs
    figures, results = [], {}
    for name, fn, target in cases:
        runs = []
        for _ in range(repeats):
            seconds, results[name] = timed(lambda fn=fn: fn(project))
            runs.append(seconds)
        figures.append(Figure(name, runs, target))
    return figures, results


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m tests.bench.reports", description=__doc__.split("\n")[0]
    )
    parser.add_argument("--rows", type=int, default=STUDY_ROWS)
    parser.add_argument("--seed", type=int, default=SEED)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--force", action="store_true", help="allow a database not named *bench*")
    parser.add_argument("--reimport", action="store_true", help="empty and import again")
    args = parser.parse_args(argv)

    os.environ.setdefault("DATABASE_URL", DEFAULT_DATABASE_URL)
    # Krippendorff's alpha multiplies matrices through OpenBLAS, whose worker threads spin while
    # they wait: on a shared 2-core machine one run then takes 0.8 s or 6 s depending on what
    # else runs. One BLAS thread per process (as a web worker should run) keeps it steady; set
    # OPENBLAS_NUM_THREADS to measure otherwise. Must be set before numpy is first imported.
    os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
    configure_environment()
    db_name = ensure_database(os.environ["DATABASE_URL"], args.force)
    setup_django()

    print(
        f"database {db_name}; Python {sys.version.split()[0]}; {os.cpu_count()} CPU(s); "
        f"OPENBLAS_NUM_THREADS={os.environ['OPENBLAS_NUM_THREADS']}"
    )
    project = imported_study_project(
        load_taxonomy(),
        rows=args.rows,
        seed=args.seed,
        reimport=args.reimport,
        label_columns=LABEL_COLUMNS,
        after_import=spread_label_times,
    )
    figures, results = report_runs(project, args.repeats)
    names = list(results)

    dashboard = results[names[0]]
    print(
        f"\ndashboard: {dashboard.labels} labels, {len(dashboard.by_type) - 1} final types, "
        f"{len(dashboard.by_repository) - 1} repositories, {len(dashboard.by_week)} weeks"
    )
    for row in dashboard.by_type:
        for level, cell in row.items():
            kappa = f"kappa={cell.kappa:.3f}" if cell.kappa is not None else "kappa=n/a"
            alpha = f"alpha={cell.alpha_value:.3f}" if cell.alpha_value is not None else ""
            note = cell.left_out_why or cell.problem or ""
            print(f"  {cell.group:<16} {level:<8} n={cell.n_items:<6} {kappa} {alpha} {note}")
    confusion = results[names[1]]
    top = ", ".join(f"{p.a.code}/{p.b.code} {p.items}" for p in confusion.pairs[:5])
    print(f"confusion: {confusion.n_mixed} of {confusion.n_items} items mixed; top pairs {top}")

    print_table(figures)
    failed = [f.name for f in figures if f.verdict == "FAIL"]
    print("targets: " + ("all PASS" if not failed else "FAIL: " + ", ".join(failed)))
    print("(the machine is shared: figures vary with what else runs)")
    return 1 if failed else 0


if __name__ == "__main__":
    start = time.perf_counter()
    code = main()
    print(f"bench took {time.perf_counter() - start:.0f} s")
    sys.exit(code)
