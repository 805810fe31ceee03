import time
from datetime import date, timedelta

from django.core.management.base import BaseCommand, CommandError
from django.utils import timezone

from concord.errors import ConcordError
from ingest.clients import RateLimited
from ingest.harvest import harvest_advance, harvest_start
from ingest.models import HarvestRun, Host, KeywordSet, RunStatus, Source
from ingest.sources import source_create

BAR_WIDTH = 30


class Command(BaseCommand):
    help = (
        "Harvest a GitHub or Gitee tracker for a creation-date window, in the foreground, with a "
        "progress line. Waits out rate limits; interrupted runs resume with --resume RUN_ID."
    )

    def add_arguments(self, parser):
        parser.add_argument("--host", choices=Host.values)
        parser.add_argument("--repo", help="owner/repo")
        parser.add_argument(
            "--from", dest="created_from", type=date.fromisoformat, help="YYYY-MM-DD"
        )
        parser.add_argument(
            "--until", dest="created_until", type=date.fromisoformat, help="YYYY-MM-DD"
        )
        parser.add_argument(
            "--token", default="", help="API token (else GITHUB_TOKEN / GITEE_TOKEN)"
        )
        parser.add_argument("--keywords", help="name of a keyword set marking candidates")
        parser.add_argument(
            "--time-zone",
            default="",
            help="whose days --from/--until are (default: the host's, Asia/Shanghai for Gitee)",
        )
        parser.add_argument("--source", type=int, help="harvest an existing source by id")
        parser.add_argument("--resume", type=int, help="continue an interrupted run by id")

    def handle(self, *args, **options):
        try:
            run = self._run(options)
        except ConcordError as exc:
            raise CommandError(str(exc)) from exc
        self._drive(run)

    def _run(self, options) -> HarvestRun:
        if options["resume"]:
            run = HarvestRun.objects.filter(pk=options["resume"]).first()
            if run is None or not run.is_active:
                raise CommandError(f"run {options['resume']} does not exist or is not active")
            return run
        return harvest_start(source=self._source(options), enqueue=False)

    def _source(self, options) -> Source:
        if options["source"]:
            source = Source.objects.filter(pk=options["source"]).first()
            if source is None:
                raise CommandError(f"no source with id {options['source']}")
            return source
        missing = [
            f"--{k}" for k in ("host", "repo", "created_from", "created_until") if not options[k]
        ]
        if missing:
            raise CommandError(
                f"give --source, or all of --host --repo --from --until (missing {missing})"
            )
        owner, _, repo = options["repo"].partition("/")
        if not owner or not repo or "/" in repo:
            raise CommandError(f"--repo must look like owner/repo, not {options['repo']!r}")
        keyword_set = None
        if options["keywords"]:
            keyword_set = KeywordSet.objects.filter(name=options["keywords"]).first()
            if keyword_set is None:
                raise CommandError(f"no keyword set named {options['keywords']!r}")
        source = Source.objects.filter(
            host=options["host"],
            owner=owner,
            repo=repo,
            created_from=options["created_from"],
            created_until=options["created_until"],
        ).first()
        return source or source_create(
            host=options["host"],
            owner=owner,
            repo=repo,
            created_from=options["created_from"],
            created_until=options["created_until"],
            token=options["token"],
            keyword_set=keyword_set,
            time_zone=options["time_zone"],
        )

    def _drive(self, run: HarvestRun) -> None:
        while True:
            try:
                run = harvest_advance(run_id=run.pk, on_page=self._progress)
            except RateLimited as exc:
                self._wait(run, exc.wait_seconds)
                continue
            except KeyboardInterrupt:
                raise CommandError(
                    f"interrupted: run {run.pk} keeps its checkpoint; --resume {run.pk} goes on "
                    "from it, and so does a new harvest of the source (or the sweep, with a "
                    "worker) once it has shown no sign for JOB_STALE_SECONDS."
                ) from None
            if not run.is_active:
                break
        self.stdout.write("")
        if run.status == RunStatus.FAILED:
            raise CommandError(f"harvest failed: {run.error}")
        self.stdout.write(
            f"{run.status}: {run.issues_fetched} issues, {run.comments_fetched} comments, "
            f"{run.pull_requests_skipped} pull requests left out, {run.requests} requests"
        )

    def _progress(self, run: HarvestRun) -> None:
        done = round(run.progress * BAR_WIDTH)
        bar = "#" * done + "." * (BAR_WIDTH - done)
        self.stdout.write(
            f"\r[{bar}] {run.progress:4.0%} {run.cursor.get('phase', ''):<8} "
            f"pages {run.pages:>5}  issues {run.issues_fetched:>7}  "
            f"comments {run.comments_fetched:>8}  rate left {_or_unknown(run.rate_remaining):>5}",
            ending="",
        )
        self.stdout.flush()

    def _wait(self, run: HarvestRun, seconds: float) -> None:
        until = timezone.localtime(timezone.now() + timedelta(seconds=seconds))
        self.stdout.write(
            f"\nwaiting {seconds:.0f} s for the {run.source.get_host_display()} "
            f"rate limit (until {until:%H:%M:%S})"
        )
        time.sleep(seconds)


def _or_unknown(value) -> str:
    return "?" if value is None else str(value)
