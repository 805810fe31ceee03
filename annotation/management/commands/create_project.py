from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError

from annotation.models import Project
from annotation.projects.forms import ProjectForm
from annotation.projects.settings import project_create
from concord.errors import ConcordError
from taxonomy.models import Taxonomy


class Command(BaseCommand):
    help = (
        "Create a project, checked like the New project page: "
        "create_project --name 'LLM issues' --slug llm --taxonomy-id 1 --k 7 --admin alice"
    )

    def add_arguments(self, parser):
        defaults = {f.name: f.get_default() for f in Project._meta.concrete_fields}
        parser.add_argument("--name", required=True)
        parser.add_argument("--slug", required=True, help="short id for URLs and commands")
        parser.add_argument(
            "--taxonomy-id", type=int, help="a loaded taxonomy's id (default: the newest one)"
        )
        parser.add_argument("--k", type=int, default=defaults["overlap_k"], help="labels per item")
        parser.add_argument("--depth", default=defaults["label_depth"], help="type|theme|subtheme")
        parser.add_argument("--no-screening", action="store_true", help="items start open")
        parser.add_argument("--screening-votes", type=int, default=defaults["screening_votes"])
        parser.add_argument("--screening-rule", default=defaults["screening_rule"])
        parser.add_argument(
            "--reservation-minutes", type=int, default=defaults["reservation_minutes"]
        )
        parser.add_argument("--quota", type=int, help="most labels per volunteer (default: none)")
        parser.add_argument(
            "--no-reveal", action="store_true", help="never show others' labels to volunteers"
        )
        parser.add_argument("--guidelines-file", help="a Markdown file with the guidelines")
        parser.add_argument("--admin", help="username of the project's first admin")

    def handle(self, *args, **o):
        taxonomy = (
            o["taxonomy_id"]
            or Taxonomy.objects.order_by("-pk").values_list("pk", flat=True).first()
        )
        guidelines = ""
        if o["guidelines_file"]:
            with open(o["guidelines_file"], encoding="utf-8") as handle:
                guidelines = handle.read()
        form = ProjectForm(
            {
                "name": o["name"],
                "slug": o["slug"],
                "taxonomy": taxonomy,
                "overlap_k": o["k"],
                "label_depth": o["depth"],
                "screening_enabled": not o["no_screening"],
                "screening_votes": o["screening_votes"],
                "screening_rule": o["screening_rule"],
                "reservation_minutes": o["reservation_minutes"],
                "quota_per_volunteer": o["quota"],
                "reveal_after_cross_check": not o["no_reveal"],
                "guidelines": guidelines,
            }
        )
        if not form.is_valid():
            problems = "; ".join(
                f"{name}: {' '.join(map(str, errors))}" for name, errors in form.errors.items()
            )
            raise CommandError(problems)
        admin = None
        if o["admin"]:
            admin = get_user_model().objects.filter(username=o["admin"]).first()
            if admin is None:
                raise CommandError(f"no user {o['admin']!r}")
        try:
            project = project_create(creator=admin, **form.cleaned_data)
        except ConcordError as exc:
            raise CommandError(exc.message) from exc
        self.stdout.write(f"Created project {project.slug} ({project.name}), id {project.pk}")
