"""Celery is wired: a task goes through Redis to a real worker process and its result comes back."""

import os
import subprocess
import sys
import uuid
from pathlib import Path

import pytest
from celery.result import EagerResult
from django.conf import settings

from concord.tasks import health

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture
def worker(redis_required, tmp_path):
    """A worker on a queue of its own, so no other worker on this Redis can take the task."""
    queue = f"concord-test-{uuid.uuid4().hex[:8]}"
    log = tmp_path / "worker.log"
    with log.open("w") as out:
        process = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "celery",
                "-A",
                "concord",
                "worker",
                "--pool",
                "solo",
                "--queues",
                queue,
                "--loglevel",
                "INFO",
                "--without-gossip",
                "--without-mingle",
            ],
            cwd=ROOT,
            env={**os.environ, "CELERY_QUEUE": queue, "SECRET_KEY": settings.SECRET_KEY},
            stdout=out,
            stderr=subprocess.STDOUT,
        )
    yield queue, log
    process.terminate()
    process.wait(timeout=30)


@pytest.mark.worker
def test_health_task_round_trips_through_a_real_worker(worker):
    queue, log = worker
    result = health.apply_async(queue=queue)
    assert not isinstance(result, EagerResult)
    assert result.get(timeout=90) == "ok"
    assert "concord.health" in log.read_text()
