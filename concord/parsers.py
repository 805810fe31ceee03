"""The API's request parsers (REST_FRAMEWORK DEFAULT_PARSER_CLASSES): DRF's JSON, form and
multipart parsers with a size cap and the input checks of concord.input_checks.

DRF reads request bodies itself, so Django's DATA_UPLOAD_MAX_MEMORY_SIZE never applied to the
API: a 50 MB JSON body was parsed whole before a serializer refused it, and JSON nested a few
thousand levels deep failed with a RecursionError (a 500). Now a body over API_MAX_BODY_BYTES is
refused (413) before it is read; a view may allow more with a `max_body_bytes` attribute (the
URL-list import does). Parsed JSON nested deeper than API_MAX_JSON_DEPTH, or holding a NUL or a
lone surrogate anywhere (PostgreSQL stores neither, not even inside a JSON column), is a 400 that
names the member.
"""

from __future__ import annotations

import io

from django.conf import settings
from rest_framework import parsers
from rest_framework.exceptions import ParseError

from concord.errors import TooLarge
from concord.input_checks import body_size_check, first_bad_field, json_problem


class SettingCap:
    """A view's `max_body_bytes` from a setting, read each time it is asked for (on the class,
    as the middleware asks, or on the view), so it follows the setting as configured now."""

    def __init__(self, name: str, times: int = 1) -> None:
        self.name, self.times = name, times

    def __get__(self, view, owner=None) -> int:
        return self.times * int(getattr(settings, self.name))


def body_cap(parser_context: dict | None) -> int:
    """The most bytes this request's view takes: its `max_body_bytes`, else API_MAX_BODY_BYTES."""
    view = (parser_context or {}).get("view")
    return getattr(view, "max_body_bytes", None) or settings.API_MAX_BODY_BYTES


def refuse_declared_size(parser_context: dict | None, cap: int) -> None:
    request = (parser_context or {}).get("request")
    if request is not None:
        body_size_check(request.META, cap)


class JSONParser(parsers.JSONParser):
    def parse(self, stream, media_type=None, parser_context=None):
        cap = body_cap(parser_context)
        refuse_declared_size(parser_context, cap)
        body = stream.read(cap + 1)  # a body without a Content-Length is cut off here
        if len(body) > cap:
            raise TooLarge(f"The request body is over {cap:,} bytes, the most this endpoint takes.")
        depth = settings.API_MAX_JSON_DEPTH
        try:
            data = super().parse(io.BytesIO(body), media_type, parser_context)
        except RecursionError as exc:  # the decoder recurses per level
            raise ParseError(f"JSON parse error - nested deeper than {depth} levels") from exc
        problem = json_problem(data, depth)
        if problem is not None:
            raise problem
        return data


class FormParser(parsers.FormParser):
    def parse(self, stream, media_type=None, parser_context=None):
        refuse_declared_size(parser_context, body_cap(parser_context))
        data = super().parse(stream, media_type, parser_context)
        problem = first_bad_field(data.lists())
        if problem is not None:
            raise problem
        return data


class MultiPartParser(parsers.MultiPartParser):
    def parse(self, stream, media_type=None, parser_context=None):
        refuse_declared_size(parser_context, body_cap(parser_context))
        parsed = super().parse(stream, media_type, parser_context)
        problem = first_bad_field(parsed.data.lists())
        if problem is not None:
            raise problem
        return parsed
