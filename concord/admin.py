from django.contrib import admin

from concord.models import PersonSettings
from concord.person_settings import single_keys_set


@admin.register(PersonSettings)
class PersonSettingsAdmin(admin.ModelAdmin):
    list_display = ("user", "single_key_shortcuts")
    list_filter = ("single_key_shortcuts",)
    list_select_related = ("user",)
    search_fields = ("user__username",)
    raw_id_fields = ("user",)

    def save_model(self, request, obj, form, change) -> None:
        # Through the service, so the cached switch the pages read changes with the row.
        single_keys_set(user=obj.user, on=obj.single_key_shortcuts)
