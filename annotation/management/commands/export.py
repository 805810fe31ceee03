"""`manage.py export --project SLUG --format study|long|final|repositories -o FILE`.

The file is written under a temporary name beside FILE and renamed when complete: a failure
leaves FILE as it was (or absent). `-o -` writes to standard output instead.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from annotation.models import ExportFormat, Project, Stage
from annotation.reporting.exports import (
    csv_lines,
    export_lines,
    export_options,
    export_to_file,
    study_columns,
)
from concord.errors import ConcordError
from taxonomy.models import Level


class Command(BaseCommand):
    help = "Export a project's labels or statistics as CSV (see README, Exports)."

    def add_arguments(self, parser) -> None:
        parser.add_argument("--project", required=True, help="Project slug.")
        parser.add_argument("--format", required=True, choices=ExportFormat.values)
        parser.add_argument(
            "--level",
            choices=Level.values,
            help="Study format: roll labels up to this level (default: the project's depth).",
        )
        parser.add_argument("--repository", default="", help="Only this owner/repo.")
        parser.add_argument("--type", default="", help="Only items whose final type is this code.")
        parser.add_argument("--stage", default="", choices=["", *Stage.values])
        parser.add_argument(
            "--from", dest="created_from", help="Issues created on or after YYYY-MM-DD (UTC)."
        )
        parser.add_argument(
            "--until", dest="created_until", help="Issues created on or before YYYY-MM-DD (UTC)."
        )
        parser.add_argument(
            "--bom",
            action=argparse.BooleanOptionalAction,
            default=None,
            help="Start with a UTF-8 BOM, for Excel (default: yes, but not for the study format).",
        )
        parser.add_argument(
            "--sidecar",
            type=Path,
            help="Study format: also write LabelJ -> username to this CSV file.",
        )
        parser.add_argument("-o", "--output", required=True, help="Output file, or - for stdout.")

    def handle(self, *args, **opts) -> None:
        project = Project.objects.select_related("taxonomy").filter(slug=opts["project"]).first()
        if project is None:
            raise CommandError(f"No project with slug {opts['project']!r}.")
        try:
            options = export_options(
                project,
                format=opts["format"],
                level=opts["level"],
                repository=opts["repository"],
                type=opts["type"],
                stage=opts["stage"],
                created_from=opts["created_from"],
                created_until=opts["created_until"],
                bom=opts["bom"],
            )
        except ConcordError as exc:
            raise CommandError(exc.message) from exc
        if opts["output"] == "-":
            for line in export_lines(project, options):
                sys.stdout.write(line)
            return
        output = Path(opts["output"])
        try:
            rows = export_to_file(project, options, output)
            if opts["sidecar"] and options.format == ExportFormat.STUDY:
                self._write_sidecar(project, opts["sidecar"])
        except OSError as exc:
            raise CommandError(f"Could not write {exc.filename or output}: {exc.strerror}") from exc
        self.stderr.write(f"Wrote {rows} rows to {output}.")

    def _write_sidecar(self, project: Project, path: Path) -> None:
        sidecar = path.with_name(f".{path.name}.part")
        with sidecar.open("w", encoding="utf-8", newline="") as handle:
            rows = [["Column", "Username"], *(list(row) for row in study_columns(project))]
            handle.writelines(csv_lines(rows))
        sidecar.replace(path)
