from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from concord.errors import RowError, utf8_text
from ingest.clients import ForgeError
from ingest.details import issues_fetch_details
from ingest.importers import url_list_import


class Command(BaseCommand):
    help = (
        "Import issue-URL lists (one GitHub or Gitee issue URL per line). Good lines go in, bad "
        "lines are reported with their line numbers. --fetch-details fetches titles, bodies and "
        "comments in the foreground (otherwise a Celery worker does it, when there is one)."
    )

    def add_arguments(self, parser):
        parser.add_argument("files", nargs="+", type=Path)
        parser.add_argument("--fetch-details", action="store_true")

    def handle(self, *args, files: list[Path], fetch_details: bool, **options):
        bad = 0
        for path in files:
            try:
                text = utf8_text(path.read_bytes(), str(path))
            except RowError as exc:
                raise CommandError(str(exc)) from exc
            except OSError as exc:
                raise CommandError(f"{path}: cannot read ({exc})") from exc
            report = url_list_import(text=text, name=str(path), fetch_details=not fetch_details)
            for error in report.errors:
                self.stderr.write(str(error))
            bad += len(report.errors)
            self.stdout.write(
                f"{path}: {report.lines} URLs, {report.created} new issues, {report.already_known} "
                f"known, {report.duplicates} repeated, {len(report.errors)} bad"
            )
            if fetch_details:
                try:
                    done = issues_fetch_details(issue_ids=report.issue_ids)
                except ForgeError as exc:  # a rate limit, a failing host, a refused token
                    raise CommandError(
                        f"{path}: the URLs are in; fetching their details stopped: {exc}. Run the "
                        "command again later: it fetches only what is still missing."
                    ) from exc
                self.stdout.write(f"{path}: details fetched for {done} issues")
        if bad:
            raise CommandError(f"{bad} line(s) were not imported (see above); the rest went in")
