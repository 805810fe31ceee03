from django.contrib import admin

from annotation.models import Annotation, Item, Membership, Project, Resolution


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
