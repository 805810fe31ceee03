"""Replication package benchmark at study scale on PostgreSQL: `python -m tests.bench.package`
(`make bench`).

The package is the four shipped repositories replicated to the study's 38,742 issues x 7 labels:
copy n of a repository is the repository `<repo>-n` (its label file and yearly lists with the
URLs renamed), the last copy cut short to end at 38,742 rows, plus the carried files. Each run,
on its own database (default `concord_bench_package`), starts from no project and no issues:

* import - `manage.py import_package` equivalent (read the folder, check, write, record the
           layout), into a new project. Target <= 60 s.
* export - `manage.py export_package -o package.zip` equivalent. Target <= 10 s. Every label
           file and yearly list of the export is checked byte for byte against the package.
* archive - `manage.py archive_project` equivalent: the whole project into one archive file.
           Target <= 60 s.
* restore - `manage.py restore_project` equivalent, after the project and its issues are
           deleted (every item, issue and label is made again). Target <= 60 s. The restored
           project's study export must equal the original's.

Options: --repeats N, --rows N, --force (a database not named *bench*).
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import tempfile
import time
import zipfile
from pathlib import Path

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

DEFAULT_DATABASE_URL = "postgres://postgres@127.0.0.1:5432/concord_bench_package"
TARGETS = {"import": 60.0, "export": 10.0, "archive": 60.0, "restore": 60.0}
SLUG = "bench-package"
CARRIED = ("filter_keywords", "taxonomy.csv", "study-details")


def build_package(study: Path, folder: Path, rows: int) -> int:
    """Write the replicated package into `folder`; returns its label rows."""
    for name in CARRIED:
        source = study / name
        if source.is_dir():
            shutil.copytree(source, folder / name)
        else:
            shutil.copy(source, folder / name)
    files = sorted((study / "labels").glob("*.csv"))
    written, copy = 0, 0
    while written < rows:
        copy += 1
        for labels in files:
            if written >= rows:
                break
            written += _copy_repository(study, folder, labels, copy, rows - written)
    return written


def _copy_repository(study: Path, folder: Path, labels: Path, copy: int, room: int) -> int:
    repo = labels.stem
    renamed = f"{repo}-{copy}"

    def rename(text: str) -> str:
        return text.replace(f"/{repo}/issues/", f"/{renamed}/issues/")

    header, *lines = labels.read_text(encoding="utf-8").splitlines(keepends=True)
    kept = lines[:room]
    (folder / "labels").mkdir(exist_ok=True)
    (folder / "labels" / f"{renamed}.csv").write_text(
        header + rename("".join(kept)), encoding="utf-8", newline=""
    )
    urls = {line.split(",", 1)[0] for line in kept}
    (folder / "issue-lists").mkdir(exist_ok=True)
    for year_list in sorted((study / "issue-lists").glob(f"{repo}_*.txt")):
        listed = year_list.read_text(encoding="utf-8").splitlines(keepends=True)
        text = "".join(line for line in listed if line.strip() in urls)
        year = year_list.stem.rsplit("_", 1)[1]
        (folder / "issue-lists" / f"{renamed}_{year}.txt").write_text(
            rename(text), encoding="utf-8", newline=""
        )
    return len(kept)


def reset(slug: str = SLUG) -> None:
    """No bench project (`slug`) and no issues, as before a first import."""
    from django.contrib.auth import get_user_model
    from django.db import connection

    from annotation.models import Annotation, Item, Project, Resolution
    from ingest.models import Issue, KeywordSet

    tables = [m._meta.db_table for m in (Annotation, Resolution, Item, Issue)]
    with connection.cursor() as cursor:
        cursor.execute(f"TRUNCATE {', '.join(tables)} RESTART IDENTITY CASCADE")
    old = Project.objects.filter(slug=slug).first()
    if old is not None:
        get_user_model().objects.filter(username__startswith=f"label:{old.pk}:").delete()
        old.delete()
    KeywordSet.objects.all().delete()
    with connection.cursor() as cursor:
        cursor.execute("ANALYZE")


def import_once(folder: Path, taxonomy) -> None:
    from django.db import transaction

    from annotation.gate import OPERATOR
    from annotation.package.imports import package_import, package_project
    from annotation.package.reading import package_read

    contents = package_read(folder)
    with transaction.atomic():
        project = package_project(slug=SLUG, name="Bench (package)", taxonomy=taxonomy)
        package_import(project=project, actor=OPERATOR, contents=contents)


def export_once(target: Path, slug: str = SLUG) -> int:
    from annotation.models import Project
    from annotation.reporting.package import package_options, package_write

    project = Project.objects.get(slug=slug)
    return package_write(project, package_options(project), target)


def archive_once(target: Path, slug: str = SLUG) -> int:
    from annotation.archive.writing import archive_write
    from annotation.models import Project

    return archive_write(Project.objects.get(slug=slug), target)


def study_export() -> str:
    from annotation.models import Project
    from annotation.reporting.exports import export_lines, export_options

    project = Project.objects.get(slug=SLUG)
    return "".join(export_lines(project, export_options(project, format="study")))


def restore_once(archive: Path) -> None:
    from annotation.archive.restoring import archive_restore

    archive_restore(archive)


def same_bytes(folder: Path, archive: Path) -> list[str]:
    """The package's label files and yearly lists that the export does not give back as they
    were."""
    with zipfile.ZipFile(archive) as out:
        names = set(out.namelist())
        wrong = []
        for path in sorted([*folder.glob("labels/*.csv"), *folder.glob("issue-lists/*.txt")]):
            name = path.relative_to(folder).as_posix()
            if name not in names or out.read(name) != path.read_bytes():
                wrong.append(name)
    return wrong


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--rows", type=int, default=STUDY_ROWS)
    parser.add_argument("--force", action="store_true")
    args = parser.parse_args(argv)
    start = time.perf_counter()
    os.environ.setdefault("DATABASE_URL", DEFAULT_DATABASE_URL)
    configure_environment()
    db_name = ensure_database(os.environ["DATABASE_URL"], args.force)
    setup_django()
    from django.conf import settings

    taxonomy = load_taxonomy()
    print(f"database {db_name}; Python {sys.version.split()[0]}; {os.cpu_count()} CPU(s)")
    figures = {name: Figure(name, [], target) for name, target in TARGETS.items()}
    problems: list[str] = []
    with tempfile.TemporaryDirectory(prefix="concord-bench-package-") as scratch:
        folder = Path(scratch) / "package"
        folder.mkdir()
        rows = build_package(Path(settings.STUDY_DATA_DIR), folder, args.rows)
        print(f"package: {rows} label rows in {len(list(folder.glob('labels/*.csv')))} files")
        for run in range(args.repeats):
            reset()
            seconds, _ = timed(lambda: import_once(folder, taxonomy))
            figures["import"].runs.append(seconds)
            target = Path(scratch) / f"export-{run}.zip"
            seconds, written = timed(lambda target=target: export_once(target))
            figures["export"].runs.append(seconds)
            print(
                f"  run {run + 1}: import {figures['import'].runs[-1]:.1f} s, "
                f"export {seconds:.1f} s ({written} rows)"
            )
            wrong = same_bytes(folder, target)
            if wrong:
                problems.append(f"run {run + 1}: not byte for byte: {', '.join(wrong[:5])}")
            archive = Path(scratch) / f"archive-{run}.zip"
            seconds, written = timed(lambda archive=archive: archive_once(archive))
            figures["archive"].runs.append(seconds)
            before = study_export()
            reset()
            restored, _ = timed(lambda archive=archive: restore_once(archive))
            figures["restore"].runs.append(restored)
            print(
                f"  run {run + 1}: archive {seconds:.1f} s ({written} rows, "
                f"{archive.stat().st_size / 1e6:.0f} MB), restore {restored:.1f} s"
            )
            if study_export() != before:
                problems.append(f"run {run + 1}: the restored project exports otherwise")
    print_table(list(figures.values()))
    failed = [f.name for f in figures.values() if f.verdict == "FAIL"]
    for problem in problems:
        print(f"PROBLEM: {problem}")
    verdict = "all PASS" if not failed and not problems else "FAIL: " + ", ".join(failed)
    print("targets: " + verdict)
    print("(the machine is shared: figures vary with what else runs)")
    print(f"bench took {time.perf_counter() - start:.0f} s")
    return 1 if failed or problems else 0


if __name__ == "__main__":
    sys.exit(main())
