import json

from django.core.management.base import BaseCommand, CommandError

from annotation.interviews.triangulation import (
    project_triangulation,
    triangulation_csv,
    triangulation_json,
)
from annotation.models import Project


class Command(BaseCommand):
    help = (
        "Triangulate a project's labeled issues with its interviews, per theme: share of final "
        "labels, users and developers who raised it, their ranks, Spearman's rank correlations "
        "with 95% intervals, and the themes whose ranks part."
    )

    def add_arguments(self, parser):
        parser.add_argument("--project", required=True, help="project slug")
        parser.add_argument("--format", choices=["json", "csv"], default="json")

    def handle(self, *args, project: str, format: str, **options):
        target = Project.objects.select_related("taxonomy").filter(slug=project).first()
        if target is None:
            raise CommandError(f"no project with slug {project!r}")
        report = project_triangulation(target)
        if format == "csv":
            self.stdout.write(triangulation_csv(report), ending="")
        else:
            self.stdout.write(json.dumps(triangulation_json(report), indent=2, ensure_ascii=False))
