from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from concord.errors import ConcordError
from taxonomy.loaders import examples_load, taxonomy_load
from taxonomy.models import Taxonomy


class Command(BaseCommand):
    help = (
        "Load a taxonomy CSV (code,level,parent,name,description[,name_zh,definition_zh]), "
        "optionally a translations CSV (code,name_zh,definition_zh) giving the Chinese names and "
        "definitions, and detail files (rootcause,subcategory,symptoms) whose items become "
        "examples on their sub-themes. Safe to run again."
    )

    def add_arguments(self, parser):
        parser.add_argument("file", type=Path)
        parser.add_argument("--details", type=Path, nargs="*", default=[], help="study detail CSVs")
        parser.add_argument(
            "--translations", type=Path, help="Chinese names and definitions, by code"
        )
        parser.add_argument("--name", default="LLM challenges")
        parser.add_argument("--taxonomy-version", dest="tax_version", default="1")

    def handle(self, *args, file: Path, details: list[Path], name: str, tax_version: str, **kw):
        try:
            report = taxonomy_load(
                path=file, name=name, version=tax_version, translations=kw["translations"]
            )
            self.stdout.write(
                f"{file}: {report.created} created, {report.updated} updated, "
                f"{report.unchanged} unchanged"
            )
            taxonomy = Taxonomy.objects.get(name=name, version=tax_version)
            for path in details:
                ex = examples_load(path=path, taxonomy=taxonomy)
                self.stdout.write(
                    f"{path}: {ex.created} examples added, {ex.unchanged} already there"
                )
        except ConcordError as exc:
            raise CommandError(str(exc)) from exc
