import json
import secrets

from django.conf import settings
from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand
from django.db import transaction

from annotation.gate import OPERATOR
from annotation.interviews.coding import transcript_coder_assign, transcript_upload
from annotation.interviews.services import InterviewFile, interviews_import
from annotation.models import Membership, Project, Role
from annotation.projects.demo import demo_items_load
from annotation.projects.importers import study_labels_import
from taxonomy.interviews.models import Quote, Transcript
from taxonomy.loaders import examples_load, taxonomy_load
from taxonomy.models import Level, Taxonomy

DEMO_SLUG = "demo"
DEMO_LABELS = "Megatron-LM.csv"
# Issues written for the walkthrough: English on GitHub, Chinese on Gitee (the study's Gitee
# trackers, MindSpore's mindformers and Ascend's MindSpeed, are written in Chinese).
DEMO_ISSUE_FILES = ("issues.json", "issues-zh.json")
DEMO_INTERVIEWS = {
    "codebook": "CodeBook.csv",
    "background": "Interviewee Background.xlsx",
    "guideline": "Interview GuideLine.md",
}
DEMO_ACCOUNTS = [
    ("demo-admin", Role.ADMIN),
    ("demo-lead", Role.LEAD),
    ("demo-volunteer-1", Role.VOLUNTEER),
    ("demo-volunteer-2", Role.VOLUNTEER),
    ("demo-volunteer-3", Role.VOLUNTEER),
]
GUIDELINES = """\
Label each issue with its **type**, then its **theme** (the study labelled themes).
Write a one-line summary of the symptom (bugs), intent (questions) or expectation (requirements).
Hover or focus a category to see its definition and the study's examples.
"""


class Command(BaseCommand):
    help = (
        "Load the study taxonomy and create the demo project with demo accounts and the study's "
        f"{DEMO_LABELS} labels. Safe to run again: nothing is duplicated."
    )

    def handle(self, *args, **options):
        data = settings.STUDY_DATA_DIR
        taxonomy_load(
            path=data / "taxonomy.csv",
            name="LLM challenges",
            version="1",
            translations=settings.STUDY_TAXONOMY_ZH,
        )
        taxonomy = Taxonomy.objects.get(name="LLM challenges", version="1")
        for detail in sorted((data / "study-details").glob("*.csv")):
            examples_load(path=detail, taxonomy=taxonomy)
        with transaction.atomic():
            project, _ = Project.objects.get_or_create(
                slug=DEMO_SLUG,
                defaults={
                    "name": "Demo: Megatron-LM issues (LLM challenges study)",
                    "taxonomy": taxonomy,
                    "overlap_k": 3,
                    "label_depth": Level.THEME,
                    "guidelines": GUIDELINES,
                },
            )
            passwords = self._accounts(project)
        report = study_labels_import(project=project, path=data / "labels" / DEMO_LABELS)
        self.stdout.write(
            f"Demo project '{project.slug}': {report.items_created} new items from {DEMO_LABELS}."
        )
        added = sum(
            demo_items_load(project=project, path=settings.DEMO_DATA_DIR / name)
            for name in DEMO_ISSUE_FILES
        )
        self.stdout.write(
            f"  and {added} new demo issues (some in Chinese, on a Gitee tracker) to screen and "
            f"label, one disputed for the lead; {project.items.count()} items in all."
        )
        self._interviews(project, data / "interviews")
        self.stdout.write("Demo accounts (sign in at http://127.0.0.1:8000/):")
        for username, role in DEMO_ACCOUNTS:
            label = str(role.label)  # lazy (translatable): format the text, not the proxy
            self.stdout.write(f"  {label:<15} {username:<18} password: {passwords[username]}")

    def _interviews(self, project: Project, folder) -> None:
        """The study's interviews, for the Interviews pages and the triangulation (importing
        them again changes nothing)."""
        files = {
            part: InterviewFile(name, (folder / name).read_bytes())
            for part, name in DEMO_INTERVIEWS.items()
        }
        report = interviews_import(project=project, actor=OPERATOR, **files)
        self.stdout.write(
            f"  and the study's interviews: {report.participants} participants ({report.users} "
            f"users, {report.developers} developers), {report.quotes} quotes, {report.links} "
            f"links ({len(report.unresolved)} to codes the taxonomy lacks, for the lead to map)."
        )
        self._transcript(project)

    def _transcript(self, project: Project) -> None:
        """A transcript to code in the browser, for two demo volunteers: every codebook quote
        after the prompt it answered, one turn to a line (the study published no transcripts;
        with no participant of its own, its codes do not count twice in the triangulation)."""
        name = "Codebook quotes as a transcript.txt"
        transcript = Transcript.objects.filter(project=project, name=name).first()
        if transcript is None:
            quotes = Quote.objects.filter(participant__project=project).select_related(
                "participant"
            )
            turns = [  # one turn to a line
                f"Q: {q.prompt_category}\n{q.participant.code}: {' '.join(q.text.split())}"
                for q in quotes.order_by("participant__kind", "participant__code", "pk")
            ]
            data = ("\n".join(turns) + "\n").encode()
            transcript = transcript_upload(project=project, actor=OPERATOR, name=name, data=data)
        for username in ("demo-volunteer-1", "demo-volunteer-2"):
            transcript_coder_assign(transcript=transcript, actor=OPERATOR, username=username)
        self.stdout.write(f"  and '{name}' for demo-volunteer-1 and -2 to code.")

    def _accounts(self, project: Project) -> dict[str, str]:
        """Create the demo users once; passwords are random and kept in var/, never in the repo."""
        path = settings.VAR_DIR / "demo-credentials.json"
        passwords = json.loads(path.read_text()) if path.exists() else {}
        users = get_user_model()
        for username, role in DEMO_ACCOUNTS:
            user, created = users.objects.get_or_create(username=username)
            if created or username not in passwords:
                passwords[username] = secrets.token_urlsafe(9)
                user.set_password(passwords[username])
            user.is_staff = user.is_superuser = role == Role.ADMIN
            user.save()
            Membership.objects.update_or_create(project=project, user=user, defaults={"role": role})
        path.write_text(json.dumps(passwords, indent=2))
        path.chmod(0o600)
        return passwords
