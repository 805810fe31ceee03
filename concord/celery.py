"""The Celery app. With no REDIS_URL, settings make every task run eagerly in-process."""

import os

from celery import Celery

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "concord.settings")
# Celery runs Django's system checks as a worker starts, and the URL checks import the URLconf:
# every view, API and template tag module, which a worker never serves. Each worker child then
# started at 99 MiB instead of 71 (the parent 120 instead of 84), and a 10x duplicate index build
# ran 28 MiB closer to its 300 MB (issue 31). The checks still run where a deploy meets them:
# `manage.py migrate` (docker-compose's migrate service) and `manage.py check`.
os.environ.setdefault("CELERY_SKIP_CHECKS", "1")

app = Celery("concord")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()


# Tasks that talk to a tracker: a harvest's pages and the detail fetches of issues imported by
# URL. The study's URL lists alone are 388 fetches of a minute or more each (hours at GitHub's
# rate limit); on one queue they held every export, import and rebuild queued after them. They
# go to a queue of their own, which every worker consumes beside the default one (`--queues
# concord,concord-tracker`): a worker takes from its queues in turn, so a lead's job waits for one
# fetch, not for all of them.
TRACKER_TASKS = frozenset({"ingest.tasks.harvest_continue", "ingest.tasks.issues_fetch_details"})


def tracker_queue(default_queue: str) -> str:
    """The tracker queue beside `default_queue` (CELERY_QUEUE)."""
    return f"{default_queue}-tracker"


def route(name: str, args, kwargs, options, task=None, **extra) -> dict | None:
    """CELERY_TASK_ROUTES: tracker tasks to the tracker queue, the rest to the default one (read
    when the task is sent: tests switch the default queue while they run)."""
    if name in TRACKER_TASKS:
        return {"queue": tracker_queue(app.conf.CELERY_TASK_DEFAULT_QUEUE)}
    return None
