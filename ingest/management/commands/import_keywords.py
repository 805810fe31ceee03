from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from concord.errors import ConcordError, utf8_text
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
            sets = parse_filter_keywords(utf8_text(file.read_bytes(), str(file)), str(file))
        except OSError as exc:
            raise CommandError(f"{file}: cannot read it ({exc})") from exc
        except ConcordError as exc:
            raise CommandError(str(exc)) from exc
        for name, count in keyword_sets_save(sets).items():
            self.stdout.write(f"keyword set {name!r}: {count} keywords")
