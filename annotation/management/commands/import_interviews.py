from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from annotation.gate import OPERATOR
from annotation.interviews.services import InterviewFile, InterviewReport, interviews_import
from annotation.models import Project
from concord.errors import ConcordError


class Command(BaseCommand):
    help = (
        "Import the study's interviews into a project: the codebook (Participant,Type,"
        "Experience Level,Framework Context,Prompt Category,Thematic Quote,Linked Taxonomy "
        "Node(s),Research Insight), optionally the interviewees' background (.xlsx) and the "
        "interview guideline (.md). All-or-nothing; importing again changes nothing. Codes the "
        "taxonomy lacks are kept as unresolved links and listed with file, line and value."
    )

    def add_arguments(self, parser):
        parser.add_argument("--project", required=True, help="project slug")
        parser.add_argument("--background", type=Path, help="the interviewees' background .xlsx")
        parser.add_argument("--guideline", type=Path, help="the interview guideline (Markdown)")
        parser.add_argument("codebook", type=Path, help="the codebook CSV")

    def handle(self, *args, project: str, codebook: Path, **options):
        target = Project.objects.filter(slug=project).first()
        if target is None:
            raise CommandError(f"no project with slug {project!r}")
        try:
            report = interviews_import(
                project=target,
                actor=OPERATOR,
                codebook=InterviewFile(codebook.name, codebook.read_bytes()),
                background=_read(options["background"]),
                guideline=_read(options["guideline"]),
            )
        except (ConcordError, OSError) as exc:
            raise CommandError(str(exc)) from exc
        self.stdout.write(summary(report))
        for link in report.unresolved:
            self.stdout.write(
                f"{link['path']}, line {link['line']}, column {link['column']}: {link['value']} "
                "is no category of the project's taxonomy; kept unresolved for a lead to map"
            )


def _read(path: Path | None) -> InterviewFile | None:
    return None if path is None else InterviewFile(path.name, path.read_bytes())


def summary(report: InterviewReport) -> str:
    return (
        f"{report.participants} participants ({report.users} users, {report.developers} "
        f"developers; {report.participants_created} new), {report.quotes} quotes "
        f"({report.quotes_created} new), {report.links} links ({report.links_resolved} resolved, "
        f"{len(report.unresolved)} unresolved), {report.background_rows} background rows"
        + (f", guideline {report.guideline}" if report.guideline else "")
    )
