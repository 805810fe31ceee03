from django.contrib.auth.base_user import AbstractBaseUser
from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from concord.errors import ConcordError
from ingest.models import HarvestRun, Host, KeywordSet, Source
from ingest.selectors import run_progress
from ingest.sources import repository_check, repository_parse


class SourceSerializer(serializers.ModelSerializer):
    repository = serializers.CharField(help_text="owner/repo, e.g. NVIDIA/Megatron-LM.")
    token = serializers.CharField(
        write_only=True,
        required=False,
        allow_blank=True,
        max_length=200,
        style={"input_type": "password"},
        help_text="API token; never returned. Empty uses GITHUB_TOKEN / GITEE_TOKEN.",
    )
    has_token = serializers.SerializerMethodField()
    last_run = serializers.SerializerMethodField()

    class Meta:
        model = Source
        fields = [
            "id",
            "host",
            "repository",
            "owner",
            "repo",
            "created_from",
            "created_until",
            "time_zone",
            "renamed_from",
            "token",
            "has_token",
            "keyword_set",
            "last_run",
            "created_at",
        ]
        read_only_fields = ["owner", "repo", "renamed_from", "created_at"]
        extra_kwargs = {
            "time_zone": {
                "required": False,
                "allow_blank": True,
                "help_text": "IANA zone whose days the window's dates are; empty or left out: "
                "the host's own (UTC for GitHub, Asia/Shanghai for Gitee).",
            }
        }
        # The pair is checked by the service, with a message; DRF's own validator would not say
        # which window collides.
        validators: list[object] = []

    def get_has_token(self, source: Source) -> bool:
        return bool(source.token)

    @extend_schema_field(serializers.IntegerField(allow_null=True))
    def get_last_run(self, source: Source) -> int | None:
        if hasattr(source, "last_run_id"):  # annotated by sources_overview()
            return source.last_run_id
        return source.runs.values_list("pk", flat=True).first()

    def validate_repository(self, value: str) -> str:
        try:
            repository_parse(value)
        except ConcordError as exc:
            raise serializers.ValidationError(exc.message) from exc
        return value.strip()

    def validate(self, attrs: dict) -> dict:
        if "repository" in attrs and "host" in attrs:
            try:
                repository_check(attrs["host"], *repository_parse(attrs["repository"]))
            except ConcordError as exc:
                raise serializers.ValidationError({"repository": exc.message}) from exc
        if attrs["created_from"] > attrs["created_until"]:
            raise serializers.ValidationError(
                {"created_until": "The window must not end before it starts."}
            )
        return attrs


class HarvestRunSerializer(serializers.ModelSerializer):
    """A run and its progress; the progress page polls this."""

    source_name = serializers.CharField(source="source.__str__", read_only=True)
    host = serializers.ChoiceField(source="source.host", choices=Host.choices, read_only=True)
    status_label = serializers.CharField(source="get_status_display", read_only=True)
    is_active = serializers.BooleanField(read_only=True)
    started_by: serializers.SlugRelatedField[AbstractBaseUser] = serializers.SlugRelatedField(
        slug_field="username", read_only=True
    )
    progress = serializers.SerializerMethodField()

    class Meta:
        model = HarvestRun
        fields = [
            "id",
            "source",
            "source_name",
            "host",
            "status",
            "status_label",
            "is_active",
            "issues_fetched",
            "comments_fetched",
            "pages",
            "requests",
            "pull_requests_skipped",
            "pages_unchanged",
            "rate_remaining",
            "rate_reset_at",
            "waiting_until",
            "wait_reason",
            "error",
            "cancel_requested",
            "started_by",
            "created_at",
            "heartbeat_at",
            "finished_at",
            "progress",
        ]
        read_only_fields = fields

    @extend_schema_field(
        {
            "type": "object",
            "properties": {
                "phase": {"type": "string", "enum": ["issues", "comments", "done"]},
                "fraction": {"type": "number", "minimum": 0, "maximum": 1},
                "step": {"type": "string"},
                "rate_limit": {"type": "string"},
            },
            "required": ["phase", "fraction", "step", "rate_limit"],
        }
    )
    def get_progress(self, run: HarvestRun) -> dict:
        return run_progress(run)


class KeywordSetSerializer(serializers.ModelSerializer):
    keywords = serializers.ListField(
        child=serializers.CharField(max_length=200),
        allow_empty=False,
        help_text="Words or phrases, matched case-insensitively as whole words.",
    )
    sources: serializers.PrimaryKeyRelatedField[Source] = serializers.PrimaryKeyRelatedField(
        many=True, read_only=True
    )

    class Meta:
        model = KeywordSet
        fields = ["id", "name", "description", "keywords", "sources"]


class BadLineOut(serializers.Serializer):
    line = serializers.IntegerField()
    message = serializers.CharField()


class FileOrTextIn(serializers.Serializer):
    """A file sent either as `file` (multipart) or as its `text`, exactly one of them; `name`
    names it in error locations. Subclasses declare `file` and `text` with their own help."""

    name = serializers.CharField(
        required=False, max_length=200, help_text="Shown in error locations; the file name."
    )

    def validate(self, attrs: dict) -> dict:
        if bool(attrs.get("text")) == bool(attrs.get("file")):
            raise serializers.ValidationError("Send either `text` or `file` (one of them).")
        return attrs


class UrlListIn(FileOrTextIn):
    text = serializers.CharField(
        required=False, allow_blank=True, trim_whitespace=False, help_text="One URL per line."
    )
    file = serializers.FileField(required=False, help_text="An issue-lists/*.txt file.")


class UrlListReportOut(serializers.Serializer):
    name = serializers.CharField()
    lines = serializers.IntegerField(help_text="Non-blank, non-comment lines read.")
    created = serializers.IntegerField()
    already_known = serializers.IntegerField()
    duplicates = serializers.IntegerField(help_text="Lines repeating an earlier URL.")
    issue_ids = serializers.ListField(child=serializers.IntegerField())
    # DRF's metaclass takes declared fields off the class; the stubs see `Serializer.errors`.
    errors = BadLineOut(many=True)  # type: ignore[assignment]
