"""Celery tasks of the project feature (item imports, label-file imports): ids in, one service
call, safe to run twice. annotation.tasks sweeps their stale jobs."""

from celery import shared_task


@shared_task(name="annotation.tasks.item_import_run", acks_late=True)
def item_import_run(job_id: int) -> None:
    """Check and write an item import. A redelivered task starts it again (its writes are
    upserts); a finished job is left as it is."""
    from annotation.projects.item_imports import item_import_run as run

    run(job_id=job_id)


@shared_task(name="annotation.tasks.label_import_run", acks_late=True)
def label_import_run(job_id: int) -> None:
    """Import an upload's study label files; a redelivered task starts again from the first
    file, which changes nothing for files already in."""
    from annotation.projects.label_imports import label_import_run as run

    run(job_id=job_id)
