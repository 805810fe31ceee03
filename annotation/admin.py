from django.contrib import admin

from annotation.models import (
    Annotation,
    AuditEvent,
    DuplicateIndex,
    DuplicatePair,
    ExportJob,
    FigureState,
    FigureTally,
    Invitation,
    Item,
    ItemImport,
    LabelImportJob,
    Membership,
    MergedRepeat,
    NotDuplicate,
    PackageFile,
    PackageImport,
    PackageLine,
    Post,
    Project,
    ProjectNode,
    Proposal,
    ProposalVote,
    Reservation,
    Resolution,
    ScreeningVote,
    Skip,
)


class MembershipInline(admin.TabularInline):
    model = Membership
    extra = 0
    autocomplete_fields = ("user",)


@admin.register(Project)
class ProjectAdmin(admin.ModelAdmin):
    list_display = ("name", "slug", "taxonomy", "overlap_k", "label_depth", "created_at")
    search_fields = ("name", "slug")
    prepopulated_fields = {"slug": ("name",)}
    inlines = [MembershipInline]


@admin.register(Membership)
class MembershipAdmin(admin.ModelAdmin):
    list_display = ("user", "project", "role", "column")
    list_filter = ("role", "project")
    search_fields = ("user__username", "user__first_name", "user__last_name", "project__slug")
    list_select_related = ("user", "project")
    autocomplete_fields = ("user", "project")


@admin.register(Item)
class ItemAdmin(admin.ModelAdmin):
    list_display = ("issue", "project", "stage", "label_count", "created_at")
    list_filter = ("project", "stage")
    search_fields = ("issue__url", "issue__title")
    list_select_related = ("issue", "project")
    autocomplete_fields = ("issue", "project")


@admin.register(Annotation)
class AnnotationAdmin(admin.ModelAdmin):
    list_display = ("item", "volunteer", "node", "summary", "updated_at")
    list_filter = ("item__project", "node__level")
    search_fields = ("item__issue__url", "volunteer__username", "node__code", "summary")
    list_select_related = ("item__issue", "item__project", "volunteer", "node")
    autocomplete_fields = ("item", "volunteer", "node")


@admin.register(Resolution)
class ResolutionAdmin(admin.ModelAdmin):
    list_display = ("item", "node", "method", "resolver", "created_at")
    list_filter = ("method", "item__project")
    search_fields = ("item__issue__url", "node__code", "reason")
    list_select_related = ("item__issue", "item__project", "node", "resolver")
    autocomplete_fields = ("item", "node", "resolver")


@admin.register(Reservation)
class ReservationAdmin(admin.ModelAdmin):
    list_display = ("item", "volunteer", "created_at", "expires_at")
    list_filter = ("item__project",)
    search_fields = ("item__issue__url", "volunteer__username")
    list_select_related = ("item__issue", "volunteer")
    autocomplete_fields = ("item", "volunteer")


@admin.register(Skip)
class SkipAdmin(admin.ModelAdmin):
    list_display = ("item", "volunteer", "reason", "created_at")
    list_filter = ("item__project",)
    search_fields = ("item__issue__url", "volunteer__username", "reason")
    list_select_related = ("item__issue", "volunteer")
    autocomplete_fields = ("item", "volunteer")


@admin.register(ScreeningVote)
class ScreeningVoteAdmin(admin.ModelAdmin):
    list_display = ("item", "volunteer", "relevant", "reason", "created_at")
    list_filter = ("relevant", "item__project")
    search_fields = ("item__issue__url", "volunteer__username", "reason")
    list_select_related = ("item__issue", "volunteer")
    autocomplete_fields = ("item", "volunteer")


@admin.register(Post)
class PostAdmin(admin.ModelAdmin):
    list_display = ("item", "author", "created_at")
    list_filter = ("item__project",)
    search_fields = ("item__issue__url", "author__username", "text")
    list_select_related = ("item__issue", "author")
    autocomplete_fields = ("item", "author")


class ProposalVoteInline(admin.TabularInline):
    model = ProposalVote
    extra = 0
    autocomplete_fields = ("member",)


@admin.register(Proposal)
class ProposalAdmin(admin.ModelAdmin):
    list_display = ("name", "project", "parent", "proposer", "status", "node", "created_at")
    list_filter = ("status", "project")
    search_fields = ("name", "definition", "reason", "proposer__username")
    list_select_related = ("project", "parent", "proposer", "node")
    autocomplete_fields = ("proposer", "parent", "node", "items")
    inlines = [ProposalVoteInline]


@admin.register(AuditEvent)
class AuditEventAdmin(admin.ModelAdmin):
    """Read-only: the trail is written by the services, never edited by hand."""

    list_display = ("created_at", "project", "item", "actor", "action")
    list_filter = ("action", "project")
    search_fields = ("item__issue__url", "actor__username")
    list_select_related = ("project", "item__issue", "actor")

    def has_add_permission(self, request) -> bool:
        return False

    def has_change_permission(self, request, obj=None) -> bool:
        return False

    def has_delete_permission(self, request, obj=None) -> bool:
        return False


@admin.register(ExportJob)
class ExportJobAdmin(admin.ModelAdmin):
    list_display = (
        "pk",
        "project",
        "format",
        "status",
        "rows_written",
        "requested_by",
        "created_at",
    )
    list_filter = ("status", "format", "project")
    search_fields = ("project__slug", "requested_by__username", "error")
    list_select_related = ("project", "requested_by")
    readonly_fields = ("file", "rows_written", "rows_total", "started_at", "finished_at", "error")


@admin.register(ItemImport)
class ItemImportAdmin(admin.ModelAdmin):
    list_display = ("pk", "project", "name", "status", "items_added", "requested_by", "created_at")
    list_filter = ("status", "project")
    search_fields = ("project__slug", "name", "requested_by__username", "error")
    list_select_related = ("project", "requested_by")
    readonly_fields = (
        "file",
        "records_total",
        "records_checked",
        "issues_created",
        "items_added",
        "started_at",
        "finished_at",
        "error",
        "problems",
    )


@admin.register(ProposalVote)
class ProposalVoteAdmin(admin.ModelAdmin):
    list_display = ("proposal", "member", "approve", "created_at")
    list_filter = ("approve", "proposal__project")
    search_fields = ("proposal__name", "member__username")
    list_select_related = ("proposal", "member")
    autocomplete_fields = ("proposal", "member")


@admin.register(ProjectNode)
class ProjectNodeAdmin(admin.ModelAdmin):
    """Which project a node added through a proposal belongs to; delete a row to share the node
    with every project of its taxonomy."""

    list_display = ("node", "project", "proposal", "created_at")
    list_filter = ("project",)
    search_fields = ("node__code", "node__name", "project__slug", "proposal__name")
    list_select_related = ("node", "project", "proposal")
    autocomplete_fields = ("project", "node", "proposal")


# ---------------------------------------------------------------- issue 14: study setup


@admin.register(MergedRepeat)
class MergedRepeatAdmin(admin.ModelAdmin):
    list_display = ("file", "line", "first_line", "labels_differ", "project", "created_at")
    list_filter = ("labels_differ", "project")
    search_fields = ("file", "project__slug")
    list_select_related = ("project",)
    autocomplete_fields = ("item",)


@admin.register(Invitation)
class InvitationAdmin(admin.ModelAdmin):
    """Only the token's hash is stored: a link cannot be read back here."""

    list_display = ("pk", "project", "role", "created_by", "expires_at", "used_at", "used_by")
    list_filter = ("role", "project")
    search_fields = ("project__slug", "created_by__username", "used_by__username")
    list_select_related = ("project", "created_by", "used_by")
    readonly_fields = ("token_hash", "used_at", "used_by")


@admin.register(LabelImportJob)
class LabelImportJobAdmin(admin.ModelAdmin):
    list_display = ("pk", "project", "status", "files_done", "requested_by", "created_at")
    list_filter = ("status", "project")
    search_fields = ("project__slug", "requested_by__username", "error")
    list_select_related = ("project", "requested_by")
    readonly_fields = ("files", "report", "files_done", "started_at", "heartbeat_at", "error")


# ---------------------------------------------------------------- issue 28: replication package


@admin.register(PackageImport)
class PackageImportAdmin(admin.ModelAdmin):
    list_display = ("pk", "project", "name", "status", "requested_by", "created_at")
    list_filter = ("status", "project")
    search_fields = ("project__slug", "name", "requested_by__username", "error")
    list_select_related = ("project", "requested_by")
    readonly_fields = ("file", "report", "started_at", "heartbeat_at", "finished_at", "error")


@admin.register(PackageFile)
class PackageFileAdmin(admin.ModelAdmin):
    """What a package's file needs to come out byte for byte (BOM, line ending, last newline)."""

    list_display = ("path", "kind", "project", "bom", "newline")
    list_filter = ("kind", "project")
    search_fields = ("path", "project__slug")
    list_select_related = ("project",)


@admin.register(PackageLine)
class PackageLineAdmin(admin.ModelAdmin):
    list_display = ("file", "position", "item", "repeat")
    list_filter = ("repeat", "file__project")
    search_fields = ("file__path",)
    list_select_related = ("file", "item")
    raw_id_fields = ("file", "item")


# ---------------------------------------------------------------- issue 29: near-duplicates


@admin.register(DuplicateIndex)
class DuplicateIndexAdmin(admin.ModelAdmin):
    list_display = ("pk", "project", "status", "threshold", "items_indexed", "pairs_found")
    list_filter = ("status", "project")
    search_fields = ("project__slug",)
    list_select_related = ("project",)


@admin.register(DuplicatePair)
class DuplicatePairAdmin(admin.ModelAdmin):
    list_display = ("project", "item_a", "item_b", "similarity", "at_intake")
    list_filter = ("at_intake", "project")
    search_fields = ("project__slug",)
    list_select_related = ("project", "item_a", "item_b")
    raw_id_fields = ("item_a", "item_b")


@admin.register(NotDuplicate)
class NotDuplicateAdmin(admin.ModelAdmin):
    """A lead's "not a duplicate": every rebuild of the index keeps it."""

    list_display = ("project", "item_a", "item_b", "decided_by", "created_at")
    list_filter = ("project",)
    search_fields = ("project__slug", "decided_by__username")
    list_select_related = ("project", "item_a", "item_b", "decided_by")
    raw_id_fields = ("item_a", "item_b", "decided_by")


class FiguresAdmin(admin.ModelAdmin):
    """The agreement figures' tallies (annotation.figures.tallies), kept by the services: to
    look at, not to edit. Deleting a project's FigureState makes its next read rebuild them."""

    list_filter = ("project",)

    def has_add_permission(self, request) -> bool:
        return False

    def has_change_permission(self, request, obj=None) -> bool:
        return False


@admin.register(FigureState)
class FigureStateAdmin(FiguresAdmin):
    list_display = ("project", "generation", "built")


@admin.register(FigureTally)
class FigureTallyAdmin(FiguresAdmin):
    list_display = ("project", "id")

    def has_delete_permission(self, request, obj=None) -> bool:
        return False
