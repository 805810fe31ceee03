from pathlib import Path

from django.core.management.base import BaseCommand, CommandError
from django.db import transaction

from annotation.gate import OPERATOR
from annotation.models import Project
from annotation.package.imports import PackageFailed, package_import, package_project
from annotation.package.reading import package_read
from concord.errors import ConcordError
from taxonomy.models import Taxonomy


class Command(BaseCommand):
    help = (
        "Import a replication package (a folder or a .zip in the study's layout: <repo>.csv "
        "label files, <repo>_<year>.txt yearly lists, taxonomy details, filter_keywords) into a "
        "new or empty project, all or nothing; every problem is named by file and line."
    )

    def add_arguments(self, parser):
        parser.add_argument("path", type=Path, help="the package: a folder or a .zip")
        parser.add_argument("--project", required=True, help="slug; a new project if none has it")
        parser.add_argument("--name", help="a new project's name (default: the slug)")
        parser.add_argument(
            "--taxonomy-id", type=int, help="a new project's taxonomy (default: the newest)"
        )

    def handle(self, *args, path: Path, project: str, **options):
        try:
            contents = package_read(path)
            with transaction.atomic():  # a project made here goes if the import fails
                target = Project.objects.filter(slug=project).first() or self._new(project, options)
                report = package_import(project=target, actor=OPERATOR, contents=contents)
        except PackageFailed as exc:
            for error in exc.errors:
                self.stderr.write(str(error))
            raise CommandError(exc.message.split("\n", 1)[0]) from exc
        except (ConcordError, OSError) as exc:
            raise CommandError(str(exc)) from exc
        for entry in report.files:
            counts = ", ".join(
                f"{key.replace('_', ' ')} {entry[key]}"
                for key in ("rows", "items_created", "annotations_created", "bytes")
                if key in entry
            )
            self.stdout.write(f"{entry['path']}: {entry['kind']}, {counts}")
            for repeat in entry.get("repeats", []):
                first = repeat.get("first_line") or repeat.get("first")
                self.stdout.write(f"{entry['path']}: line {repeat['line']} repeats {first} (kept)")
        for left in report.left_out:
            self.stdout.write(f"{left['path']}: left out, {left['why']}")
        for note in report.notes:
            self.stdout.write(note)
        self.stdout.write(f"Imported into {target.slug}.")

    def _new(self, slug: str, options) -> Project:
        taxonomy_id = options.get("taxonomy_id")
        taxonomies = Taxonomy.objects.order_by("-pk")
        taxonomy = taxonomies.filter(pk=taxonomy_id).first() if taxonomy_id else taxonomies.first()
        if taxonomy is None:
            raise CommandError("no such taxonomy: load one first (manage.py load_taxonomy)")
        return package_project(slug=slug, name=options.get("name") or slug, taxonomy=taxonomy)
