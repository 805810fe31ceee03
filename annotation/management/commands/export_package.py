from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from annotation.gate import OPERATOR, Write, gate
from annotation.models import Project
from annotation.reporting.package import package_options, package_write
from concord.errors import ConcordError


class Command(BaseCommand):
    help = (
        "Export a project's replication package: the study's layout (Issue Report/<repo>.csv, "
        "<repo>_<year>.txt, the files a package brought), a README with the figures and "
        "SHA256SUMS; -o names a .zip or a new folder."
    )

    def add_arguments(self, parser):
        parser.add_argument("--project", required=True, help="project slug")
        parser.add_argument("-o", "--output", required=True, type=Path, help="a .zip or a folder")

    def handle(self, *args, project: str, output: Path, **options):
        target = Project.objects.select_related("taxonomy").filter(slug=project).first()
        if target is None:
            raise CommandError(f"no project with slug {project!r}")
        try:
            gate(OPERATOR, target, Write.EXPORT)
            rows = package_write(target, package_options(target), output)
        except (ConcordError, OSError) as exc:
            raise CommandError(str(exc)) from exc
        self.stdout.write(f"{output}: the replication package of {target.slug}, {rows} rows")
