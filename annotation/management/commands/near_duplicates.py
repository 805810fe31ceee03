"""List a project's near-duplicate pairs with their similarity (annotation.duplicates), after
building the index if asked (--build) or if it was never built."""

from __future__ import annotations

import csv
import json
import sys

from django.core.management.base import BaseCommand, CommandError

from annotation.duplicates.index import (
    duplicate_index_current,
    duplicate_index_queue,
    duplicate_index_run,
)
from annotation.duplicates.selectors import final_node, pairs_standing
from annotation.gate import OPERATOR
from annotation.models import JobStatus, Project
from concord.errors import ConcordError

COLUMNS = ("similarity", "item_a", "issue_a", "final_a", "item_b", "issue_b", "final_b")


class Command(BaseCommand):
    help = "List a project's near-duplicate issue pairs with their similarity."

    def add_arguments(self, parser):
        parser.add_argument("--project", required=True, help="The project's slug.")
        parser.add_argument("--threshold", type=float, help="Least similarity listed (0-1).")
        parser.add_argument("--format", choices=["table", "json", "csv"], default="table")
        parser.add_argument("--build", action="store_true", help="Rebuild the index first.")

    def handle(self, *args, **options):
        project = Project.objects.filter(slug=options["project"]).first()
        if project is None:
            raise CommandError(f"No project {options['project']!r}.")
        if options["build"] or duplicate_index_current(project) is None:
            self._build(project)
        pairs = pairs_standing(project)
        if options["threshold"] is not None:
            pairs = pairs.filter(similarity__gte=options["threshold"])
        rows = [_row(p) for p in pairs.iterator(chunk_size=2000)]
        getattr(self, f"_write_{options['format']}")(rows)

    def _build(self, project: Project) -> None:
        try:
            job = duplicate_index_queue(project=project, actor=OPERATOR)
        except ConcordError as exc:
            raise CommandError(exc.message) from exc
        job = duplicate_index_run(job_id=job.pk) or job
        if job.status == JobStatus.FAILED:
            raise CommandError(job.error)
        self.stderr.write(f"indexed {job.items_indexed} items: {job.pairs_found} pairs")

    def _write_table(self, rows: list[dict]) -> None:
        for r in rows:
            self.stdout.write(
                f"{r['similarity']:.2f}  {r['issue_a']} [{r['final_a'] or '-'}]"
                f"  ~  {r['issue_b']} [{r['final_b'] or '-'}]"
            )

    def _write_json(self, rows: list[dict]) -> None:
        self.stdout.write(json.dumps(rows, ensure_ascii=False, indent=1))

    def _write_csv(self, rows: list[dict]) -> None:
        writer = csv.DictWriter(sys.stdout, fieldnames=COLUMNS)
        writer.writeheader()
        writer.writerows(rows)


def _row(pair) -> dict:
    def final(item) -> str:
        node = final_node(item)
        return node.code if node is not None else ""

    return {
        "similarity": pair.similarity,
        "item_a": pair.item_a_id,
        "issue_a": pair.item_a.issue.url,
        "final_a": final(pair.item_a),
        "item_b": pair.item_b_id,
        "issue_b": pair.item_b.issue.url,
        "final_b": final(pair.item_b),
    }
