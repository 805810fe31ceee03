from functools import partial
from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from annotation.models import JobStatus, Project
from annotation.projects.item_imports import item_import_run, item_import_start
from concord.errors import ConcordError
from ingest.issue_files import BLOCK


class Command(BaseCommand):
    help = (
        "Add the issues of JSON or JSONL files (url, title, body, author, dates, comments) to a "
        "project as items, in the foreground, as the API's item import does in the background. "
        "Each file is all-or-nothing; importing the same file again adds nothing."
    )

    def add_arguments(self, parser):
        parser.add_argument("--project", required=True, help="project slug")
        parser.add_argument("files", nargs="+", type=Path)

    def handle(self, *args, project: str, files: list[Path], **options):
        target = Project.objects.filter(slug=project).first()
        if target is None:
            raise CommandError(f"no project with slug {project!r}")
        failed = 0
        for path in files:
            try:
                with path.open("rb") as file:
                    queued = item_import_start(
                        project=target,
                        user=None,
                        name=str(path),
                        blocks=iter(partial(file.read, BLOCK), b""),
                        enqueue=False,
                    )
            except (ConcordError, OSError) as exc:
                failed += 1
                self.stderr.write(f"{path}: {exc}")
                continue
            job = item_import_run(job_id=queued.job.pk)
            if job is None or job.status != JobStatus.DONE:
                failed += 1
                for problem in job.problems if job else []:
                    where = f"line {problem['line']}" + (
                        f", {problem['column']}" if problem["column"] else ""
                    )
                    self.stderr.write(f"{path}, {where}: {problem['message']}")
                if job is not None and not job.problems:
                    self.stderr.write(f"{path}: {job.error}")
                continue
            self.stdout.write(
                f"{path}: {job.records_total} issues, {job.issues_created} new to Concord, "
                f"{job.items_added} new items"
            )
        if failed:
            raise CommandError(f"{failed} of {len(files)} file(s) not imported (see above)")
