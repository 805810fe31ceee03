from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from annotation.models import Project
from annotation.projects.importers import study_labels_import
from concord.errors import ConcordError


class Command(BaseCommand):
    help = (
        "Import study-format label files (Issue_URL,Label1..LabelN,Final_Label) into a project. "
        "Each file is all-or-nothing; importing the same file again changes nothing. A row "
        "repeating an earlier row's Issue_URL is skipped and reported (the first row is kept), "
        "unless --refuse-repeats refuses the file instead."
    )

    def add_arguments(self, parser):
        parser.add_argument("--project", required=True, help="project slug")
        parser.add_argument(
            "--refuse-repeats",
            action="store_true",
            help="refuse a file in which an Issue_URL repeats, instead of skipping the repeats",
        )
        parser.add_argument("files", nargs="+", type=Path)

    def handle(
        self, *args, project: str, files: list[Path], refuse_repeats: bool = False, **options
    ):
        target = Project.objects.filter(slug=project).first()
        if target is None:
            raise CommandError(f"no project with slug {project!r}")
        failed = 0
        for path in files:
            try:
                report = study_labels_import(
                    project=target, path=path, refuse_repeats=refuse_repeats
                )
            except (ConcordError, OSError) as exc:
                failed += 1
                self.stderr.write(f"{path}: {exc}")
                continue
            self.stdout.write(
                f"{path}: {report.rows} rows, {report.items_created} new items, "
                f"{report.annotations_created} new labels, "
                f"{report.resolutions_created} new resolutions, "
                f"{len(report.repeats)} repeated rows skipped"
            )
            for repeat in report.repeats:
                self.stdout.write(f"{path}: {repeat}")
        if failed:
            raise CommandError(f"{failed} of {len(files)} file(s) not imported (see above)")
