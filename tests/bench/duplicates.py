# ruff: noqa: RUF001 - Chinese punctuation in generated issue text
"""Near-duplicate issues (annotation.duplicates): quality on the evaluation set, speed and memory
at the study's scale. `python -m tests.bench.duplicates` (`make bench` calls it).

* quality - tests/bench/duplicate_cases.py: re-worded re-reports, cross-posts, Chinese/English
            pairs on one error, the same error pasted again, and hard negatives (two problems in
            one template, one library failing two ways, the same frames under other errors),
            among ordinary issues in the same templates. Precision and recall of the labeled
            pairs at the default threshold (and around it). Goal >= 0.9 both.
* build   - the index of a project of 38,742 generated issues over the study's 11 repositories,
            each in its tracker's template with frames and logs (2 % re-reported in other
            words), as the Celery task builds it (read, learn, pair, write), in a process of its
            own whose peak RSS is the worker's memory. Targets <= 60 s and <= 500 MiB.
* lookup  - one item's duplicates as the resolve page and the API read them
            (duplicates_of), for 500 random items: p95 target <= 20 ms.

The project (slug bench-duplicates) is kept between runs in its own database (default
concord_bench_duplicates). Options: --repeats N, --rows N, --seed S.
"""

from __future__ import annotations

import argparse
import os
import random
import resource
import statistics
import subprocess
import sys
import time

from tests.bench.duplicate_cases import DUPLICATES, HARD_NEGATIVES, TEMPLATES, filler
from tests.bench.run import (
    REPOSITORIES,
    STUDY_ROWS,
    configure_environment,
    ensure_database,
    load_taxonomy,
    scaled_counts,
    setup_django,
)

DEFAULT_DATABASE_URL = "postgres://postgres@127.0.0.1:5432/concord_bench_duplicates"
PROJECT_SLUG = "bench-duplicates"
SEED = 29
BUILD_TARGET_S = 60.0
LOOKUP_TARGET_MS = 20.0
MEMORY_TARGET_MIB = 500.0
QUALITY_GOAL = 0.9
LOOKUPS = 500


# ---------------------------------------------------------------- quality


def evaluation(threshold: float | None = None) -> dict[float, tuple[float, float, int, int]]:
    """Precision and recall of the labeled pairs at the default threshold and around it:
    threshold -> (precision, recall, true pairs found, pairs predicted)."""
    from annotation.duplicates.similarity import DEFAULT_THRESHOLD, similar_pairs
    from annotation.duplicates.text import Report

    issues = [i for pair in DUPLICATES + HARD_NEGATIVES for i in pair] + filler(300)
    labeled = 2 * (len(DUPLICATES) + len(HARD_NEGATIVES))
    truth = {(2 * n, 2 * n + 1) for n in range(len(DUPLICATES))}
    reports = [Report(k, i.tracker, i.title, i.body) for k, i in enumerate(issues)]
    scores = {
        (p.a, p.b): p.similarity
        for p in similar_pairs(reports, threshold=0.2).pairs
        if p.a < labeled
    }
    out = {}
    base = DEFAULT_THRESHOLD if threshold is None else threshold
    for t in sorted({base, base - 0.1, base - 0.05, base + 0.05, base + 0.1}):
        predicted = {pair for pair, s in scores.items() if s >= t}
        hits = len(predicted & truth)
        precision = hits / len(predicted) if predicted else 1.0
        out[round(t, 2)] = (precision, hits / len(truth), hits, len(predicted))
    return out


def print_quality() -> bool:
    from annotation.duplicates.similarity import DEFAULT_THRESHOLD

    rows = evaluation()
    print(
        f"\nquality: {len(DUPLICATES)} duplicate pairs, {len(HARD_NEGATIVES)} hard negative "
        "pairs, 300 ordinary issues in the same templates"
    )
    print(f"{'threshold':>9} {'precision':>9} {'recall':>7} {'found':>6} {'predicted':>9}")
    for t, (precision, recall, hits, predicted) in rows.items():
        mark = "  <- default" if abs(t - DEFAULT_THRESHOLD) < 1e-9 else ""
        print(f"{t:>9.2f} {precision:>9.3f} {recall:>7.3f} {hits:>6} {predicted:>9}{mark}")
    precision, recall, _, _ = rows[round(DEFAULT_THRESHOLD, 2)]
    ok = precision >= QUALITY_GOAL and recall >= QUALITY_GOAL
    print(
        f"goal: precision and recall >= {QUALITY_GOAL} at the default: {'PASS' if ok else 'FAIL'}"
    )
    return ok


# ---------------------------------------------------------------- the study-scale project

WORDS = [
    "allocator",
    "attention",
    "backward",
    "batch",
    "bucket",
    "cache",
    "callback",
    "checkpoint",
    "collective",
    "compile",
    "config",
    "context",
    "converter",
    "dataloader",
    "decoder",
    "device",
    "dispatcher",
    "embedding",
    "encoder",
    "engine",
    "evaluator",
    "executor",
    "exporter",
    "fusion",
    "generator",
    "gradient",
    "graph",
    "hook",
    "kernel",
    "launcher",
    "layer",
    "logger",
    "loss",
    "mask",
    "memory",
    "metric",
    "module",
    "optimizer",
    "padding",
    "parallel",
    "partition",
    "pipeline",
    "placement",
    "planner",
    "pool",
    "profiler",
    "quantizer",
    "rank",
    "reducer",
    "registry",
    "rotary",
    "sampler",
    "scaler",
    "scheduler",
    "serializer",
    "shard",
    "sharder",
    "slicer",
    "snapshot",
    "stream",
    "tensor",
    "tokenizer",
    "tracer",
    "trainer",
    "vocab",
    "weight",
    "worker",
]
VERBS = [
    "hangs",
    "crashes",
    "leaks",
    "stalls",
    "diverges",
    "overflows",
    "deadlocks",
    "fails",
    "segfaults",
    "slows",
]
WHEN = [
    "at startup",
    "after resuming",
    "on the second epoch",
    "with mixed precision",
    "under fp8",
    "on multi-node",
    "with a custom dataset",
    "after upgrading",
    "in eval mode",
    "with long sequences",
    "on CPU offload",
    "with gradient accumulation",
    "when saving",
    "when loading",
    "with tensor parallel 8",
]
ZH = [
    "训练时报错",
    "推理结果不对",
    "加载权重失败",
    "多卡运行卡住",
    "显存不足",
    "精度下降",
    "编译失败",
    "保存模型报错",
    "转换脚本出错",
    "性能很差",
    "数据集加载慢",
    "分布式初始化超时",
]
ERRORS = [
    "RuntimeError",
    "ValueError",
    "TypeError",
    "KeyError",
    "AssertionError",
    "OSError",
    "IndexError",
    "NotImplementedError",
    "AttributeError",
    "ImportError",
]


def issue_text(rng: random.Random, host: str, serial: int) -> tuple[str, str]:
    """A title and body shaped like the trackers' issues: template, description, frames, log."""
    word, other = rng.sample(WORDS, 2)
    ident = f"{word}_{other}_{serial % 997}"
    shape = f"[{rng.randint(1, 64)}, {rng.randint(64, 8192)}]"
    error = f"{rng.choice(ERRORS)}: {ident} {rng.choice(VERBS)} for shape {shape}"
    frames = "\n".join(
        f'  File "/usr/lib/python3.10/site-packages/pkg/{rng.choice(WORDS)}.py", line '
        f"{rng.randint(10, 3000)}, in {rng.choice(WORDS)}\n    return self.{rng.choice(WORDS)}(x)"
        for _ in range(rng.randint(2, 8))
    )
    log = "\n".join(
        f"[INFO] 2024-0{rng.randint(1, 9)}-1{rng.randint(0, 9)} 10:0{n}:00 step {n} loss "
        f"{rng.random() * 5:.3f}"
        for n in range(rng.randint(0, 6))
    )
    when = rng.choice(WHEN)
    if host == "gitee":
        title = f"{rng.choice(ZH)}：{ident} {rng.choice(VERBS)}"
        version = f"{serial % 7}.{serial % 13}"
        what = f"{rng.choice(ZH)}，{ident} 在 {when} 时 {rng.choice(VERBS)}。版本 {version}"
        template = TEMPLATES["gitee/mindspore/mindformers"]
    else:
        title = f"{ident} {rng.choice(VERBS)} {when}"
        what = (
            f"The {word} {rng.choice(VERBS)} {when} while the {other} is busy. "
            f"It started with release {serial % 9}.{serial % 17}; {rng.choice(WORDS)} looks fine."
        )
        template = TEMPLATES["github/NVIDIA/Megatron-LM"]
    return title, template(what, f"python run.py --{word} {other}", f"{frames}\n{error}\n{log}")


def reworded(rng: random.Random, title: str, body: str) -> tuple[str, str]:
    """The same report filed again in other words: title words shuffled, a sentence added."""
    words = title.split()
    rng.shuffle(words)
    return " ".join(words), body.replace("It started", "Same for me, it started") + "\n+1"


def ensure_project(rows: int, seed: int):
    """The bench project with `rows` generated issues, made once and kept."""
    from annotation.models import Item, Project, Stage
    from ingest.models import Issue
    from ingest.services import insert_rows
    from taxonomy.models import Level

    taxonomy = load_taxonomy()
    project, _ = Project.objects.get_or_create(
        slug=PROJECT_SLUG,
        defaults={
            "name": "Bench near-duplicates (study scale)",
            "taxonomy": taxonomy,
            "label_depth": Level.THEME,
            "screening_enabled": False,
        },
    )
    if project.items.count() == rows:
        return project
    project.items.all().delete()
    Issue.objects.filter(owner__startswith="dup-").delete()
    rng = random.Random(seed)
    issues, serial = [], 0
    for (host, owner, repo, *_), count in zip(REPOSITORIES, scaled_counts(rows), strict=True):
        domain = "github.com" if host == "github" else "gitee.com"
        for n in range(count):
            serial += 1
            if issues and rng.random() < 0.02:
                title, body = reworded(rng, *issues[rng.randrange(len(issues))][5:7])
            else:
                title, body = issue_text(rng, host, serial)
            url = f"https://{domain}/dup-{owner}/{repo}/issues/{n + 1}"
            issues.append((host, f"dup-{owner}", repo, str(n + 1), url, title, body))
    fields = ("host", "owner", "repo", "number", "url", "title", "body")
    insert_rows(Issue, fields, issues)
    ids = Issue.objects.filter(owner__startswith="dup-").values_list("pk", flat=True)
    insert_rows(
        Item, ("project_id", "issue_id", "stage"), [(project.pk, i, Stage.OPEN) for i in ids]
    )
    print(f"made the bench project: {project.items.count():,} issues")
    return project


# ---------------------------------------------------------------- build and lookups


def build_once() -> None:
    """In a process of its own (--build-once): one build as the worker runs it; prints its
    seconds, items and pairs."""
    from annotation.duplicates.index import duplicate_index_run
    from annotation.duplicates.similarity import DEFAULT_THRESHOLD
    from annotation.models import DuplicateIndex, Project

    project = Project.objects.get(slug=PROJECT_SLUG)
    # the job's row as duplicate_index_queue makes it, without sending the task: this process is
    # the worker (with no broker configured the send would run the build inside the queueing)
    job = DuplicateIndex.objects.create(project=project, threshold=DEFAULT_THRESHOLD)
    started = time.perf_counter()
    job = duplicate_index_run(job_id=job.pk)
    seconds = time.perf_counter() - started
    print(f"BUILD {seconds:.3f} {job.items_indexed} {job.pairs_found} {job.status}")


def build_in_child() -> tuple[float, float, float, str]:
    """One build in a child process: (seconds, its CPU seconds, its peak RSS in MiB, what it
    printed). CPU seconds tell the work apart from the wait on a shared machine."""
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    before, cpu_before = usage.ru_maxrss, usage.ru_utime + usage.ru_stime
    done = subprocess.run(
        [sys.executable, "-m", "tests.bench.duplicates", "--build-once"],
        capture_output=True,
        text=True,
        check=True,
    )
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = usage.ru_utime + usage.ru_stime - cpu_before  # includes starting Django
    line = next(x for x in done.stdout.splitlines() if x.startswith("BUILD"))
    # ru_maxrss of children is the largest child so far: each build's child is the same size
    return float(line.split()[1]), cpu, max(usage.ru_maxrss, before) / 1024, line


def lookup_times(project, n: int, seed: int) -> list[float]:
    from django.contrib.auth import get_user_model

    from annotation.access import access_project
    from annotation.duplicates.api import ItemDuplicateOut
    from annotation.duplicates.selectors import duplicates_of
    from annotation.models import Item, Membership, Role

    user, _ = get_user_model().objects.get_or_create(username="bench-duplicates-lead")
    Membership.objects.get_or_create(project=project, user=user, defaults={"role": Role.LEAD})
    ids = list(project.items.values_list("pk", flat=True))
    rng = random.Random(seed)
    times = []
    for item_id in rng.sample(ids, min(n, len(ids))):
        item = Item.objects.select_related("issue").get(pk=item_id)
        # as the resolve page and the API hold it: the project with the viewer's role (loaded by
        # the page's access check whatever it shows)
        item.project = access_project(user, project.slug)
        started = time.perf_counter()
        ItemDuplicateOut(duplicates_of(item, user), many=True).data  # noqa: B018 - serialised
        times.append(time.perf_counter() - started)
    return times


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tests.bench.duplicates")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--rows", type=int, default=STUDY_ROWS)
    parser.add_argument("--seed", type=int, default=SEED)
    parser.add_argument("--build-once", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    os.environ.setdefault("DATABASE_URL", DEFAULT_DATABASE_URL)
    configure_environment()
    if args.build_once:
        import django

        django.setup()
        build_once()
        return 0
    ensure_database(os.environ["DATABASE_URL"], force=False)
    setup_django()
    quality_ok = print_quality()
    project = ensure_project(args.rows, args.seed)
    builds = [build_in_child() for _ in range(args.repeats)]
    for _, _, _, line in builds:
        print(line)
    build_s = statistics.median(b[0] for b in builds)
    cpu_s = statistics.median(b[1] for b in builds)
    rss = max(b[2] for b in builds)
    times = sorted(lookup_times(project, LOOKUPS, args.seed))
    p50 = statistics.median(times) * 1000
    p95 = times[int(0.95 * (len(times) - 1))] * 1000
    rows = [
        ("index build (median s)", build_s, BUILD_TARGET_S),
        ("  its CPU time (median s)", cpu_s, None),
        ("worker peak RSS (MiB)", rss, MEMORY_TARGET_MIB),
        ("one item's duplicates p50 (ms)", p50, None),
        ("one item's duplicates p95 (ms)", p95, LOOKUP_TARGET_MS),
    ]
    load = ", ".join(f"{x:.1f}" for x in os.getloadavg())
    print(f"\nstudy scale: {project.items.count():,} issues, {args.repeats} builds")
    print(f"machine: {os.cpu_count()} cores, load average {load} (shared: timings grow with it)")
    print(f"{'measure':<34} {'value':>9} {'target':>9}  result")
    ok = quality_ok
    for name, value, target in rows:
        verdict = "" if target is None else ("PASS" if value <= target else "FAIL")
        ok = ok and verdict != "FAIL"
        print(
            f"{name:<34} {value:>9.1f} {'' if target is None else f'<= {target:g}':>9}  {verdict}"
        )
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
