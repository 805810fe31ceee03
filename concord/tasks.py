"""Project-wide task plumbing: the liveness probe and `send`, which queues a task without ever
failing the request that asked for it."""

from __future__ import annotations

import logging

from celery import shared_task
from django.utils.translation import gettext_lazy
from kombu.exceptions import OperationalError

logger = logging.getLogger(__name__)

NOT_SENT = gettext_lazy(
    "Saved, but the task queue (Redis) cannot be reached right now: the job waits and starts by"
    " itself once the queue is back."
)


@shared_task(name="concord.health", ignore_result=False)
def health() -> str:
    """Round trip through the broker and a worker.

    `manage.py` and tests use it as a liveness probe."""
    return "ok"


def send(task, *args) -> bool:
    """Queue `task(*args)`; False when the broker (Redis) cannot be reached.

    Every background job has a row in the database before it is sent, and a sweep (beat every
    minute, each worker when it starts) sends again the jobs nobody is working on. So a job sent
    while Redis is down is not lost: it waits in the database and starts once Redis is back.
    """
    try:
        task.delay(*args)
    except OperationalError as exc:
        logger.warning(
            "could not queue %s%s: %s; the stale-job sweep will send it", task.name, args, exc
        )
        return False
    return True


def send_each(task, ids: list[int]) -> list[int]:
    """`send(task, id)` for each id (the stale-job sweeps); returns the ids."""
    for pk in ids:
        send(task, pk)
    return ids
