"""The concord app: what every feature's models and queries share (the any_of lookup)."""

from django.apps import AppConfig
from django.db.models import Field, ForeignObject


class ConcordConfig(AppConfig):
    name = "concord"

    def ready(self) -> None:
        from concord.db import AnyOf

        # Foreign keys keep lookups of their own (they stop at ForeignObject, not Field).
        for field_class in (Field, ForeignObject):
            field_class.register_lookup(AnyOf)
