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
