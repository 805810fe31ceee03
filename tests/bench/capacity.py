"""Labeling capacity: volunteers who never pause, against gunicorn and a Celery worker as the
README's production setup runs them.

`python -m tests.bench.capacity` (`make bench` runs it; `make bench-capacity` alone). On its own
PostgreSQL database (default `concord_bench_capacity`) a project of 38,742 open issues (k = 3,
labels at theme depth) is made anew for every run. Each volunteer is a separate HTTP session with
an API token that asks for its next item and submits a label the moment the answer arrives (a
closed loop, no think time), for --seconds.

States (--state, any of):
- steady: the items were added and PostgreSQL's statistics are current;
- bulk:   volunteers start the moment the 38,742 items were added (fresh rows, no ANALYZE);
- late:   each volunteer already holds --late-labels labels (3,000 by default) on the project's
          items, so the claim must not walk past them.

Prints, per phase (state x volunteers), the median of --runs runs: labels/s, next-item and submit
p50/p95/p99, PostgreSQL CPU seconds per stored label (the bench database's backends and autovacuum
workers alive at the end of the run; gunicorn keeps its connections for CONN_MAX_AGE, so its
backends live through the run), the CPU the server's process tree and the benchmark's own
simulated volunteers spent per label (all share the two cores), and the peak RSS / PSS of the
server's process tree (gunicorn
arbiter and workers, Celery worker and its children), against the targets of issue #16:
>= 100 labels/s, next-item p50 <= 10 ms and p95 <= 50 ms, submit p95 <= 50 ms, <= 600 MB RSS,
0 labels lost, 0 items past k.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import statistics
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

from concord.celery import tracker_queue
from tests.bench.run import configure_environment, ensure_database, load_taxonomy, setup_django
from tests.load import (
    Tally,
    database_figures,
    drive,
    drive_open,
    outcome,
    percentiles,
    stored_labels,
)
from tests.stack import ROOT, gunicorn_server, production_env

DEFAULT_DATABASE_URL = "postgres://postgres@127.0.0.1:5432/concord_bench_capacity"
PROJECT_SLUG = "bench-capacity"
ITEMS = 38_742
OWNER = "bench-capacity"
PREFIX = "capvol-"
K = 3
STATES = ("steady", "bulk", "late")

TARGET_LABELS_PER_S = 100.0
TARGET_NEXT_P50_MS, TARGET_P95_MS = 10.0, 50.0
TARGET_RSS_MB = 600.0
# The per-person API limits (settings: 100 requests a second, 3,600 a minute) are for people and
# runaway scripts; a simulated volunteer with no think time sends about 55 requests a second on a
# fast machine (190 labels/s by 7 of them), so at the defaults the limit, not the server, set
# the pace and its quick 429s counted as latencies. The bench measures the server: the limits
# stay on (their Redis round trips are part of every request's cost), set above what it sends.
SCRIPTED_VOLUNTEER_LIMITS = {"API_THROTTLE_BURST": "10000/s", "API_THROTTLE_SUSTAINED": "600000/m"}


@dataclass
class Run:
    labels_per_s: float
    next_ms: tuple[float, float, float]
    submit_ms: tuple[float, float, float]
    pg_cpu_per_label_ms: float
    server_cpu_per_label_ms: float
    client_cpu_per_label_ms: float
    rss_mb: float
    pss_mb: float
    lost: int
    over_k: int
    errors: list[str] = field(default_factory=list)  # the first few, to show
    error_count: int = 0  # answers that were wrong or refused (a 429 among them), all of them
    largest_rss_mb: float = 0.0  # the largest single process of the tree
    behind_p99_ms: float = 0.0  # open loop: how late the latest arrivals started (p99)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=30.0, help="length of each run")
    parser.add_argument("--runs", type=int, default=3, help="runs per phase (median shown)")
    parser.add_argument("--volunteers", type=int, nargs="+", default=[7, 50])
    parser.add_argument("--state", choices=STATES, nargs="+", default=["steady"])
    parser.add_argument("--late-labels", type=int, default=3_000)
    parser.add_argument("--workers", type=int, help="gunicorn processes (default: the README's)")
    parser.add_argument("--threads", type=int, help="threads per process (default: the README's)")
    args = parser.parse_args(argv)

    os.environ.setdefault("DATABASE_URL", DEFAULT_DATABASE_URL)
    configure_environment()
    ensure_database(os.environ["DATABASE_URL"], force=False)
    setup_django()
    project = capacity_project()
    themes = list(project.taxonomy.nodes.filter(level="theme").values_list("code", flat=True))
    tokens = volunteer_tokens(project, max(args.volunteers))

    failed = False
    with served(args.workers, args.threads) as tree:
        for state in args.state:
            for volunteers in args.volunteers:
                runs = []
                for _ in range(args.runs):
                    prepare(project, state, tokens[:volunteers], args.late_labels)
                    runs.append(measure(tree, project, tokens[:volunteers], themes, args.seconds))
                failed |= not report(state, volunteers, runs)
    return 1 if failed else 0


# ------------------------------------------------------------------------------ the project


def capacity_project():
    from annotation.models import Project
    from taxonomy.models import Level

    project, _ = Project.objects.get_or_create(
        slug=PROJECT_SLUG,
        defaults={
            "name": "Bench capacity (study scale)",
            "taxonomy": load_taxonomy(),
            "overlap_k": K,
            "label_depth": Level.THEME,
            "screening_enabled": False,
        },
    )
    return project


def volunteer_tokens(project, count: int) -> list[str]:
    from django.contrib.auth import get_user_model
    from rest_framework.authtoken.models import Token

    from annotation.models import Membership, Role

    tokens = []
    for n in range(count):
        user, _ = get_user_model().objects.get_or_create(username=f"{PREFIX}{n}")
        Membership.objects.get_or_create(
            project=project, user=user, defaults={"role": Role.VOLUNTEER}
        )
        tokens.append(Token.objects.get_or_create(user=user)[0].key)
    return tokens


def prepare(project, state: str, tokens: list[str], late_labels: int) -> None:
    """The project's items made anew through the app's own bulk add, then the state's setup."""
    from django.db import connection

    from annotation.gate import OPERATOR, Write
    from annotation.models import Item, Reservation
    from annotation.projects.services import project_items_add
    from ingest.models import Issue

    started = time.perf_counter()
    Reservation.objects.filter(item__project=project).delete()
    Item.objects.filter(project=project).delete()  # with labels, skips, audit rows
    Issue.objects.filter(owner=OWNER).delete()
    with connection.cursor() as cursor:
        cursor.execute("VACUUM ANALYZE")  # every run starts from the same clean tables
    issues = Issue.objects.bulk_create(
        (
            Issue(
                host="github",
                owner=OWNER,
                repo="issues",
                number=str(n),
                url=f"https://github.com/{OWNER}/issues/issues/{n}",
                title=f"Training hangs after step {n} with NCCL timeout",
                body=ISSUE_BODY.format(n=n),  # each its own: no cache sees one text
            )
            for n in range(1, ITEMS + 1)
        ),
        batch_size=2000,
    )
    project_items_add(
        project=project, actor=OPERATOR, write=Write.ITEMS_IMPORT, issue_ids=[i.pk for i in issues]
    )
    if state == "late":
        give_labels(project, tokens, late_labels)
    if state != "bulk":
        with connection.cursor() as cursor:
            cursor.execute("ANALYZE")
    print(f"  [{state}] {ITEMS:,} items ready in {time.perf_counter() - started:.1f} s")


ISSUE_BODY = (
    "Running `torchrun --nproc_per_node 8 train.py` the job hangs after {n} steps.\n\n"
    "```\nRuntimeError: NCCL communicator was aborted on rank 3. Watchdog caught collective "
    "operation timeout: WorkNCCL(SeqNum={n}, OpType=ALLREDUCE) ran for 1800000 milliseconds\n"
    "```\n\nEnvironment: CUDA 12.1, 8 x A100, PyTorch 2.3. 训练在若干步后卡住。\n"
)


def give_labels(project, tokens: list[str], per_volunteer: int) -> None:
    """Late in the study: every item already holds one label, and each volunteer of the run gave
    `per_volunteer` of them (fewer if the items do not go round; the rest come from an earlier
    volunteer who left). So no item is untouched any more and the claim's queue (fewest labels
    first) is full of the volunteer's own items, which it must pass without reading them one by
    one. Counts and stages are set as live labeling would leave them."""
    from django.contrib.auth import get_user_model
    from django.db import connection
    from rest_framework.authtoken.models import Token

    from annotation.models import Annotation, Item, Stage

    node = project.taxonomy.nodes.filter(level="theme").order_by("code").first()
    ids = list(Item.objects.filter(project=project).order_by("?").values_list("pk", flat=True))
    users = [Token.objects.get(key=t).user_id for t in tokens]
    earlier, _ = get_user_model().objects.get_or_create(username=f"{PREFIX}earlier")
    per_volunteer = min(per_volunteer, len(ids) // len(users))  # one label per item so far
    print(f"  [late] {per_volunteer:,} labels per volunteer already given")
    labelers = [u for u in users for _ in range(per_volunteer)]
    labelers += [earlier.pk] * (len(ids) - len(labelers))
    Annotation.objects.bulk_create(
        (
            Annotation(item_id=item, volunteer_id=user, node=node, summary="earlier label")
            for item, user in zip(ids, labelers, strict=True)
        ),
        batch_size=5000,
    )
    with connection.cursor() as cursor:
        cursor.execute(
            "UPDATE annotation_item SET label_count = 1, stage = %s WHERE project_id = %s",
            [Stage.LABELING, project.pk],
        )


# ------------------------------------------------------------------------------ the server


@dataclass
class Tree:
    """The server's processes: gunicorn (arbiter and workers) and the Celery worker."""

    base_url: str
    roots: list[int]

    def pids(self) -> list[int]:
        found, todo = [], list(self.roots)
        while todo:
            pid = todo.pop()
            found.append(pid)
            children = Path(f"/proc/{pid}/task/{pid}/children")
            with contextlib.suppress(OSError):  # it ended meanwhile
                todo += [int(p) for p in children.read_text().split()]
        return found

    def memory_mb(self) -> tuple[float, float]:
        """RSS and PSS of the whole tree now."""
        each = self.each_memory_kib()
        return sum(r for r, _ in each) / 1024, sum(p for _, p in each) / 1024

    def largest_peak_mb(self) -> float:
        """The largest peak RSS (VmHWM) among the tree's processes alive now."""
        return max(self.peaks_mb().values(), default=0.0)

    def peaks_mb(self) -> dict[int, float]:
        """Each of the tree's processes alive now: its peak RSS (VmHWM), by pid."""
        peaks = {}
        for pid in self.pids():
            with contextlib.suppress(OSError):  # it ended meanwhile
                lines = Path(f"/proc/{pid}/status").read_text().splitlines()
                kib = [int(line.split()[1]) for line in lines if line.startswith("VmHWM:")]
                peaks[pid] = kib[0] / 1024 if kib else 0.0
        return peaks

    def largest_rss_mb(self) -> float:
        """RSS of the tree's largest process now."""
        return max((r for r, _ in self.each_memory_kib()), default=0) / 1024

    def each_memory_kib(self) -> list[tuple[int, int]]:
        """(RSS, PSS) in KiB of each process of the tree now."""
        each = []
        for pid in self.pids():
            try:
                text = Path(f"/proc/{pid}/smaps_rollup").read_text()
            except OSError:
                continue
            rss = pss = 0
            for line in text.splitlines():
                name, _, value = line.partition(":")
                if name == "Rss":
                    rss = int(value.split()[0])
                elif name == "Pss":
                    pss = int(value.split()[0])
            each.append((rss, pss))
        return each


@contextmanager
def served(workers: int | None, threads: int | None, **env_overrides: str):
    """gunicorn as the README runs it (its config file, or `workers` processes) and a Celery
    worker as docker-compose.yml runs it, both with production settings (and `env_overrides`,
    e.g. REDIS_URL)."""
    env = production_env(**{**SCRIPTED_VOLUNTEER_LIMITS, **env_overrides})
    with (
        gunicorn_server(workers, threads, env) as server,
        celery_worker(env, "bench-capacity") as worker,
    ):
        yield Tree(server.base_url, [server.process.pid, worker])


@contextmanager
def celery_worker(env: dict, queue: str) -> Iterator[int]:
    """A Celery worker as docker-compose.yml runs it, with `env`, on `queue`; its pid."""
    celery = subprocess.Popen(
        [sys.executable, "-m", "celery", "-A", "concord", "worker", "--loglevel", "WARNING",
         "--queues", f"{queue},{tracker_queue(queue)}"],
        cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )  # fmt: skip
    try:
        time.sleep(3)  # the worker's children start
        yield celery.pid
    finally:
        celery.terminate()
        celery.wait(timeout=30)


# ------------------------------------------------------------------------------ one run


def postgres_cpu_seconds(database: str) -> dict[int, float]:
    """CPU seconds of each PostgreSQL process working for `database` (its backends and
    autovacuum workers, by their process titles), by pid: other databases are not counted."""
    pids = []
    for proc in Path("/proc").glob("[0-9]*"):
        try:
            title = (proc / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
        except OSError:  # ended meanwhile
            continue
        if title.startswith("postgres:") and f" {database} " in f"{title} ":
            pids.append(int(proc.name))
    return cpu_seconds(pids)


def cpu_seconds(pids: list[int]) -> dict[int, float]:
    """CPU seconds (user and system) each of `pids` has used so far, by pid."""
    ticks = os.sysconf("SC_CLK_TCK")
    seconds: dict[int, float] = {}
    for pid in pids:
        try:
            text = Path(f"/proc/{pid}/stat").read_text()
        except OSError:  # ended meanwhile
            continue
        fields = text[text.rindex(")") + 2 :].split()
        seconds[pid] = (int(fields[11]) + int(fields[12])) / ticks  # utime, stime
    return seconds


def used_since(before: dict[int, float], after: dict[int, float]) -> float:
    """CPU seconds used between two readings; a process that ended meanwhile counts nothing
    (its reading is gone), one that started counts all it used."""
    return sum(seconds - before.get(pid, 0.0) for pid, seconds in after.items())


def measure(
    tree: Tree,
    project,
    tokens: list[str],
    themes: list[str],
    seconds: float,
    rate: float | None = None,
) -> Run:
    """One run of the volunteers: a closed loop (tests.load.drive, no think time), or with `rate`
    an open loop of that many labels per second in all (tests.load.drive_open)."""
    from django.db import connection

    peak = [0.0, 0.0, 0.0]
    done = threading.Event()

    def sample() -> None:
        while not done.is_set():
            rss, pss = tree.memory_mb()
            peak[0], peak[1] = max(peak[0], rss), max(peak[1], pss)
            peak[2] = max(peak[2], tree.largest_rss_mb())
            done.wait(0.5)

    sampler = threading.Thread(target=sample)
    sampler.start()
    database = connection.settings_dict["NAME"]
    earlier = stored_labels(project.slug, tokens)  # late in the study: labels given before the run
    cpu_before = postgres_cpu_seconds(database)  # by process: one that ends must not count less
    server_before = cpu_seconds(tree.pids())
    client_before = time.process_time()  # the simulated volunteers' own work, on the same cores
    if rate is None:
        tally: Tally = drive(tree.base_url, project.slug, tokens, themes, seconds, 0.0)
    else:
        tally = drive_open(tree.base_url, project.slug, tokens, themes, seconds, rate)
    client = time.process_time() - client_before
    server = used_since(server_before, cpu_seconds(tree.pids()))
    cpu = used_since(cpu_before, postgres_cpu_seconds(database))
    done.set()
    sampler.join()
    figures = outcome(tally, database_figures(project.slug, tokens), before=earlier)
    stored = max(figures["stored"], 1)
    return Run(
        labels_per_s=figures["stored"] / seconds,
        next_ms=percentiles(tally.next_ms) if len(tally.next_ms) > 1 else (0.0, 0.0, 0.0),
        submit_ms=percentiles(tally.submit_ms) if len(tally.submit_ms) > 1 else (0.0, 0.0, 0.0),
        pg_cpu_per_label_ms=cpu / stored * 1000,
        server_cpu_per_label_ms=server / stored * 1000,
        client_cpu_per_label_ms=client / stored * 1000,
        rss_mb=peak[0],
        pss_mb=peak[1],
        lost=figures["lost"],
        over_k=figures["over_k"],
        errors=tally.errors[:5],
        error_count=len(tally.errors),
        largest_rss_mb=peak[2],
        behind_p99_ms=percentiles(tally.behind_ms)[2] if len(tally.behind_ms) > 1 else 0.0,
    )


def report(state: str, volunteers: int, runs: list[Run]) -> bool:
    def med(values) -> float:
        return statistics.median(values)

    rate = med(r.labels_per_s for r in runs)
    nxt = [med(r.next_ms[i] for r in runs) for i in range(3)]
    sub = [med(r.submit_ms[i] for r in runs) for i in range(3)]
    rss, pss = med(r.rss_mb for r in runs), med(r.pss_mb for r in runs)
    lost, over_k = sum(r.lost for r in runs), sum(r.over_k for r in runs)
    errors = [e for r in runs for e in r.errors]
    print(f"\n{state}, {volunteers} volunteers, median of {len(runs)} runs:")
    each = ", ".join(f"{r.labels_per_s:.1f}" for r in runs)
    print(f"  labels/s       {rate:7.1f}   (runs: {each})")
    print(f"  next-item ms   p50 {nxt[0]:6.1f}  p95 {nxt[1]:6.1f}  p99 {nxt[2]:6.1f}")
    print(f"  submit ms      p50 {sub[0]:6.1f}  p95 {sub[1]:6.1f}  p99 {sub[2]:6.1f}")
    pg = med(r.pg_cpu_per_label_ms for r in runs)
    server = med(r.server_cpu_per_label_ms for r in runs)
    client = med(r.client_cpu_per_label_ms for r in runs)
    print(f"  PostgreSQL CPU {pg:6.2f} ms per stored label")
    print(f"  CPU per label  server tree {server:.2f} ms, benchmark client {client:.2f} ms")
    print(f"  server tree    peak RSS {rss:6.0f} MB, PSS {pss:6.0f} MB")
    print(f"  lost {lost}, items past k {over_k}")
    for error in errors[:5]:
        print(f"  ERROR {error}")
    ok = (
        rate >= TARGET_LABELS_PER_S
        and nxt[0] <= TARGET_NEXT_P50_MS
        and nxt[1] <= TARGET_P95_MS
        and sub[1] <= TARGET_P95_MS
        and rss <= TARGET_RSS_MB
        and lost == over_k == 0
        and not errors
    )
    print(
        f"  targets >= {TARGET_LABELS_PER_S:.0f}/s, next p50 <= {TARGET_NEXT_P50_MS:.0f} ms, "
        f"p95 <= {TARGET_P95_MS:.0f} ms, submit p95 <= {TARGET_P95_MS:.0f} ms, "
        f"RSS <= {TARGET_RSS_MB:.0f} MB, 0 lost, 0 past k: {'PASS' if ok else 'FAIL'}"
    )
    return ok


if __name__ == "__main__":
    sys.exit(main())
