"""Item-import benchmark at study scale on PostgreSQL: `python -m tests.bench.item_imports`.

A generated JSONL file of 38,742 issues (11 repositories, a body of about 1.5 kB in English and
Chinese, two comments each; ~75 MB, so ITEM_IMPORT_MAX_BYTES is raised for it) imported as the
worker does it (`annotation.projects.item_imports.item_import_run` on a job row):

* first - into an empty database: every issue, comment and item is new. No target; the figure
          is for the record (the study-label import of the same number of issues targets 20 s).
* again - the same file into the now full project: everything is checked and upserted, nothing
          is added.

On its own database (default `concord_bench_item_imports`; the bench empties its issue tables,
so the name must contain "bench" unless --force). Options: --rows N, --repeats N, --force.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time

from tests.bench.run import (
    STUDY_ROWS,
    Figure,
    configure_environment,
    ensure_database,
    load_taxonomy,
    print_table,
    setup_django,
    timed,
)

DEFAULT_DATABASE_URL = "postgres://postgres@127.0.0.1:5432/concord_bench_item_imports"
REPOSITORIES = 11
BODY = (
    "Training with `--sequence-parallel` and bf16 runs out of memory at step {n}. "
    "使用序列并行和 bf16 训练时，在第 {n} 步显存溢出。\n\n```\nRuntimeError: CUDA out of memory. "  # noqa: RUF001 - Chinese punctuation
    "Tried to allocate 2.00 GiB (GPU 0; 79.35 GiB total capacity)\n```\n"
) * 4


def issues_jsonl(rows: int) -> str:
    lines = []
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
        lines.append(json.dumps(record, ensure_ascii=False))
    return "\n".join(lines) + "\n"


def run_import(project, text: str) -> tuple[int, int]:
    from annotation.models import ItemImport, JobStatus
    from annotation.projects.item_imports import item_import_run

    job = ItemImport.objects.create(project=project, name="bench.jsonl", text=text)
    done = item_import_run(job_id=job.pk)
    if done is None or done.status != JobStatus.DONE:
        sys.exit(f"bench: the import did not finish: {done and done.error}")
    return done.issues_created, done.items_added


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
    parser.add_argument("--rows", type=int, default=STUDY_ROWS)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--force", action="store_true", help="allow a database not named *bench*")
    args = parser.parse_args(argv)

    os.environ.setdefault("DATABASE_URL", DEFAULT_DATABASE_URL)
    configure_environment()
    db_name = ensure_database(os.environ["DATABASE_URL"], args.force)
    setup_django()
    from django.conf import settings

    print(f"database {db_name}; Python {sys.version.split()[0]}; {os.cpu_count()} CPU(s)")
    taxonomy = load_taxonomy()
    text = issues_jsonl(args.rows)
    settings.ITEM_IMPORT_MAX_BYTES = max(settings.ITEM_IMPORT_MAX_BYTES, 2 * len(text.encode()))
    print(f"file: {args.rows} issues, {len(text.encode()) / 1e6:.0f} MB")

    first, again = [], []
    for i in range(args.repeats):
        project = empty(taxonomy)
        seconds, (created, added) = timed(lambda project=project: run_import(project, text))
        print(f"  first run {i + 1}: {seconds:.1f} s, {created} issues and {added} items new")
        first.append(seconds)
        seconds, (created, added) = timed(lambda project=project: run_import(project, text))
        print(f"  again run {i + 1}: {seconds:.1f} s, {created} issues and {added} items new")
        again.append(seconds)
        if created or added:
            sys.exit("bench: importing the same file again added something")

    print_table(
        [
            Figure(f"item import, first ({args.rows} issues)", first),
            Figure(f"item import, again ({args.rows} issues)", again),
        ]
    )
    print("(the machine is shared: figures vary with what else runs)")
    return 0


if __name__ == "__main__":
    start = time.perf_counter()
    code = main()
    print(f"bench took {time.perf_counter() - start:.0f} s")
    sys.exit(code)
