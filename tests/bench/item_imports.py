"""Item-import benchmark at study scale on PostgreSQL: `python -m tests.bench.item_imports`.

Generated JSONL files of issues (11 repositories, a body of about 1.5 kB in English and Chinese,
two comments each): 38,742 issues (~57 MB, the study's size) and 140,000 (~206 MB), each imported
as the worker does it (`annotation.projects.item_imports.item_import_run` on a queued job), in a
process of its own so that its peak RSS is the import's:

* first - into an empty database: every issue, comment and item is new. No target for the time
          (the study-label import of the same number of issues targets 20 s).
* again - the same file into the now full project: everything is checked and upserted, nothing
          is added.

Issue 25: the worker's peak memory must not grow with the file (it held the file and every
record: 471 MiB for 57 MB, 1,533 MiB for 206 MB). The bench fails when a run's peak RSS is over
PEAK_LIMIT_MIB.

On its own database (default `concord_bench_item_imports`; the bench empties its issue tables,
so the name must contain "bench" unless --force). Options: --rows N [N ...], --repeats N,
--force.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from functools import partial
from pathlib import Path

from tests.bench.run import (
    STUDY_ROWS,
    Figure,
    configure_environment,
    ensure_database,
    load_taxonomy,
    peak_rss_mib,
    print_table,
    setup_django,
    timed,
)

DEFAULT_DATABASE_URL = "postgres://postgres@127.0.0.1:5432/concord_bench_item_imports"
SIZES = (STUDY_ROWS, 140_000)  # ~57 MB and ~206 MB
PEAK_LIMIT_MIB = 300
REPOSITORIES = 11
BODY = (
    "Training with `--sequence-parallel` and bf16 runs out of memory at step {n}. "
    "使用序列并行和 bf16 训练时，在第 {n} 步显存溢出。\n\n```\nRuntimeError: CUDA out of memory. "  # noqa: RUF001 - Chinese punctuation
    "Tried to allocate 2.00 GiB (GPU 0; 79.35 GiB total capacity)\n```\n"
) * 4


def issue_lines(rows: int) -> Iterator[str]:
    for n in range(1, rows + 1):
        url = f"https://github.com/bench-org/repo-{n % REPOSITORIES}/issues/{n}"
        record = {
            "url": url,
            "title": f"OOM with sequence parallel #{n} 显存溢出",
            "body": BODY.format(n=n),
            "author": f"user{n % 500}",
            "state": "open" if n % 3 else "closed",
            "labels": ["bug"] if n % 2 else [],
            "created_at": f"2024-{n % 12 + 1:02d}-{n % 28 + 1:02d}T10:00:00Z",
            "updated_at": f"2024-{n % 12 + 1:02d}-{n % 28 + 1:02d}T12:00:00Z",
            "comments": [
                {
                    "author": "maintainer",
                    "body": "Which version?",
                    "created_at": "2024-06-01T11:00Z",
                },
                {"author": f"user{n % 500}", "body": "0.9", "created_at": "2024-06-01T12:00Z"},
            ],
        }
        yield json.dumps(record, ensure_ascii=False) + "\n"


def issues_jsonl(rows: int) -> str:
    return "".join(issue_lines(rows))


def queued_import(project, path: Path, *, enqueue: bool):
    """The file queued as the API queues it (read in blocks, as an upload arrives); the Queued."""
    from annotation.projects.item_imports import item_import_start

    with path.open("rb") as file:
        blocks = iter(partial(file.read, 1024 * 1024), b"")
        return item_import_start(
            project=project, user=None, name=path.name, blocks=blocks, enqueue=enqueue
        )


def run_import(project, path: Path) -> dict:
    """Queue the file as the API does, then run the job in a worker process of its own."""
    job = queued_import(project, path, enqueue=False).job
    command = [sys.executable, "-m", "tests.bench.item_imports", "--worker", str(job.pk)]
    done = subprocess.run(command, capture_output=True, text=True, check=False)
    if done.returncode:
        sys.exit(f"bench: the worker failed:\n{done.stderr}")
    result = json.loads(next(x for x in done.stdout.splitlines() if x.startswith("{")))
    if result["status"] != "done":
        sys.exit(f"bench: the import did not finish: {result['error']}")
    return result


def worker(job_id: int) -> int:
    """The worker's side: run one job, print what it took (time, peak RSS) as JSON."""
    import django

    configure_environment()
    django.setup()
    from annotation.projects.item_imports import item_import_run

    seconds, job = timed(lambda: item_import_run(job_id=job_id))
    peak = peak_rss_mib()
    result = {
        "status": job and job.status,
        "error": job and job.error,
        "created": job and job.issues_created,
        "added": job and job.items_added,
        "seconds": seconds,
        "peak_mib": peak,
    }
    print(json.dumps(result))
    return 0


def empty(taxonomy):
    from django.db import connection

    from annotation.models import Item, ItemImport, Project
    from ingest.models import Comment, Issue

    tables = [m._meta.db_table for m in (ItemImport, Item, Comment, Issue)]
    with connection.cursor() as cursor:
        cursor.execute(f"TRUNCATE {', '.join(tables)} RESTART IDENTITY CASCADE")
    Project.objects.filter(slug="bench-imports").delete()
    return Project.objects.create(
        name="Bench (item imports)", slug="bench-imports", taxonomy=taxonomy
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m tests.bench.item_imports", description=__doc__.split("\n")[0]
    )
    parser.add_argument("--rows", type=int, nargs="+", default=list(SIZES))
    parser.add_argument("--repeats", type=int, default=2)
    parser.add_argument("--force", action="store_true", help="allow a database not named *bench*")
    parser.add_argument("--worker", type=int, help=argparse.SUPPRESS)  # a job id: the child
    args = parser.parse_args(argv)
    if args.worker is not None:
        return worker(args.worker)

    os.environ.setdefault("DATABASE_URL", DEFAULT_DATABASE_URL)
    configure_environment()
    db_name = ensure_database(os.environ["DATABASE_URL"], args.force)
    setup_django()

    print(f"database {db_name}; Python {sys.version.split()[0]}; {os.cpu_count()} CPU(s)")
    taxonomy = load_taxonomy()
    figures, peaks = [], []
    with tempfile.TemporaryDirectory() as folder:
        for rows in args.rows:
            path = Path(folder) / f"bench-{rows}.jsonl"
            with path.open("w", encoding="utf-8") as file:
                file.writelines(issue_lines(rows))
            size = f"{path.stat().st_size / 1e6:.0f} MB"
            print(f"file: {rows} issues, {size}")
            first, again = [], []
            for i in range(args.repeats):
                project = empty(taxonomy)
                for label, times, new in (("first", first, True), ("again", again, False)):
                    run = run_import(project, path)
                    print(
                        f"  {label} run {i + 1}: {run['seconds']:.1f} s, peak RSS "
                        f"{run['peak_mib']:.0f} MiB, {run['created']} issues and "
                        f"{run['added']} items new"
                    )
                    times.append(run["seconds"])
                    peaks.append((size, run["peak_mib"]))
                    if not new and (run["created"] or run["added"]):
                        sys.exit("bench: importing the same file again added something")
            figures += [
                Figure(f"item import, first ({rows} issues)", first),
                Figure(f"item import, again ({rows} issues)", again),
            ]
            path.unlink()

    print_table(figures)
    print("(the machine is shared: figures vary with what else runs)")
    over = [f"{mib:.0f} MiB for {size}" for size, mib in peaks if mib > PEAK_LIMIT_MIB]
    if over:
        print(f"worker peak RSS over {PEAK_LIMIT_MIB} MiB: {', '.join(over)}")
        return 1
    print(f"worker peak RSS: at most {max(m for _, m in peaks):.0f} MiB (limit {PEAK_LIMIT_MIB})")
    return 0


if __name__ == "__main__":
    start = time.perf_counter()
    code = main()
    print(f"bench took {time.perf_counter() - start:.0f} s")
    sys.exit(code)
