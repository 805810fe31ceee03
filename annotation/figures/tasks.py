"""Celery task of the agreement figures: the tallies' rebuild that an import job queues as it
ends (annotation.figures.tallies.figures_rebuild_queue says why a task of its own)."""

from celery import shared_task


@shared_task(name="annotation.tasks.figures_rebuild", acks_late=True)
def figures_rebuild(project_id: int) -> None:
    """Rebuild the project's tallies if they are stale; a rerun finds them built and only reads
    them."""
    from annotation.figures.tallies import figures_rebuilt_after_import
    from annotation.models import Project

    project = Project.objects.filter(pk=project_id).select_related("taxonomy").first()
    if project is not None:  # deleted since
        figures_rebuilt_after_import(project)
