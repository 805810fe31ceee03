from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from ingest.candidates import keyword_sets_save
from ingest.keywords import parse_filter_keywords


class Command(BaseCommand):
    help = (
        "Load keyword sets from the study's filter_keywords file "
        "(one set per `<name>_keywords` list)."
    )

    def add_arguments(self, parser):
        parser.add_argument("file", type=Path)

    def handle(self, *args, file: Path, **options):
        try:
            sets = parse_filter_keywords(file.read_text(encoding="utf-8"))
        except (OSError, SyntaxError, ValueError) as exc:
            raise CommandError(f"{file}: not a keyword file ({exc})") from exc
        if not sets:
            raise CommandError(f"{file}: no `<name>_keywords = [...]` lists found")
        for name, count in keyword_sets_save(sets).items():
            self.stdout.write(f"keyword set {name!r}: {count} keywords")
