import json
from dataclasses import asdict

from django.core.management.base import BaseCommand, CommandError

from annotation.models import Project
from annotation.reporting.agreement import GROUPINGS, project_agreement
from taxonomy.models import Level


class Command(BaseCommand):
    help = (
        "Inter-rater agreement of a project: Fleiss' kappa (on the items with the full number of "
        "labels; the rest are counted) and Krippendorff's alpha, per group."
    )

    def add_arguments(self, parser):
        parser.add_argument("--project", required=True, help="project slug")
        parser.add_argument("--level", choices=[c.value for c in Level], default=Level.THEME)
        parser.add_argument("--by", choices=GROUPINGS, default="type")
        parser.add_argument("--format", choices=["table", "json"], default="table")

    def handle(self, *args, project: str, level: str, by: str, format: str, **options):
        target = Project.objects.filter(slug=project).first()
        if target is None:
            raise CommandError(f"no project with slug {project!r}")
        report = project_agreement(target, level=level, by=by)
        if format == "json":
            self.stdout.write(json.dumps(asdict(report), indent=2, default=float))
            return
        self.stdout.write(f"{target.slug}: agreement at {level} level, by {by}")
        self.stdout.write(
            f"{'group':<28}{'items':>7}{'raters':>7}{'kappa':>8}  {'95% CI':<17}{'alpha':>7}  band"
        )
        for g in report.groups:
            f, a = g.fleiss, g.alpha
            kappa = (
                f"{f.kappa:8.3f}  [{f.ci_low:.3f}, {f.ci_high:.3f}]" if f else f"{'-':>8}  {'':<16}"
            )
            alpha = f"{a.alpha:7.3f}" if a else f"{'-':>7}"
            band = f.band if f else (a.band if a else "")
            raters = f.n_raters if f else "-"
            self.stdout.write(f"{g.group:<28}{g.n_items:>7}{raters:>7}{kappa} {alpha}  {band}")
            if g.left_out:
                note = (
                    f"Fleiss on {g.fleiss_items} items with {g.ratings} labels; "
                    f"{g.left_out} left out: {g.left_out_why}"
                )
                if a:
                    note += f"; alpha {a.alpha:.3f} ({a.band}) on {a.n_items} items"
                self.stdout.write(f"    note: {note}")
            if g.problem:
                self.stdout.write(f"    note: {g.problem}")
