from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from annotation.archive.writing import archive_write
from annotation.gate import OPERATOR, Write, gate
from annotation.models import Project
from concord.errors import ConcordError


class Command(BaseCommand):
    help = (
        "Write everything a project is (its taxonomy, items with their issues' text, labels, "
        "decisions, discussion, audit trail, members without passwords, interviews) to one "
        "archive file (a zip of JSON Lines with a manifest and checksums); restore_project "
        "reads it into another Concord."
    )

    def add_arguments(self, parser):
        parser.add_argument("--project", required=True, help="project slug")
        parser.add_argument("-o", "--output", required=True, type=Path, help="the archive (.zip)")

    def handle(self, *args, project: str, output: Path, **options):
        target = Project.objects.filter(slug=project).first()
        if target is None:
            raise CommandError(f"no project with slug {project!r}")
        try:
            gate(OPERATOR, target, Write.EXPORT)  # reads the project, writes none of it
            rows = archive_write(target, output)
        except (ConcordError, OSError) as exc:
            raise CommandError(str(exc)) from exc
        self.stdout.write(f"{output}: the archive of {target.slug}, {rows} rows")
