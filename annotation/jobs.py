"""What every background job of the annotation app shares (exports, label-file imports): a row
with `status` (ExportStatus values), `created_at`, `started_at`, `heartbeat_at`, `finished_at`
and `error`, claimed by the worker that runs it, beating a heartbeat while it works, and sent again
by the stale-job sweep when nobody is working on it (its worker was killed, or it was never taken
because Redis was down when it was queued). One copy of those rules for every job model.
"""

from __future__ import annotations

from datetime import timedelta

from django.conf import settings
from django.db import models
from django.db.models import Q
from django.utils import timezone

from annotation.models import ExportStatus

NOT_TAKEN = (
    "Queued {waited} ago and no worker has taken it: the task queue (Redis) or the workers"
    " may be down. Nothing is lost; it starts by itself once they are back."
)


def job_claim(model: type[models.Model], job_id: int, **reset) -> bool:
    """Mark the job running (with `reset` fields) if it is queued, or running without a recent
    heartbeat (its worker died); False if it is done, failed, or another worker has it (a
    duplicate delivery), which the caller then leaves alone. One UPDATE, so two workers never
    both claim it."""
    now = timezone.now()
    limit = now - timedelta(seconds=settings.JOB_STALE_SECONDS)
    claimed = (
        model._default_manager.filter(pk=job_id)
        .filter(_unattended(limit, queued_since=None))
        .update(status=ExportStatus.RUNNING, started_at=now, heartbeat_at=now, error="", **reset)
    )
    return bool(claimed)


def job_beat(model: type[models.Model], job_id: int, **progress) -> None:
    """A sign of life from the worker, with its progress fields."""
    model._default_manager.filter(pk=job_id).update(heartbeat_at=timezone.now(), **progress)


def job_finish(model: type[models.Model], job_id: int, *, error: str = "", **fields) -> None:
    """Done, or failed with `error` (words for the user)."""
    status = ExportStatus.FAILED if error else ExportStatus.DONE
    model._default_manager.filter(pk=job_id).update(
        status=status, error=error, finished_at=timezone.now(), **fields
    )


def jobs_stale(model: type[models.Model]) -> list[int]:
    """Jobs nobody is working on: queued for a while (never sent, or the message was lost) or
    running without a heartbeat (a killed worker). The sweep sends them again."""
    limit = timezone.now() - timedelta(seconds=settings.JOB_STALE_SECONDS)
    stale = model._default_manager.filter(_unattended(limit, queued_since=limit))
    return sorted(stale.values_list("pk", flat=True))


def _unattended(limit, *, queued_since) -> Q:
    """Queued (before `queued_since`, if given), or running with no heartbeat since `limit`."""
    queued = Q(status=ExportStatus.QUEUED)
    if queued_since is not None:
        queued &= Q(created_at__lt=queued_since)
    silent = Q(heartbeat_at__isnull=True) | Q(heartbeat_at__lt=limit)
    return queued | (Q(status=ExportStatus.RUNNING) & silent)


def queued_step(job) -> dict | None:
    """What a progress page says of a job still queued (None if it is not), including that no
    worker has taken it for longer than JOB_STALE_SECONDS."""
    if job.status != ExportStatus.QUEUED:
        return None
    waited = (timezone.now() - job.created_at).total_seconds()
    if waited > settings.JOB_STALE_SECONDS:
        ago = f"{waited:.0f} s" if waited < 120 else f"{waited / 60:.0f} min"
        return {"fraction": 0.0, "step": NOT_TAKEN.format(waited=ago)}
    return {"fraction": 0.0, "step": "Queued: waiting for a worker."}
