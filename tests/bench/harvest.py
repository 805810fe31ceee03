"""Harvest benchmark: 40,000 issues and 120,000 comments, among pull requests and theirs, from
the fake forge into PostgreSQL, by each method: REST (no token) and GraphQL (a token).

`python -m tests.bench.harvest` (`make bench` runs it after the label benchmark). The fake forge
answers at once, so this measures Concord: paging, parsing, upserts and checkpoints. Prints, per
method, the requests made against two floors, wall time and issues/s, as medians over repeats
(each repeat starts from an empty database and no ETags):
- the issue's floor, ceil(issues/100) + ceil(comments/100): what reading only issues and their
  comments, 100 a page, would cost;
- the method's floor: REST must read the listing pages it shares with pull requests and the
  comment pages shared with pull requests (ceil(items/100) + ceil(all comments/100)); GraphQL
  needs ceil(issues/100) plus a page per further 100 comments of issues with more than 100.

Targets (issues #3 and #13): each method's requests <= 1.02 x its floor; GraphQL at the issue's
floor or below; throughput >= 1,000 issues/s. Then (issue #30) each method harvests the same
source again with nothing changed: at most one request charged to the rate limit (REST: every
page a 304; GraphQL: one query for what changed since).
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
    parser.add_argument(
        "--prs", type=int, default=20_000, help="pull requests mixed into the listing"
    )
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
    floors = _floors(issues, comments)
    with FakeForge() as forge:
        forge.add_github_repo("pytorch", "pytorch", issues, comments)
        settings.GITHUB_API_URL = forge.github_api
        methods, reruns = {}, {}
        for method, token in (("REST", ""), ("GraphQL", "bench-token")):
            methods[method] = [_harvest_once(forge, token) for _ in range(args.repeats)]
            reruns[method] = _rerun_unchanged(forge)
    return _report(methods, floors, reruns)


def _floors(issues: list[dict], comments: list[dict]) -> dict[str, int]:
    """The request floors (see the module's docstring); all items are in the window."""
    prs = {item["number"] for item in issues if "pull_request" in item}
    per_issue: dict[int, int] = {}
    for comment in comments:
        number = int(comment["issue_url"].rsplit("/", 1)[1])
        per_issue[number] = per_issue.get(number, 0) + 1
    n_issues = len(issues) - len(prs)
    issue_comments = sum(n for number, n in per_issue.items() if number not in prs)
    beyond = sum(
        math.ceil((n - 100) / 100) for k, n in per_issue.items() if n > 100 and k not in prs
    )
    return {
        "issue": math.ceil(n_issues / 100) + math.ceil(issue_comments / 100),
        "REST": math.ceil(len(issues) / 100) + math.ceil(len(comments) / 100),
        "GraphQL": math.ceil(n_issues / 100) + beyond,
    }


def _harvest_once(forge, token: str) -> dict:
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
        token=token,
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


def _rerun_unchanged(forge) -> dict:
    """The same source harvested again, nothing changed on the tracker: its requests, and how
    many of them cost rate limit (all but 304s; GitHub does not count a 304)."""
    from ingest.harvest import harvest_advance, harvest_start
    from ingest.models import Source

    forge.reset_log()
    run = harvest_advance(run_id=harvest_start(source=Source.objects.get(), enqueue=False).pk)
    charged = sum(1 for r in forge.requests if r["status"] != 304)
    print(f"  re-run: {run.status}, {forge.request_count:,} requests, {charged} charged")
    return {"requests": forge.request_count, "charged": charged, "status": run.status}


def _report(methods: dict[str, list[dict]], floors: dict[str, int], reruns: dict[str, dict]) -> int:
    ok = True
    issues, comments = (methods["REST"][-1][k] for k in ("issues", "comments"))
    repeats = len(methods["REST"])
    print()
    print(f"harvest benchmark: {issues:,} issues, {comments:,} comments, median of {repeats}")
    print(f"  issue's floor ceil(issues/100) + ceil(comments/100) = {floors['issue']:,}")
    for method, runs in methods.items():
        requests = statistics.median(r["requests"] for r in runs)
        seconds = statistics.median(r["seconds"] for r in runs)
        rate = issues / seconds
        floor = floors[method]
        ok_requests = requests <= REQUEST_SLACK * floor
        ok_rate = rate >= THROUGHPUT_TARGET
        ok_data = all(
            r["status"] == "done" and (r["issues"], r["comments"]) == (issues, comments)
            for r in runs
        )
        ok = ok and ok_requests and ok_rate and ok_data
        print(f"  {method}")
        print(
            f"    requests    {requests:>10,.0f}   its floor {floor:,} "
            f"(ratio {requests / floor:.3f}, target <= {REQUEST_SLACK} "
            f"{'PASS' if ok_requests else 'FAIL'}); "
            f"issue's floor {floors['issue']:,} (ratio {requests / floors['issue']:.3f})"
        )
        print(
            f"    wall time   {seconds:>10.1f} s (min {min(r['seconds'] for r in runs):.1f}, "
            f"max {max(r['seconds'] for r in runs):.1f})"
        )
        print(
            f"    throughput  {rate:>10,.0f} issues/s   target >= {THROUGHPUT_TARGET:,.0f}"
            f"  {'PASS' if ok_rate else 'FAIL'}   same data {'PASS' if ok_data else 'FAIL'}"
        )
        again = reruns[method]
        ok_again = again["status"] == "done" and again["charged"] <= 1
        ok = ok and ok_again
        print(
            f"    re-run, nothing changed: {again['requests']:,} requests, {again['charged']} "
            f"charged to the rate limit (target <= 1: 304s are free)  "
            f"{'PASS' if ok_again else 'FAIL'}"
        )
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
