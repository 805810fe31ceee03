from django.contrib import admin
from django.db import models

from ingest.models import (
    Comment,
    HarvestRun,
    Issue,
    KeywordMatch,
    KeywordSet,
    PageValidator,
    Source,
)


class CommentInline(admin.TabularInline):
    model = Comment
    extra = 0
    fields = ("comment_id", "author", "created_at", "body")
    readonly_fields = fields
    can_delete = False


@admin.register(Issue)
class IssueAdmin(admin.ModelAdmin):
    list_display = ("__str__", "host", "title", "state", "created_at", "fetched_at")
    list_filter = ("host", "state", "is_pull_request", "owner", "repo")
    search_fields = ("url", "title", "number", "owner", "repo")
    date_hierarchy = "created_at"
    list_select_related = ("source",)
    raw_id_fields = ("source",)
    formfield_overrides = {models.URLField: {"assume_scheme": "https"}}  # trackers are HTTPS
    inlines = [CommentInline]


@admin.register(Comment)
class CommentAdmin(admin.ModelAdmin):
    list_display = ("comment_id", "host", "issue", "author", "created_at")
    list_filter = ("host",)
    search_fields = ("body", "author", "issue__url")
    list_select_related = ("issue",)
    autocomplete_fields = ("issue",)


@admin.register(KeywordSet)
class KeywordSetAdmin(admin.ModelAdmin):
    list_display = ("name", "description")
    search_fields = ("name",)


@admin.register(KeywordMatch)
class KeywordMatchAdmin(admin.ModelAdmin):
    list_display = ("issue", "keyword_set", "keywords")
    list_filter = ("keyword_set",)
    search_fields = ("issue__url", "issue__title")
    list_select_related = ("issue", "keyword_set")
    autocomplete_fields = ("issue",)


@admin.register(Source)
class SourceAdmin(admin.ModelAdmin):
    list_display = (
        "__str__",
        "host",
        "owner",
        "repo",
        "created_from",
        "created_until",
        "time_zone",
        "renamed_from",
        "keyword_set",
    )
    list_filter = ("host", "keyword_set")
    search_fields = ("owner", "repo")


@admin.register(HarvestRun)
class HarvestRunAdmin(admin.ModelAdmin):
    list_display = (
        "pk",
        "source",
        "status",
        "pages",
        "issues_fetched",
        "comments_fetched",
        "created_at",
    )
    list_filter = ("status",)
    search_fields = ("source__owner", "source__repo")
    list_select_related = ("source",)
    readonly_fields = ("cursor",)


@admin.register(PageValidator)
class PageValidatorAdmin(admin.ModelAdmin):
    """What the last harvest saw per page URL (ETag, next link); delete to force a full refetch."""

    list_display = ("source", "url", "etag", "ends_phase")
    list_filter = ("source",)
    search_fields = ("url", "etag")
    list_select_related = ("source",)
