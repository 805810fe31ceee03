"""Reads for the ingest pages and API: sources with their last run, and a run's progress."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from zoneinfo import ZoneInfo

from django.db.models import Count, IntegerField, OuterRef, QuerySet, Subquery, Value
from django.db.models.functions import Coalesce
from django.utils import timezone
from django.utils.translation import gettext as _

from ingest.models import HarvestRun, Issue, RunStatus, Source


def sources_overview() -> QuerySet[Source]:
    """Every source with its stored issue count and its last run's status and counts."""
    last = HarvestRun.objects.filter(source=OuterRef("pk")).order_by("-created_at", "-pk")
    issues = (
        Issue.objects.filter(source=OuterRef("pk"))
        .order_by()
        .values("source")
        .annotate(n=Count("pk"))
        .values("n")
    )
    return (
        Source.objects.select_related("keyword_set")
        .annotate(
            n_issues=Coalesce(Subquery(issues, output_field=IntegerField()), Value(0)),
            last_run_id=Subquery(last.values("pk")[:1]),
            last_run_status=Subquery(last.values("status")[:1]),
            last_run_issues=Subquery(last.values("issues_fetched")[:1]),
            last_run_comments=Subquery(last.values("comments_fetched")[:1]),
            last_run_at=Subquery(last.values("created_at")[:1]),
        )
        .order_by("host", "owner", "repo", "created_from", "pk")
    )


def duration_words(delta: timedelta) -> str:
    minutes = round(delta.total_seconds() / 60)
    if delta.total_seconds() < 60:
        return _("less than a minute")
    if minutes < 90:
        return _("%(minutes)d min") % {"minutes": minutes}
    return _("%(hours)d h %(minutes)d min") % {"hours": minutes // 60, "minutes": minutes % 60}


def _clock(moment: datetime) -> str:
    return moment.astimezone(UTC).strftime("%H:%M UTC")


def _host_wait_words(reason: str, host: str, until: datetime, now: datetime) -> str:
    if until <= now:
        return _("the wait is over; the harvest tries %(host)s again shortly") % {"host": host}
    return _("%(reason)s; trying again in %(left)s (at %(clock)s)") % {
        "reason": reason,
        "left": duration_words(until - now),
        "clock": _clock(until),
    }


def rate_limit_words(run: HarvestRun, *, now: datetime | None = None) -> str:
    """The run's rate-limit state as a sentence, e.g. 'waiting 14 min for the GitHub limit to
    reset (at 13:05 UTC)'."""
    now = now or timezone.now()
    host = run.source.get_host_display()
    if run.status == RunStatus.WAITING and run.waiting_until and run.wait_reason:
        # a failing host, not a limit
        return _host_wait_words(run.wait_reason, host, run.waiting_until, now)
    if run.status == RunStatus.WAITING and run.waiting_until:
        if run.waiting_until <= now:
            return _("the wait for the %(host)s limit is over; the harvest continues shortly") % {
                "host": host
            }
        return _("waiting %(left)s for the %(host)s limit to reset (at %(clock)s)") % {
            "left": duration_words(run.waiting_until - now),
            "host": host,
            "clock": _clock(run.waiting_until),
        }
    if run.rate_remaining is None:
        return _("no answer from %(host)s yet, so no rate-limit information") % {"host": host}
    words = {"n": run.rate_remaining, "host": host}
    if run.rate_reset_at and run.rate_reset_at > now:
        words["left"] = duration_words(run.rate_reset_at - now)
        sentence = _("%(n)d %(host)s requests left until the limit resets in %(left)s") % words
    else:
        sentence = _("%(n)d %(host)s requests left") % words
    if run.is_active:
        return sentence
    return _("when the run stopped: %(sentence)s") % {"sentence": sentence}


def _progress(run: HarvestRun, phase: str) -> tuple[float, str]:
    """How far the run is (HarvestRun.progress, an estimate from where in time the listing has
    got), and the same in words."""
    if run.status == RunStatus.DONE or phase == "done":
        return 1.0, _("Issues and comments harvested.")
    if phase == "comments":
        if run.reached:
            return run.progress, _(
                "Step 2 of 2: comments on the harvested issues, those updated up to %(day)s so far."
            ) % {"day": f"{run.reached:%Y-%m-%d}"}
        return run.progress, _("Step 2 of 2: comments on the harvested issues.")
    if run.reached is None:
        return 0.0, _("Step 1 of 2: issues, newest first.")
    reached = run.reached.astimezone(ZoneInfo(run.source.time_zone))  # the window's days
    return run.progress, _(
        "Step 1 of 2: issues created back to %(day)s (%(share)s of the window %(window)s)."
    ) % {
        "day": f"{reached:%Y-%m-%d}",
        "share": f"{2 * run.progress:.0%}",
        "window": run.source.window_label,
    }


def run_progress(run: HarvestRun, *, now: datetime | None = None) -> dict:
    """Everything the progress page shows, as plain values (the API returns the same)."""
    phase = run.cursor.get("phase", "issues") if isinstance(run.cursor, dict) else "issues"
    fraction, step = _progress(run, phase)
    return {
        "phase": phase,
        "fraction": fraction,
        "step": step,
        "rate_limit": rate_limit_words(run, now=now),
    }
