"""Real Celery worker processes for tests: bound to the test's database, a queue of the test's own
and the fake forge, so no other worker on this Redis takes their tasks."""

import os
import subprocess
import sys
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import timedelta
from pathlib import Path

from django.conf import settings
from django.utils import timezone

from concord import celery_app
from concord.celery import tracker_queue
from tests.stack import shared_database_url

ROOT = Path(__file__).resolve().parents[1]


class Workers:
    """Start and kill worker processes bound to this test's database, queue and (if given) fake
    forge."""

    def __init__(self, forge, queue: str, logs: Path, env: dict | None = None):
        self.env = {
            **os.environ,
            "CELERY_QUEUE": queue,
            "SECRET_KEY": settings.SECRET_KEY,
            "CONCORD_VAR_DIR": str(settings.VAR_DIR),  # where the test expects export files
            "HARVEST_PAGES_PER_TASK": "3",
            "JOB_STALE_SECONDS": "2",
            "JOB_SWEEP_SECONDS": "1",
            "HARVEST_BACKOFF_SECONDS": "0.01",
            **(env or {}),
        }
        if database := shared_database_url():
            self.env["DATABASE_URL"] = database
        if forge is not None:
            self.env["GITHUB_API_URL"] = forge.github_api
        self.queue, self.logs, self.processes = queue, logs, []

    def start(self, *, beat: bool = False) -> subprocess.Popen:
        """A worker process; with `beat`, it also runs the beat schedule (the stale-job sweeps
        every JOB_SWEEP_SECONDS)."""
        log = (self.logs / f"worker{len(self.processes)}.log").open("w")
        schedule = ["--beat", "--schedule", str(self.logs / "beat-schedule")] if beat else []
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
                f"{self.queue},{tracker_queue(self.queue)}",
                "--loglevel",
                "INFO",
                "--without-gossip",
                "--without-mingle",
                *schedule,
            ],
            cwd=ROOT,
            env=self.env,
            stdout=log,
            stderr=subprocess.STDOUT,
        )
        self.processes.append(process)
        return process

    def make_stale(self, rows, *fields: str) -> int:
        """Set `fields` of `rows` (a queryset) further in the past than the workers'
        JOB_STALE_SECONDS, as if a killed worker had been silent that long: the stale-job sweeps
        then see the job as abandoned, with no sleeping in the test. The workers use this
        database, so they see it too."""
        past = timezone.now() - timedelta(seconds=float(self.env["JOB_STALE_SECONDS"]) + 1)
        return rows.update(**dict.fromkeys(fields, past))

    def stop_all(self):
        for process in self.processes:
            if process.poll() is None:
                process.terminate()
                process.wait(timeout=30)


@contextmanager
def worker_pool(forge, logs: Path, env: dict | None = None) -> Iterator[Workers]:
    """Workers on a fresh queue; tasks this process sends go to that queue while it is open.
    `env` adds to or overrides the workers' environment (e.g. another Redis)."""
    queue = f"concord-test-{uuid.uuid4().hex[:8]}"
    # The app reads Django settings under the CELERY_ namespace: that key is the one `delay` sees
    # (`conf.task_default_queue` would be silently ignored).
    previous = celery_app.conf.CELERY_TASK_DEFAULT_QUEUE
    celery_app.conf.CELERY_TASK_DEFAULT_QUEUE = queue
    pool = Workers(forge, queue, logs, env)
    try:
        yield pool
    finally:
        pool.stop_all()
        celery_app.conf.CELERY_TASK_DEFAULT_QUEUE = previous
