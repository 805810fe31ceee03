"""Harvest benchmark: 40,000 issues and 120,000 comments from the fake forge into PostgreSQL.

`python -m tests.bench.harvest` (`make bench` runs it after the label benchmark). The fake forge
answers at once, so this measures Concord: paging, parsing, upserts and checkpoints. Prints the
requests made against the floor ceil(issues/100) + ceil(comments/100), wall time and issues/s, as
medians over repeats (each repeat starts from an empty database and no ETags).

Targets (issue #3): requests <= 1.02 x floor; throughput >= 1,000 issues/s.
"""

from __future__ import annotations

import argparse
import math
import os
import statistics
import sys
import time

DEFAULT_DATABASE_URL = "postgres://postgres@127.0.0.1:5432/concord_bench_harvest"
REQUEST_SLACK = 1.02
THROUGHPUT_TARGET = 1_000.0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--issues", type=int, default=40_000)
    parser.add_argument("--comments-per-issue", type=int, default=3)
    parser.add_argument("--prs", type=int, default=0, help="pull requests mixed into the listing")
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args(argv)

    os.environ.setdefault("DATABASE_URL", DEFAULT_DATABASE_URL)
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "concord.settings")
    os.environ.setdefault("SECRET_KEY", "bench-only-not-secret")
    from tests.bench.run import ensure_database

    ensure_database(os.environ["DATABASE_URL"], force=False)
    import django

    django.setup()
    from django.conf import settings
    from django.core.management import call_command

    call_command("migrate", verbosity=0)
    from tests.fakes.forge import FakeForge, make_github_issues

    print(f"generating {args.issues:,} issues x {args.comments_per_issue} comments ...", flush=True)
    issues, comments = make_github_issues(
        "pytorch",
        "pytorch",
        args.issues,
        n_prs=args.prs,
        comments_per_issue=args.comments_per_issue,
        start="2023-01-01",
        end="2025-04-30",
    )
    with FakeForge() as forge:
        forge.add_github_repo("pytorch", "pytorch", issues, comments)
        settings.GITHUB_API_URL = forge.github_api
        runs = [_harvest_once(forge) for _ in range(args.repeats)]
    return _report(runs, args)


def _harvest_once(forge) -> dict:
    from datetime import date

    from django.db import connection

    from ingest.harvest import harvest_advance, harvest_start
    from ingest.models import Comment, HarvestRun, Issue, Source

    with connection.cursor() as cursor:  # this database holds nothing but the harvest's rows
        tables = ", ".join(m._meta.db_table for m in (Comment, Issue, HarvestRun, Source))
        cursor.execute(f"TRUNCATE {tables} CASCADE")
    source = Source.objects.create(
        host="github",
        owner="pytorch",
        repo="pytorch",
        created_from=date(2023, 1, 1),
        created_until=date(2025, 4, 30),
    )
    forge.reset_log()
    started = time.perf_counter()
    run = harvest_advance(run_id=harvest_start(source=source, enqueue=False).pk)
    seconds = time.perf_counter() - started
    stored = (Issue.objects.count(), Comment.objects.count())
    print(
        f"  run: {run.status}, {stored[0]:,} issues, {stored[1]:,} comments, "
        f"{forge.request_count:,} requests, {seconds:.1f} s",
        flush=True,
    )
    return {
        "seconds": seconds,
        "requests": forge.request_count,
        "issues": stored[0],
        "comments": stored[1],
        "status": run.status,
    }


def _report(runs: list[dict], args) -> int:
    issues, comments = runs[-1]["issues"], runs[-1]["comments"]
    floor = math.ceil(issues / 100) + math.ceil(comments / 100)
    requests = statistics.median(r["requests"] for r in runs)
    seconds = statistics.median(r["seconds"] for r in runs)
    rate = issues / seconds
    ok_requests = requests <= REQUEST_SLACK * floor
    ok_rate = rate >= THROUGHPUT_TARGET
    ok_data = all(r["status"] == "done" and r["issues"] == issues for r in runs)
    print()
    print(f"harvest benchmark: {issues:,} issues, {comments:,} comments, median of {len(runs)}")
    print(
        f"  requests      {requests:>10,.0f}   floor {floor:,}  ratio {requests / floor:.3f}"
        f"  target <= {REQUEST_SLACK}  {'PASS' if ok_requests else 'FAIL'}"
    )
    print(
        f"  wall time     {seconds:>10.1f} s (min {min(r['seconds'] for r in runs):.1f}, "
        f"max {max(r['seconds'] for r in runs):.1f})"
    )
    print(
        f"  throughput    {rate:>10,.0f} issues/s   target >= {THROUGHPUT_TARGET:,.0f}"
        f"  {'PASS' if ok_rate else 'FAIL'}"
    )
    return 0 if ok_requests and ok_rate and ok_data else 1


if __name__ == "__main__":
    sys.exit(main())
