"""The Celery app. With no REDIS_URL, settings make every task run eagerly in-process."""

import os

from celery import Celery

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "concord.settings")

app = Celery("concord")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()
app.autodiscover_tasks(["annotation.projects"])  # issue 14: label-file imports
