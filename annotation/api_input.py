"""Input checking and output shaping shared by the API modules of every feature package."""

from __future__ import annotations

import functools

from rest_framework.exceptions import ValidationError
from rest_framework.serializers import as_serializer_error


def validated(serializer_class, data) -> dict:
    """`data` checked by `serializer_class`; a bad field is a 400 in the API's error shape.

    As `serializer_class(data=data).is_valid(raise_exception=True)` does it, errors included, but
    through the instance kept per class (see represented): validating reads the bound fields and
    keeps nothing on the serializer. Only for serializers that need no context."""
    try:
        return _bound(serializer_class).run_validation(data)
    except ValidationError as exc:
        raise ValidationError(as_serializer_error(exc)) from None


def represented(serializer_class, instance) -> dict:
    """`serializer_class(instance).data`, through one instance of the serializer kept per class.

    DRF deep-copies a serializer's declared fields, nested serializers included, each time one is
    made: for the item payload that copying cost more than the rest of its shaping (issue #16).
    Representing reads the bound fields and keeps nothing, so one instance serves every request
    and thread. Only for serializers that need no context (no request, no view)."""
    return _bound(serializer_class).to_representation(instance)


@functools.cache
def _bound(serializer_class):
    serializer = serializer_class()
    serializer.fields  # noqa: B018 - bind the fields once, before threads share the instance
    return serializer
