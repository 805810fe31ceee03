"""Where issues come from. An Issue is unique by host + owner/repo + number, a Comment by host +
comment id; a Source is one tracker and date window, harvested by HarvestRuns."""

import functools
from datetime import datetime, time
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError, available_timezones

from django.core.exceptions import ValidationError
from django.db import models
from django.db.models.functions import Lower
from django.utils import timezone
from django.utils.translation import gettext_lazy as _

from ingest.issue_refs import BadRepositoryName, IssueRef, repository_name_check


class Host(models.TextChoices):
    GITHUB = "github", "GitHub"
    GITEE = "gitee", "Gitee"


class Issue(models.Model):
    host = models.CharField(max_length=10, choices=Host.choices)
    owner = models.CharField(max_length=100, help_text="Account or organisation, e.g. 'NVIDIA'.")
    repo = models.CharField(max_length=100, help_text="Repository name, e.g. 'Megatron-LM'.")
    number = models.CharField(
        max_length=20, help_text="GitHub: a decimal number; Gitee: an id such as 'IBDZ87'."
    )
    url = models.URLField(max_length=300, help_text="Canonical web URL of the issue.")
    title = models.CharField(max_length=1000, blank=True)
    body = models.TextField(blank=True, help_text="Untrusted Markdown from the tracker.")
    author = models.CharField(max_length=100, blank=True)
    state = models.CharField(max_length=20, blank=True, help_text="open / closed as the host says.")
    labels = models.JSONField(default=list, blank=True, help_text="Tracker labels, as names.")
    created_at = models.DateTimeField(null=True, blank=True, help_text="Created on the tracker.")
    closed_at = models.DateTimeField(null=True, blank=True)
    comment_count = models.PositiveIntegerField(default=0)
    is_pull_request = models.BooleanField(default=False)
    source = models.ForeignKey(
        "Source",
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="issues",
        help_text="The source that harvested it; empty for issues imported by URL.",
    )
    updated_at = models.DateTimeField(
        null=True,
        blank=True,
        help_text="Last update on the tracker; an older copy never overwrites.",
    )
    host_id = models.BigIntegerField(null=True, blank=True, help_text="The host's own issue id.")
    fetched_at = models.DateTimeField(
        null=True,
        blank=True,
        help_text="When details were last fetched; empty for URL-only issues.",
    )
    fetch_error = models.CharField(
        max_length=300, blank=True, help_text="Why fetching details failed, if it did."
    )
    moved_to = models.URLField(
        max_length=300,
        blank=True,
        db_default="",  # rows written by upsert (which names its columns) get it too
        help_text="Where the host says this issue lives now (transferred to another "
        "repository); the issue keeps the identity it was asked for.",
    )
    details_requested_at = models.DateTimeField(
        null=True,
        blank=True,
        help_text="When a worker last took (or was sent) this issue's detail fetch; the sweep "
        "sends fetches that went quiet again.",
    )

    class Meta:
        # The unique index also serves per-repository scans (its leading columns); a separate
        # (host, owner, repo) index would only tempt the planner into filtering whole repositories
        # when its statistics are stale, as they are during a first harvest.
        constraints = [
            models.UniqueConstraint(fields=["host", "owner", "repo", "number"], name="issue_unique")
        ]
        # Owner and repository names are told apart without case (NVIDIA/Megatron-LM is
        # nvidia/megatron-lm on both hosts): lookups go through this (ingest.services
        # repository_issues). Not unique: rows stored before may hold one issue twice.
        indexes = [
            models.Index(
                "host", Lower("owner"), Lower("repo"), "number", name="issue_identity_nocase"
            )
        ]

    def __str__(self) -> str:
        return f"{self.repository}#{self.number}"

    @property
    def repository(self) -> str:
        return f"{self.owner}/{self.repo}"

    @property
    def ref(self) -> IssueRef:
        return IssueRef(self.host, self.owner, self.repo, self.number)


class Comment(models.Model):
    host = models.CharField(max_length=10, choices=Host.choices)
    comment_id = models.BigIntegerField(help_text="The host's comment id (unique per host).")
    issue = models.ForeignKey(Issue, on_delete=models.CASCADE, related_name="comments")
    author = models.CharField(max_length=100, blank=True)
    body = models.TextField(blank=True, help_text="Untrusted Markdown from the tracker.")
    created_at = models.DateTimeField(null=True, blank=True)
    updated_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["created_at", "comment_id"]
        constraints = [
            models.UniqueConstraint(fields=["host", "comment_id"], name="comment_unique")
        ]

    def __str__(self) -> str:
        return f"comment {self.comment_id} on {self.issue_id}"


class KeywordSet(models.Model):
    """Keywords that make an issue a candidate (the study filtered framework trackers this way)."""

    name = models.CharField(max_length=100, unique=True, help_text="e.g. 'pytorch'.")
    keywords = models.JSONField(
        default=list, help_text="Words or phrases; matched case-insensitively."
    )
    description = models.TextField(blank=True)

    def __str__(self) -> str:
        return self.name


DEFAULT_TIME_ZONE = "UTC"
# The zone each host shows its dates in: what a new source's window is suggested to be read in.
HOST_TIME_ZONES = {"github": "UTC", "gitee": "Asia/Shanghai"}


def time_zone_check(name: str) -> None:
    """ValidationError unless `name` is an IANA time zone (e.g. 'Asia/Shanghai', 'UTC'). Only
    names the system's zone database lists are asked of ZoneInfo: anything else, such as a name
    of thousands of characters (which the file system refuses with an OSError), is no zone."""
    problem = f"{name[:40]!r} is not a time zone: give an IANA name such as UTC or Asia/Shanghai."
    if len(name) > TIME_ZONE_CHARS or name not in _zone_names():
        raise ValidationError(problem)
    try:
        ZoneInfo(name)
    except (ZoneInfoNotFoundError, ValueError, OSError) as exc:
        raise ValidationError(problem) from exc


TIME_ZONE_CHARS = 64  # Source.time_zone's column


@functools.cache
def _zone_names() -> frozenset[str]:
    return frozenset(available_timezones())


def time_zone_choices() -> list[tuple[str, str]]:
    return [(name, name) for name in sorted(available_timezones())]


class Source(models.Model):
    host = models.CharField(max_length=10, choices=Host.choices)
    owner = models.CharField(max_length=100)
    repo = models.CharField(max_length=100)
    created_from = models.DateField(
        help_text="First creation date to harvest (inclusive, in the source's time zone)."
    )
    created_until = models.DateField(
        help_text="Last creation date to harvest (inclusive, in the source's time zone)."
    )
    time_zone = models.CharField(
        max_length=64,
        default=DEFAULT_TIME_ZONE,
        db_default=DEFAULT_TIME_ZONE,
        validators=[time_zone_check],
        help_text="The window's dates are days in this zone (Gitee shows Asia/Shanghai dates).",
    )
    renamed_from = models.CharField(
        max_length=201,
        blank=True,
        db_default="",
        help_text="owner/repo this source had before the host said the repository was renamed.",
    )
    token = models.CharField(
        max_length=200,
        blank=True,
        help_text=(
            "API token for this source; empty uses GITHUB_TOKEN / GITEE_TOKEN from the environment."
        ),
    )
    keyword_set = models.ForeignKey(
        KeywordSet,
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="sources",
        help_text=(
            "Issues matching these keywords become candidates; empty takes the tracker whole."
        ),
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["host", "owner", "repo", "created_from", "created_until"],
                name="source_unique",
            ),
            models.CheckConstraint(
                condition=models.Q(created_from__lte=models.F("created_until")),
                name="source_window",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.get_host_display()} {self.owner}/{self.repo} {self.window_label}"

    @property
    def window_label(self) -> str:
        """The window as its dates mean it: '2024-01-01..2024-06-30 (Asia/Shanghai)'."""
        return f"{self.created_from}..{self.created_until} ({self.time_zone})"

    def clean(self) -> None:
        """The names become API request paths: only what the host allows (never '..')."""
        super().clean()
        if self.host not in Host.values:
            return  # the choices check says so
        try:
            repository_name_check(self.host, self.owner, self.repo)
        except BadRepositoryName as exc:
            raise ValidationError({exc.field: exc.message}) from exc

    @property
    def repository(self) -> str:
        return f"{self.owner}/{self.repo}"


class PageValidator(models.Model):
    """What the last harvest saw at one page URL: its ETag for a conditional request next time,
    and where the listing went on from there (a 304 carries no body and no `link`)."""

    source = models.ForeignKey(Source, on_delete=models.CASCADE, related_name="page_validators")
    url = models.TextField()
    etag = models.CharField(max_length=200, blank=True)
    next_url = models.TextField(blank=True)
    ends_phase = models.BooleanField(default=False, help_text="The window ended on this page.")
    full = models.BooleanField(
        default=False,
        db_default=False,
        help_text="The page held a whole page of items: with no next page, a 304 on it cannot "
        "tell whether a next page has appeared since.",
    )
    last_number = models.CharField(
        max_length=20,
        blank=True,
        db_default="",
        help_text="The number of the page's last issue: the next page must follow on from it, "
        "even when this one was answered 304 (see harvest._moved_up).",
    )

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["source", "url"], name="page_validator_unique")
        ]

    def __str__(self) -> str:
        return f"{self.url} (etag {self.etag or 'none'})"


class RunStatus(models.TextChoices):
    QUEUED = "queued", _("Queued")
    RUNNING = "running", _("Running")
    WAITING = "waiting", _("Waiting to go on")  # for a rate limit, or a host that fails
    DONE = "done", _("Done")
    FAILED = "failed", _("Failed")
    CANCELLED = "cancelled", _("Cancelled")


ACTIVE_STATUSES = (RunStatus.QUEUED, RunStatus.RUNNING, RunStatus.WAITING)


class HarvestRun(models.Model):
    """One harvest of a Source.

    The cursor is the checkpoint: it commits with each page's upserts."""

    source = models.ForeignKey(Source, on_delete=models.CASCADE, related_name="runs")
    status = models.CharField(max_length=10, choices=RunStatus.choices, default=RunStatus.QUEUED)
    cursor = models.JSONField(
        default=dict,
        blank=True,
        help_text="Phase (issues|comments) and the next page URL to fetch.",
    )
    pages = models.PositiveIntegerField(default=0)
    requests = models.PositiveIntegerField(default=0)
    issues_fetched = models.PositiveIntegerField(default=0)
    comments_fetched = models.PositiveIntegerField(default=0)
    pull_requests_skipped = models.PositiveIntegerField(default=0)
    pages_unchanged = models.PositiveIntegerField(
        default=0, help_text="304 answers to conditional requests."
    )
    restarts = models.PositiveIntegerField(
        default=0,
        db_default=0,
        help_text="Times the host refused a saved page URL and a listing began again.",
    )
    idle_requests = models.PositiveIntegerField(
        default=0,
        db_default=0,
        help_text="Requests since the run last reached a page deeper than any before; too many "
        "fail the run instead of looping.",
    )
    rate_waits = models.PositiveIntegerField(
        default=0,
        db_default=0,
        help_text="Rate-limit answers in a row; each waits longer, too many fail.",
    )
    reached = models.DateTimeField(
        null=True,
        blank=True,
        help_text=(
            "How far the current phase has got: the creation time of the oldest issue stored "
            "(issues come newest first), or the update time of the latest comment stored "
            "(comments come oldest first)."
        ),
    )
    rate_remaining = models.IntegerField(null=True, blank=True)
    rate_reset_at = models.DateTimeField(null=True, blank=True)
    waiting_until = models.DateTimeField(null=True, blank=True)
    wait_reason = models.CharField(
        max_length=300,
        blank=True,
        default="",
        db_default="",
        help_text="While waiting for a host that fails (5xx, timeouts), what it answered; "
        "empty while waiting for a rate limit.",
    )
    error = models.TextField(blank=True, help_text="Why the run failed, in words for the admin.")
    cancel_requested = models.BooleanField(default=False)
    started_by = models.ForeignKey(
        "auth.User", null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)
    heartbeat_at = models.DateTimeField(null=True, blank=True, help_text="Last page committed.")
    host_began_at = models.DateTimeField(
        null=True,
        blank=True,
        help_text="The host's clock (its Date header) when the run's first page was answered: "
        "the next run asks for what changed since then, less a margin, whatever our clock says.",
    )
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at"]
        constraints = [
            models.UniqueConstraint(
                fields=["source"],
                condition=models.Q(status__in=ACTIVE_STATUSES),
                name="one_active_run_per_source",
            )
        ]

    def __str__(self) -> str:
        return f"run {self.pk} of {self.source} ({self.status})"

    @property
    def is_active(self) -> bool:
        return self.status in ACTIVE_STATUSES

    @property
    def progress(self) -> float:
        """An estimate in [0, 1]: each phase is half, and within a phase the share of the time
        span walked so far (listings are ordered by time; no host says how many pages remain)."""
        phase = self.cursor.get("phase")
        if self.status == RunStatus.DONE or phase == "done":
            return 1.0
        if self.reached is None:
            return 0.0 if phase != "comments" else 0.5
        zone = ZoneInfo(self.source.time_zone)
        start = datetime.combine(self.source.created_from, time.min, tzinfo=zone)
        if phase == "issues":
            end = datetime.combine(self.source.created_until, time.max, tzinfo=zone)
            walked = (end - self.reached) / (end - start)
            return 0.5 * min(max(walked, 0.0), 1.0)
        end = self.heartbeat_at or timezone.now()
        walked = (self.reached - start) / (end - start) if end > start else 1.0
        return 0.5 + 0.5 * min(max(walked, 0.0), 1.0)


class KeywordMatch(models.Model):
    """Which keywords of a set an issue matched; its existence makes the issue a candidate."""

    issue = models.ForeignKey(Issue, on_delete=models.CASCADE, related_name="keyword_matches")
    keyword_set = models.ForeignKey(KeywordSet, on_delete=models.CASCADE, related_name="matches")
    keywords = models.JSONField(
        default=list, help_text="The keywords found, as written in the set."
    )

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["issue", "keyword_set"], name="keyword_match_unique")
        ]

    def __str__(self) -> str:
        return f"{self.issue_id} matches {', '.join(self.keywords)}"
