"""Background jobs with a row (annotation.models.BackgroundJob): export files, item imports and
label-file imports.

A worker claims a job by one conditional UPDATE (queued, or running with a heartbeat that
stopped), so a duplicate delivery finds nothing to claim while another worker is on it, and a
rerun after a killed worker starts it again. The worker beats `heartbeat_at` as it goes; the
stale-job sweep (beat, and each worker on start) sends again the jobs nobody is working on.

A job keeps the interface language it was queued in (BackgroundJob.language), and its worker
runs it in that language (in_job_language): the errors and report lines it stores are read later
by the person who asked, in the language they asked in.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager, suppress
from dataclasses import dataclass
from datetime import timedelta
from functools import wraps
from typing import Generic, ParamSpec, TypeVar

from django.conf import settings
from django.db import OperationalError, close_old_connections, connections, transaction
from django.db.models import Q
from django.utils import timezone, translation
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy
from rest_framework import serializers

from annotation.models import BackgroundJob, JobStatus
from concord.tasks import send

Job = TypeVar("Job", bound=BackgroundJob)
P = ParamSpec("P")
R = TypeVar("R")


@dataclass(frozen=True)
class Queued(Generic[Job]):
    job: Job
    sent: bool  # False: the queue (Redis) was down; the stale-job sweep sends it later


def job_queue(model: type[Job], task=None, *, user, **fields) -> Queued[Job]:
    """Create the job's row (asked for by `user`, in the language active now) and, once the
    transaction commits, send `task` with its id; without a task the caller runs the job
    itself."""
    sent: dict[str, bool] = {}  # filled by the on-commit hook
    with transaction.atomic():
        job = model._default_manager.create(
            requested_by=user if user is not None and user.is_authenticated else None,
            language=translation.get_language() or settings.LANGUAGE_CODE,
            **fields,
        )
        if task is not None:
            transaction.on_commit(lambda: sent.update(ok=send(task, job.pk)))
    return Queued(job=job, sent=sent.get("ok", True))


def in_job_language(model: type[BackgroundJob]) -> Callable[[Callable[P, R]], Callable[P, R]]:
    """For a job's *_run function (called with `job_id=`, by its task or a command): run it in
    the language the job was queued in, whatever the worker's, so the errors and report it stores
    read as the requester's pages do. The worker's own language is back afterwards."""

    def decorate(run: Callable[P, R]) -> Callable[P, R]:
        @wraps(run)
        def in_language(*args: P.args, **kwargs: P.kwargs) -> R:
            rows = model._default_manager.filter(pk=kwargs["job_id"])
            language = rows.values_list("language", flat=True).first()
            with translation.override(language or settings.LANGUAGE_CODE):
                return run(*args, **kwargs)

        return in_language

    return decorate


def heartbeat_kept(model: type[BackgroundJob]) -> Callable[[Callable[P, R]], Callable[P, R]]:
    """For a job's *_run function (called with `job_id=`): while it runs, a thread of its own, on
    a database connection of its own, beats the job's heartbeat every JOB_STALE_SECONDS / 4.

    A job that writes in one long transaction (an item import of ten times the study: minutes)
    cannot beat from inside it, as no other process sees the beat before the commit; the sweep
    would take the job for abandoned and send it to a second worker, which would run it again
    beside the first and write its report over the first's. A killed worker takes the thread
    with it, so its job still goes stale and is sent again."""

    def decorate(run: Callable[P, R]) -> Callable[P, R]:
        @wraps(run)
        def kept(*args: P.args, **kwargs: P.kwargs) -> R:
            with _beating(model, kwargs["job_id"]):
                return run(*args, **kwargs)

        return kept

    return decorate


@contextmanager
def _beating(model: type[BackgroundJob], job_id: object) -> Iterator[None]:
    stopped = threading.Event()

    def beat() -> None:
        try:
            while not stopped.wait(settings.JOB_STALE_SECONDS / 4):
                # A row the run itself has locked (finishing, in its transaction) is skipped: it
                # is about to commit. A busy or briefly lost database: the next beat.
                running = model._default_manager.filter(pk=job_id, status=JobStatus.RUNNING)
                mine = running.select_for_update(skip_locked=True).values("pk")
                close_old_connections()
                with suppress(OperationalError), transaction.atomic():
                    model._default_manager.filter(pk__in=mine).update(heartbeat_at=timezone.now())
        finally:
            connections.close_all()  # this thread's own

    thread = threading.Thread(target=beat, name=f"{model.__name__} {job_id} heartbeat", daemon=True)
    thread.start()
    try:
        yield
    finally:
        stopped.set()
        thread.join()


class JobProgressOut(serializers.Serializer):
    """A job's progress as its page and the API show it (each job's *_progress function)."""

    fraction = serializers.FloatField()
    step = serializers.CharField()


NOT_TAKEN = gettext_lazy(
    "Queued %(waited)s ago and no worker has taken it: the task queue (Redis) or the workers"
    " may be down. Nothing is lost; it starts by itself once they are back."
)


def job_claim(model: type[BackgroundJob], job_id: int, **restart) -> bool:
    """Mark the job running for this worker, setting `restart` (counters back to 0); False when
    it is done, failed or being worked on by another worker."""
    now = timezone.now()
    limit = now - timedelta(seconds=settings.JOB_STALE_SECONDS)
    return bool(
        model._default_manager.filter(pk=job_id)
        .filter(_unattended(limit, queued_since=None))
        .update(status=JobStatus.RUNNING, started_at=now, heartbeat_at=now, error="", **restart)
    )


def job_beat(model: type[BackgroundJob], job_id: int, **progress) -> None:
    """A sign of life from the worker, with its progress counters."""
    model._default_manager.filter(pk=job_id).update(heartbeat_at=timezone.now(), **progress)


def job_finish(model: type[BackgroundJob], job_id: int, **result) -> None:
    model._default_manager.filter(pk=job_id).update(
        status=JobStatus.DONE, finished_at=timezone.now(), **result
    )


def job_fail(model: type[BackgroundJob], job_id: int, message: str, **result) -> None:
    model._default_manager.filter(pk=job_id).update(
        status=JobStatus.FAILED, error=message, finished_at=timezone.now(), **result
    )


def jobs_stale(model: type[BackgroundJob]) -> list[int]:
    """Jobs nobody is working on: queued for a while (never sent, or the message was lost) or
    running without a heartbeat (a killed worker). The sweep sends them again."""
    limit = timezone.now() - timedelta(seconds=settings.JOB_STALE_SECONDS)
    stale = model._default_manager.filter(_unattended(limit, queued_since=limit))
    return sorted(stale.values_list("pk", flat=True))


def job_waiting_step(job: BackgroundJob) -> str:
    """What a queued job's progress says: waiting, or (after a while) that nobody took it."""
    waited = (timezone.now() - job.created_at).total_seconds()
    if waited > settings.JOB_STALE_SECONDS:
        ago = f"{waited:.0f} s" if waited < 120 else f"{waited / 60:.0f} min"
        return NOT_TAKEN % {"waited": ago}
    return _("Queued: waiting for a worker.")


def _unattended(limit, *, queued_since) -> Q:
    """Queued (before `queued_since`, if given), or running with no heartbeat since `limit`."""
    queued = Q(status=JobStatus.QUEUED)
    if queued_since is not None:
        queued &= Q(created_at__lt=queued_since)
    silent = Q(heartbeat_at__isnull=True) | Q(heartbeat_at__lt=limit)
    return queued | (Q(status=JobStatus.RUNNING) & silent)
