"""The row every background job keeps (who asked, status, heartbeat), shared by the apps that
queue jobs: annotation's exports and imports, taxonomy's interview imports. Claiming, beating and
the stale sweep are annotation.jobs'."""

from django.conf import settings
from django.db import models
from django.utils.translation import gettext_lazy as _


class JobStatus(models.TextChoices):
    QUEUED = "queued", _("Queued")
    RUNNING = "running", _("Running")
    DONE = "done", _("Done")
    FAILED = "failed", _("Failed")


class BackgroundJob(models.Model):
    """A job a Celery worker does, with its row: who asked, its status, and a heartbeat the
    worker beats, so the stale-job sweep can send again what nobody works on
    (annotation.jobs)."""

    requested_by = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="+",
    )
    status = models.CharField(max_length=10, choices=JobStatus.choices, default=JobStatus.QUEUED)
    created_at = models.DateTimeField(auto_now_add=True)
    started_at = models.DateTimeField(null=True, blank=True)
    heartbeat_at = models.DateTimeField(
        null=True, blank=True, help_text="Last sign of life from the worker doing the job."
    )
    finished_at = models.DateTimeField(null=True, blank=True)
    language = models.CharField(
        max_length=15,
        default=settings.LANGUAGE_CODE,
        help_text="The interface language the job was queued in; its worker writes the job's"
        " errors and report in it (annotation.jobs.in_job_language).",
    )

    class Meta:
        abstract = True
        ordering = ["-created_at", "-pk"]

    @property
    def is_active(self) -> bool:
        return self.status in (JobStatus.QUEUED, JobStatus.RUNNING)
