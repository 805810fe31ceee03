from celery import shared_task


@shared_task(name="concord.health")
def health() -> str:
    """Round trip through the broker and a worker.

    `manage.py` and tests use it as a liveness probe."""
    return "ok"
