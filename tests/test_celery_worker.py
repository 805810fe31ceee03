"""Celery is wired: a task goes through Redis to a real worker process and its result comes back."""

import pytest
from celery.result import EagerResult

from concord.tasks import health
from tests.workers import worker_pool


@pytest.fixture
def worker(redis_required, tmp_path):
    """A worker on a queue of its own, so no other worker on this Redis can take the task."""
    with worker_pool(None, tmp_path) as pool:
        pool.start()
        yield pool.queue, tmp_path / "worker0.log"


@pytest.mark.worker
def test_health_task_round_trips_through_a_real_worker(worker):
    queue, log = worker
    result = health.apply_async(queue=queue)
    assert not isinstance(result, EagerResult)
    assert result.get(timeout=90) == "ok"
    assert "concord.health" in log.read_text()
