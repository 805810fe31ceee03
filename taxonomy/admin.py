from django.contrib import admin

from taxonomy.models import Example, Node, Taxonomy


@admin.register(Taxonomy)
class TaxonomyAdmin(admin.ModelAdmin):
    list_display = ("name", "version", "created_at")
    search_fields = ("name",)


class ExampleInline(admin.TabularInline):
    model = Example
    extra = 0


@admin.register(Node)
class NodeAdmin(admin.ModelAdmin):
    list_display = ("code", "name", "level", "parent", "taxonomy", "retired_at")
    list_filter = ("taxonomy", "level", "retired_at")
    search_fields = ("code", "name", "study_name", "definition")
    list_select_related = ("parent", "taxonomy")
    autocomplete_fields = ("parent",)
    inlines = [ExampleInline]


@admin.register(Example)
class ExampleAdmin(admin.ModelAdmin):
    list_display = ("text", "kind", "node")
    list_filter = ("kind", "node__taxonomy")
    search_fields = ("text", "node__code", "node__name")
    list_select_related = ("node",)
    autocomplete_fields = ("node",)
