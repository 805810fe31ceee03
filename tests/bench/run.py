"""Study-scale benchmarks on PostgreSQL: `python -m tests.bench.run` (`make bench` calls it).

What it measures, on a dedicated database (default `concord_bench`, created if missing):

* import   - a brand-new study-format file (38,742 issues x 7 labels + Final_Label, 11
             repositories) into an empty project with no issues yet, via
             `annotation.projects.importers.study_labels_import`. Target <= 20 s.
* reimport - the same file again into the now full project (must create nothing).
* agreement - `annotation.reporting.agreement.project_agreement(project, level=L, by="type")` for
             L = type, theme, subtheme; the three together target <= 1 s, and each alone.

Every figure is the median of several runs (min and max shown too). The file is generated
deterministically (seeded) into var/bench/ by resampling the label patterns of the study's real
label files (labels/*.csv), so agreement structure and code frequencies are realistic.

Between import runs the work tables (issues, items, annotations, resolutions) are emptied, so the
bench refuses to run on a database whose name does not contain "bench" (override: --force).

Options: --rows N, --seed S, --repeats N, --import-repeats N, --profile (cProfile one extra
import and print the top functions), --keep-file (reuse an existing generated file).
"""

from __future__ import annotations

import argparse
import cProfile
import csv
import io
import os
import pstats
import random
import resource
import statistics
import string
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

DEFAULT_DATABASE_URL = "postgres://postgres@127.0.0.1:5432/concord_bench"
STUDY_ROWS = 38_742
SEED = 20250613
TAXONOMY_NAME, TAXONOMY_VERSION = "LLM challenges", "1"
PROJECT_SLUG = "bench"

IMPORT_TARGET_S = 20.0
AGREEMENT_TARGET_S = 1.0
LEVELS = ("type", "theme", "subtheme")

# The study's 11 repositories: (host, owner, repo, share of the 38,742 issues, real label file).
# The four with a shared label file keep their real sizes (README: Megatron-LM 1,114, mindnlp
# 1,826, mindformers 1,780, MindSpeed 80) and resample their own rows; the other seven share the
# rest, resampling the pooled rows. Shares of the seven are a guess (only the total is published);
# hpcaitech/ColossalAI stands in for the eleventh repository, which the shared data does not name.
REPOSITORIES = (
    ("github", "NVIDIA", "Megatron-LM", 1_114, "Megatron-LM.csv"),
    ("github", "mindspore-lab", "mindnlp", 1_826, "mindnlp.csv"),
    ("gitee", "mindspore", "mindformers", 1_780, "mindformers.csv"),
    ("gitee", "ascend", "MindSpeed", 80, "MindSpeed.csv"),
    ("github", "pytorch", "pytorch", 9_000, None),
    ("github", "vllm-project", "vllm", 7_000, None),
    ("github", "huggingface", "transformers", 6_000, None),
    ("github", "tensorflow", "tensorflow", 3_500, None),
    ("gitee", "mindspore", "mindspore", 3_942, None),
    ("github", "microsoft", "DeepSpeed", 2_500, None),
    ("github", "hpcaitech", "ColossalAI", 2_000, None),
)
HOST_DOMAIN = {"github": "github.com", "gitee": "gitee.com"}
GITEE_ALPHABET = string.ascii_uppercase + string.digits


# ---------------------------------------------------------------- environment


def configure_environment() -> None:
    """Settings before Django loads: the bench database, no DEBUG query log, a throwaway key."""
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "concord.settings")
    os.environ.setdefault("DATABASE_URL", DEFAULT_DATABASE_URL)
    os.environ["DEBUG"] = "0"  # DEBUG keeps every SQL statement in memory: skews time and RSS
    os.environ.setdefault("SECRET_KEY", "bench-only-not-secret-" + "x" * 40)
    os.environ.setdefault("LOG_LEVEL", "WARNING")


def ensure_database(url: str, force: bool) -> str:
    """CREATE DATABASE if missing (via the `postgres` maintenance db); return its name."""
    import environ
    import psycopg2
    from psycopg2 import sql

    config = environ.Env.db_url_config(url)
    if "postgresql" not in config["ENGINE"]:
        sys.exit(f"bench: needs PostgreSQL, DATABASE_URL is {url!r}")
    name = config["NAME"]
    if "bench" not in name and not force:
        sys.exit(
            f"bench: refusing to run on database {name!r}: the bench empties its issue and "
            "annotation tables. Use a database named *bench* or pass --force."
        )
    connection = psycopg2.connect(
        dbname="postgres",
        user=config.get("USER") or None,
        password=config.get("PASSWORD") or None,
        host=config.get("HOST") or None,
        port=config.get("PORT") or None,
    )
    try:
        connection.autocommit = True
        with connection.cursor() as cursor:
            cursor.execute("SELECT 1 FROM pg_database WHERE datname = %s", [name])
            if cursor.fetchone() is None:
                cursor.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name)))
                print(f"created database {name}")
    finally:
        connection.close()
    return name


def setup_django() -> None:
    import django
    from django.core.management import call_command

    django.setup()
    call_command("migrate", verbosity=0, interactive=False)


def load_taxonomy():
    from django.conf import settings

    from taxonomy.loaders import examples_load, taxonomy_load
    from taxonomy.models import Taxonomy

    study = Path(settings.STUDY_DATA_DIR)
    taxonomy_load(path=study / "taxonomy.csv", name=TAXONOMY_NAME, version=TAXONOMY_VERSION)
    taxonomy = Taxonomy.objects.get(name=TAXONOMY_NAME, version=TAXONOMY_VERSION)
    for detail in sorted((study / "study-details").glob("*.csv")):
        examples_load(path=detail, taxonomy=taxonomy)
    return taxonomy


# ---------------------------------------------------------------- the generated file


def read_label_patterns(labels_dir: Path) -> dict[str, list[list[str]]]:
    """file name -> its rows without the URL: [Label1..Label7, Final_Label]."""
    patterns: dict[str, list[list[str]]] = {}
    for path in sorted(labels_dir.glob("*.csv")):
        with path.open(newline="", encoding="utf-8-sig") as handle:
            reader = csv.reader(handle)
            header = next(reader)
            if header[0] != "Issue_URL" or header[-1] != "Final_Label":
                raise SystemExit(f"bench: unexpected header in {path}: {header}")
            patterns[path.name] = [row[1:] for row in reader if any(c.strip() for c in row)]
    return patterns


def issue_numbers(rng: random.Random, host: str, count: int) -> list[str]:
    """Distinct, realistic issue numbers, newest first (as the study files list them)."""
    if host == "github":
        numbers = rng.sample(range(1, count * 4 + 1000), count)
        return [str(n) for n in sorted(numbers, reverse=True)]
    ids: set[str] = set()
    while len(ids) < count:  # Gitee ids look like IBDZ87: 'I' + 5 upper-case letters/digits
        ids.add("I" + "".join(rng.choices(GITEE_ALPHABET, k=5)))
    return sorted(ids, reverse=True)


def scaled_counts(total: int) -> list[int]:
    """Repository sizes scaled to `total` rows (exact at the study's 38,742)."""
    sizes = [r[3] for r in REPOSITORIES]
    if total == sum(sizes):
        return sizes
    scaled = [max(1, round(s * total / sum(sizes))) for s in sizes]
    scaled[sizes.index(max(sizes))] += total - sum(scaled)
    return scaled


def generate_csv(
    path: Path, *, rows: int, seed: int, labels_dir: Path, repeat_share: float = 0.0
) -> dict[str, int]:
    """Write `rows` issues (`scaled_counts` per repository), each with a real row's labels, plus
    `repeat_share` x rows repeated rows (repeated_rows); returns the issues per repository."""
    rng = random.Random(seed)
    patterns = read_label_patterns(labels_dir)
    pooled = [p for name in sorted(patterns) for p in patterns[name]]
    width = len(pooled[0]) - 1
    per_repo: dict[str, int] = {}
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(["Issue_URL", *(f"Label{j}" for j in range(1, width + 1)), "Final_Label"])
    for (host, owner, repo, _, own_file), count in zip(
        REPOSITORIES, scaled_counts(rows), strict=True
    ):
        source = patterns.get(own_file, pooled) if own_file else pooled
        lines = [
            [f"https://{HOST_DOMAIN[host]}/{owner}/{repo}/issues/{number}", *rng.choice(source)]
            for number in issue_numbers(rng, host, count)
        ]
        writer.writerows(repeated_rows(rng, lines, source, round(count * repeat_share)))
        per_repo[f"{owner}/{repo} ({host})"] = count
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".tmp")
    tmp.write_text(out.getvalue(), encoding="utf-8")
    tmp.replace(path)
    return per_repo


def repeated_rows(
    rng: random.Random, lines: list[list[str]], source: list[list[str]], repeats: int
) -> list[list[str]]:
    """`lines` with `repeats` of them repeated later in the file (the importer keeps the first
    and reports the repeat): every other repeat with the same labels, the rest with another real
    row's labels. Without repeats, `lines` as they are (and `rng` untouched)."""
    if not repeats:
        return lines
    placed = list(lines)
    for n, index in enumerate(sorted(rng.sample(range(len(lines)), repeats), reverse=True)):
        row = [lines[index][0], *(lines[index][1:] if n % 2 else rng.choice(source))]
        placed.insert(rng.randint(index + 1, index + 1 + (len(lines) - index) // 2), row)
    return placed


# ---------------------------------------------------------------- state between runs


def reset_work(taxonomy):
    """Empty issues, items, annotations and resolutions; a fresh project with no members."""
    from django.contrib.auth import get_user_model
    from django.db import connection

    from annotation.models import Annotation, Item, Membership, Project, Resolution
    from ingest.models import Issue

    tables = [m._meta.db_table for m in (Annotation, Resolution, Item, Issue)]
    with connection.cursor() as cursor:
        # CASCADE: also empties whatever else hangs off issues (comments, keyword matches, ...)
        cursor.execute(f"TRUNCATE {', '.join(tables)} RESTART IDENTITY CASCADE")
    old = Project.objects.filter(slug=PROJECT_SLUG).first()
    if old is not None:  # its placeholder accounts (importers.placeholder_username) go with it
        get_user_model().objects.filter(username__startswith=f"label:{old.pk}:").delete()
    Membership.objects.filter(project__slug=PROJECT_SLUG).delete()
    Project.objects.filter(slug=PROJECT_SLUG).delete()
    with connection.cursor() as cursor:
        cursor.execute(f"ANALYZE {', '.join(tables)}")
    return Project.objects.create(name="Bench (study scale)", slug=PROJECT_SLUG, taxonomy=taxonomy)


def imported_study_project(
    taxonomy,
    *,
    rows: int,
    seed: int,
    reimport: bool,
    label_columns: int,
    after_import: Callable[[], None] = lambda: None,
):
    """The study-scale bench project, imported from the generated file unless an earlier run left
    it complete (benchmarks on their own databases keep it between runs); `after_import` adds
    what the file does not carry (dates, label times) once it was imported now."""
    from django.conf import settings

    from annotation.models import Project
    from annotation.projects.importers import study_labels_import

    path = Path(settings.VAR_DIR) / "bench" / f"study-labels-{rows}-seed{seed}.csv"
    if not path.exists():
        generate_csv(
            path, rows=rows, seed=seed, labels_dir=Path(settings.STUDY_DATA_DIR) / "labels"
        )
        print(f"generated {path}")
    expected = {
        "issues": rows,
        "items": rows,
        "annotations": rows * label_columns,
        "resolutions": rows,
    }
    project = Project.objects.filter(slug=PROJECT_SLUG).first()
    if project is not None and not reimport and work_counts(project) == expected:
        print(f"reusing the imported project ({rows} issues)")
        return project
    project = reset_work(taxonomy)
    seconds, report = timed(lambda: study_labels_import(project=project, path=path))
    print(f"imported {path.name} in {seconds:.1f} s: {report}")
    after_import()
    return project


def analyze() -> None:
    from django.db import connection

    with connection.cursor() as cursor:
        cursor.execute("ANALYZE")


def work_counts(project) -> dict[str, int]:
    from annotation.models import Annotation, Resolution
    from ingest.models import Issue

    return {
        "issues": Issue.objects.count(),
        "items": project.items.count(),
        "annotations": Annotation.objects.filter(item__project=project).count(),
        "resolutions": Resolution.objects.filter(item__project=project).count(),
    }


# ---------------------------------------------------------------- timing


@dataclass
class Figure:
    name: str
    runs: list[float]
    target: float | None = None
    at_least: bool = False  # the target is a floor (labels/s), not a ceiling (seconds, MB)

    @property
    def median(self) -> float:
        return statistics.median(self.runs)

    @property
    def verdict(self) -> str:
        if self.target is None:
            return ""
        met = self.median >= self.target if self.at_least else self.median <= self.target
        return "PASS" if met else "FAIL"


def timed(fn: Callable[[], object]) -> tuple[float, object]:
    start = time.perf_counter()
    result = fn()
    return time.perf_counter() - start, result


def peak_rss_mib() -> float:
    """This process's peak RSS. VmHWM, not getrusage's ru_maxrss: Linux carries ru_maxrss over
    exec, so a child started by a big parent would report the parent's size as its own."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024  # KiB
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def print_table(figures: list[Figure]) -> None:
    print()
    print(
        f"{'benchmark':<34} {'runs':>4} {'median s':>9} {'min s':>8} {'max s':>8} "
        f"{'target s':>9}  result"
    )
    print("-" * 84)
    for f in figures:
        target = f"<= {f.target:g}" if f.target is not None else ""
        print(
            f"{f.name:<34} {len(f.runs):>4} {f.median:>9.3f} {min(f.runs):>8.3f} "
            f"{max(f.runs):>8.3f} {target:>9}  {f.verdict}"
        )
    print("-" * 84)
    print(f"peak RSS of this process: {peak_rss_mib():.0f} MiB")


def agreement_runs(project, repeats: int) -> tuple[list[float], dict[str, list[float]], dict]:
    """Fleiss per final type at the three levels, `repeats` times after a warm-up: the seconds
    of the three together per run, each level's seconds, and the last run's reports by level."""
    from annotation.reporting.agreement import project_agreement

    project_agreement(project, level="theme", by="type")  # warm-up: imports, first-query costs
    per_level: dict[str, list[float]] = {level: [] for level in LEVELS}
    together = []
    reports = {}
    for _ in range(repeats):
        total = 0.0
        for level in LEVELS:
            seconds, reports[level] = timed(
                lambda level=level: project_agreement(project, level=level, by="type")
            )
            per_level[level].append(seconds)
            total += seconds
        together.append(total)
    return together, per_level, reports


# ---------------------------------------------------------------- main


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m tests.bench.run", description=__doc__.split("\n")[0]
    )
    parser.add_argument("--rows", type=int, default=STUDY_ROWS)
    parser.add_argument("--seed", type=int, default=SEED)
    parser.add_argument("--repeats", type=int, default=5, help="runs of re-import and agreement")
    parser.add_argument("--import-repeats", type=int, default=3)
    parser.add_argument("--profile", action="store_true", help="cProfile one more import")
    parser.add_argument("--keep-file", action="store_true", help="reuse var/bench file if present")
    parser.add_argument("--force", action="store_true", help="allow a database not named *bench*")
    args = parser.parse_args(argv)

    configure_environment()
    db_name = ensure_database(os.environ["DATABASE_URL"], args.force)
    setup_django()

    from django.conf import settings
    from django.db import connection

    from annotation.projects.importers import study_labels_import

    with connection.cursor() as cursor:
        cursor.execute("SELECT version()")
        pg_version = cursor.fetchone()[0].split(",")[0]
    print(
        f"database {db_name} on {pg_version}; "
        f"Python {sys.version.split()[0]}; {os.cpu_count()} CPU(s)"
    )

    taxonomy = load_taxonomy()
    study = Path(settings.STUDY_DATA_DIR)
    path = Path(settings.VAR_DIR) / "bench" / f"study-labels-{args.rows}-seed{args.seed}.csv"
    if not (args.keep_file and path.exists()):
        start = time.perf_counter()
        per_repo = generate_csv(path, rows=args.rows, seed=args.seed, labels_dir=study / "labels")
        print(
            f"generated {path} ({path.stat().st_size / 1e6:.1f} MB, {args.rows} issues, "
            f"{len(per_repo)} repositories) in {time.perf_counter() - start:.2f} s"
        )
    else:
        print(f"reusing {path}")
    rows = args.rows
    label_columns = sum(
        1 for h in path.open(encoding="utf-8").readline().split(",") if h.startswith("Label")
    )
    expected = {
        "issues": rows,
        "items": rows,
        "annotations": rows * label_columns,
        "resolutions": rows,
    }

    figures: list[Figure] = []
    problems: list[str] = []

    # a. import of a brand-new file into an empty project (no issues in the database either)
    runs = []
    for i in range(args.import_repeats):
        project = reset_work(taxonomy)
        seconds, report = timed(
            lambda project=project: study_labels_import(project=project, path=path)
        )
        runs.append(seconds)
        print(f"  import run {i + 1}: {seconds:.2f} s  {report}")
        if (report.items_created, report.annotations_created, report.resolutions_created) != (
            rows,
            expected["annotations"],
            rows,
        ):
            problems.append(f"import run {i + 1} created {report}, expected {expected}")
    figures.append(Figure("import (new file, empty project)", runs, IMPORT_TARGET_S))

    counts = work_counts(project)
    print(f"  stored: {counts}")
    if counts != expected:
        problems.append(f"stored {counts}, expected {expected}")
    analyze()  # let the planner see the imported rows (autovacuum would, a little later)

    # b. the same file again: an idempotent no-op
    runs = []
    for i in range(args.repeats):
        seconds, report = timed(lambda: study_labels_import(project=project, path=path))
        runs.append(seconds)
        print(f"  re-import run {i + 1}: {seconds:.2f} s  {report}")
        if (report.items_created, report.annotations_created, report.resolutions_created) != (
            0,
            0,
            0,
        ):
            problems.append(f"re-import run {i + 1} was not a no-op: {report}")
    figures.append(Figure("re-import (same file, no-op)", runs))
    if work_counts(project) != expected:
        problems.append(f"re-import changed the stored rows: {work_counts(project)}")

    # c. agreement at the three levels, grouped by the final label's type
    together, per_level, reports = agreement_runs(project, args.repeats)
    figures.append(Figure("agreement, 3 levels together", together, AGREEMENT_TARGET_S))
    figures.extend(Figure(f"  agreement level={level}", per_level[level]) for level in LEVELS)

    print()
    for level in LEVELS:
        for group in reports[level].groups:
            fleiss = f"kappa={group.fleiss.kappa:.3f}" if group.fleiss else "kappa=n/a"
            alpha = f"alpha={group.alpha.alpha:.3f}" if group.alpha else "alpha=n/a"
            note = f"  ({group.problem})" if group.problem else ""
            print(f"  {level:<8} {group.group:<16} n={group.n_items:<6} {fleiss} {alpha}{note}")

    if args.profile:
        from annotation.reporting.agreement import project_agreement

        project = reset_work(taxonomy)
        profiler = cProfile.Profile()
        profiler.runcall(study_labels_import, project=project, path=path)
        stats = pstats.Stats(profiler, stream=sys.stdout)
        print("\nprofile of one import (cumulative, top 30):")
        stats.sort_stats("cumulative").print_stats(30)
        print("profile of one agreement (cumulative, top 20):")
        analyze()
        profiler = cProfile.Profile()
        for level in LEVELS:
            profiler.runcall(project_agreement, project, level=level, by="type")
        pstats.Stats(profiler, stream=sys.stdout).sort_stats("cumulative").print_stats(20)

    print_table(figures)
    for problem in problems:
        print(f"PROBLEM: {problem}")
    failed = [f.name.strip() for f in figures if f.verdict == "FAIL"]
    print("targets: " + ("all PASS" if not failed else "FAIL: " + ", ".join(failed)))
    return 1 if failed or problems else 0


if __name__ == "__main__":
    sys.exit(main())
