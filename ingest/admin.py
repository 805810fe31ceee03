from django.contrib import admin

from ingest.models import Issue


@admin.register(Issue)
class IssueAdmin(admin.ModelAdmin):
    list_display = ("__str__", "host", "title", "state", "created_at", "fetched_at")
    list_filter = ("host", "state", "is_pull_request", "owner", "repo")
    search_fields = ("url", "title", "number", "owner", "repo")
    date_hierarchy = "created_at"
