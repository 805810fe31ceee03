from rest_framework import serializers

from annotation.models import Project
from annotation.projects.settings import SETTINGS_FIELDS


class ProjectSettingsIn(serializers.ModelSerializer):
    """A project's settings; on PATCH any subset."""

    class Meta:
        model = Project
        fields = list(SETTINGS_FIELDS)
        extra_kwargs = {"overlap_k": {"min_value": 1}}


class ProjectOut(serializers.ModelSerializer):
    archived = serializers.SerializerMethodField()

    class Meta:
        model = Project
        fields = ["id", *SETTINGS_FIELDS, "pilot_status", "created_at", "archived", "archived_at"]

    def get_archived(self, project: Project) -> bool:
        return project.archived_at is not None


class ArchiveIn(serializers.Serializer):
    archived = serializers.BooleanField(help_text="True archives the project, false restores it.")
