from rest_framework import serializers

from annotation.jobs import JobProgressOut
from annotation.models import Project, Role
from annotation.projects.members import BULK_MAX_LINES, INVITATION_MAX_DAYS, Outcome
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
        return project.is_archived


class ArchiveIn(serializers.Serializer):
    archived = serializers.BooleanField(help_text="True archives the project, false restores it.")


class MemberOut(serializers.Serializer):
    id = serializers.IntegerField()
    username = serializers.CharField(source="user.username")
    email = serializers.CharField(source="user.email")
    role = serializers.ChoiceField(choices=Role.choices)
    column = serializers.IntegerField(allow_null=True, help_text="N of LabelN in study files.")


class MembersIn(serializers.Serializer):
    people = serializers.ListField(
        child=serializers.CharField(max_length=254),
        max_length=BULK_MAX_LINES,
        help_text="Usernames or e-mail addresses.",
    )
    role = serializers.ChoiceField(choices=Role.choices, default=Role.VOLUNTEER)


class AddedOut(serializers.Serializer):
    """One listed name: created, already a member, or not created (an account outside the
    project has the name; invite that person instead). Nothing about such an account is told."""

    username = serializers.CharField(help_text="As listed.")
    email = serializers.CharField(help_text="The new account's e-mail as listed; empty otherwise.")
    password = serializers.CharField(
        allow_null=True, help_text="Initial password of a new account, shown only here."
    )
    outcome = serializers.ChoiceField(choices=[o.value for o in Outcome])
    already_member = serializers.BooleanField()


class MemberChangeIn(serializers.Serializer):
    role = serializers.ChoiceField(choices=Role.choices, required=False)
    column = serializers.IntegerField(min_value=1, max_value=999, allow_null=True, required=False)


class InvitationIn(serializers.Serializer):
    role = serializers.ChoiceField(choices=Role.choices, default=Role.VOLUNTEER)
    days = serializers.IntegerField(min_value=1, max_value=INVITATION_MAX_DAYS, default=7)


class InvitationOut(serializers.Serializer):
    url = serializers.CharField(help_text="The one-time link; it is not stored, shown only here.")
    role = serializers.ChoiceField(choices=Role.choices)
    expires_at = serializers.DateTimeField()


class LabelFilesIn(serializers.Serializer):
    files = serializers.ListField(
        child=serializers.FileField(), help_text="Study label files (multipart, repeat the field)."
    )
    refuse_repeats = serializers.BooleanField(default=False)


class LabelImportOut(serializers.Serializer):
    id = serializers.IntegerField()
    status = serializers.CharField()
    is_active = serializers.BooleanField()
    refuse_repeats = serializers.BooleanField()
    files = serializers.ListField(child=serializers.DictField(), help_text="[{name, stored}]")
    files_done = serializers.IntegerField()
    report = serializers.ListField(
        child=serializers.DictField(),
        help_text="Per file: name, ok, and rows/items_created/annotations_created/"
        "resolutions_created/repeats [{line, first_line, labels_differ}], or errors "
        "[{line, column, message}].",
    )
    error = serializers.CharField()
    progress = JobProgressOut()
    created_at = serializers.DateTimeField()
    finished_at = serializers.DateTimeField(allow_null=True)
