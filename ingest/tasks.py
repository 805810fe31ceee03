"""Celery tasks: ids in, one service call, safe to run twice."""

import logging

from celery import shared_task
from celery.signals import worker_ready
from django.conf import settings

from concord.tasks import send, send_each
from ingest.clients import ForgeUnavailable, RateLimited, Unauthorized

logger = logging.getLogger(__name__)


@shared_task(bind=True, acks_late=True, max_retries=None)
def harvest_continue(self, run_id: int) -> None:
    """Advance a harvest a few pages, then queue the rest: short tasks resume well after a kill."""
    from ingest.harvest import harvest_advance

    try:
        run = harvest_advance(run_id=run_id, max_pages=settings.HARVEST_PAGES_PER_TASK)
    except RateLimited as exc:  # the forge said when to come back: sleep by rescheduling
        if self.request.is_eager:
            return  # no worker to come back later: the run shows the wait and can be resumed
        raise self.retry(countdown=max(exc.wait_seconds, 1)) from exc
    if run.is_active:
        send(harvest_continue, run_id)


@shared_task
def harvest_resume_stale() -> list[int]:
    """Queue runs whose worker died (beat runs this every minute, workers once on start)."""
    from ingest.harvest import harvest_runs_stale

    return send_each(harvest_continue, harvest_runs_stale())


@shared_task
def details_resume_stale() -> int:
    """Send again detail fetches that went quiet (beat runs this; so does each worker on start)."""
    from ingest.details import details_request, details_stale

    return details_request(details_stale())


@shared_task(bind=True, acks_late=True, max_retries=None)
def issues_fetch_details(self, issue_ids: list[int]) -> None:
    """Fetch title, body and comments for issues imported by URL; done ones are skipped."""
    from ingest.details import details_held
    from ingest.details import issues_fetch_details as fetch
    from ingest.harvest import grown_wait

    try:
        fetch(issue_ids=issue_ids)
    except RateLimited as exc:
        if self.request.is_eager:
            return  # issues without details stay marked; fetching them again resumes
        raise self.retry(countdown=max(exc.wait_seconds, 1)) from exc
    except ForgeUnavailable as exc:
        # The host failing: again after a growing pause, as a harvest waits for it; past
        # HARVEST_MAX_RATE_WAITS, the sweep sends the issues still pending once they have been
        # quiet for JOB_STALE_SECONDS.
        retries = self.request.retries
        if self.request.is_eager or retries >= settings.HARVEST_MAX_RATE_WAITS:
            logger.warning("details of %d issue(s) wait for the host: %s", len(issue_ids), exc)
            return
        wait = grown_wait(retries + 1)
        details_held(issue_ids, wait)
        raise self.retry(countdown=wait) from exc
    except Unauthorized as exc:  # the token: fixed by an admin, then the sweep fetches them
        logger.warning("details of %d issue(s) refused by the host: %s", len(issue_ids), exc)


@worker_ready.connect
def _resume_on_start(sender=None, **kwargs) -> None:
    if not settings.CELERY_TASK_ALWAYS_EAGER:
        send(harvest_resume_stale)
        send(details_resume_stale)
