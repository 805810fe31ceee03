"""What belongs to a person rather than to a project: their own settings, kept on the server so
they follow the person to every browser and device (the interface language stays a cookie, the
browser's own choice)."""

from __future__ import annotations

from django.conf import settings
from django.db import models


class PersonSettings(models.Model):
    """One person's settings; a person without a row has the defaults."""

    user = models.OneToOneField(
        settings.AUTH_USER_MODEL,
        on_delete=models.CASCADE,
        related_name="person_settings",
        help_text="The person these settings are for.",
    )
    single_key_shortcuts = models.BooleanField(
        default=True,
        help_text=(
            "Keys without a modifier (digits, letters, / and ?) act as shortcuts on the "
            "labeling, screening and lead pages. Off (WCAG 2.1.4), they do nothing there: "
            "dictated words or stray keys cannot choose, skip or decide."
        ),
    )

    class Meta:
        verbose_name = "person's settings"
        verbose_name_plural = "people's settings"

    def __str__(self) -> str:
        return f"settings of user {self.user_id}"
