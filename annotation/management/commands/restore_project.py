from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from annotation.archive.restoring import archive_restore
from concord.errors import ConcordError


class Command(BaseCommand):
    help = (
        "Restore a project archive (written by archive_project) as a new project of this "
        "Concord, all or nothing: a damaged or foreign file, or a clash with what this Concord "
        "holds (the project's slug, say), is refused with what and where, and nothing is written."
    )

    def add_arguments(self, parser):
        parser.add_argument("path", type=Path, help="the archive (.zip)")
        parser.add_argument("--slug", help="the restored project's slug (default: the archived)")

    def handle(self, *args, path: Path, slug: str | None, **options):
        try:
            report = archive_restore(path, slug=slug)
        except ConcordError as exc:
            raise CommandError(str(exc)) from exc
        for table, made in report.made.items():
            found = report.found.get(table, 0)
            if made or found:
                held = f", {found} already here" if found else ""
                self.stdout.write(f"{table}: {made} restored{held}")
        self.stdout.write(f"Restored {report.project.slug}.")
