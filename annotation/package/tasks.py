"""Celery task of the replication package: ids in, one service call, safe to run twice.
annotation.tasks sweeps its stale jobs."""

from celery import shared_task


@shared_task(name="annotation.tasks.package_import_run", acks_late=True)
def package_import_run(job_id: int) -> None:
    """Import an uploaded replication package (all or nothing)."""
    from annotation.package.jobs import package_import_run as run

    run(job_id=job_id)
