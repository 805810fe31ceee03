"""One error type for everything a user can get wrong, with where it happened.

Importers raise `RowError` naming file, line and column; the DRF exception handler and the HTML
views show the same message. A traceback never reaches a client.
"""

from __future__ import annotations

import codecs
import logging
import sys
from dataclasses import dataclass

from django import db
from django.core.exceptions import TooManyFieldsSent, TooManyFilesSent
from django.http import HttpResponse, JsonResponse
from django.template.loader import render_to_string
from django.utils.http import url_has_allowed_host_and_scheme
from django.utils.translation import gettext, gettext_lazy
from drf_spectacular.utils import inline_serializer
from rest_framework import serializers, status
from rest_framework.exceptions import NotAuthenticated, ValidationError
from rest_framework.response import Response

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class Where:
    path: str
    line: int | None = None
    column: str | None = None

    def __str__(self) -> str:
        """In the reader's language: the words around file, line and column are translated,
        the file's name and the column's stay as the input has them."""
        place = {"path": self.path, "line": self.line, "column": self.column}
        if self.line is not None and self.column:
            return gettext("%(path)s, line %(line)s, column %(column)s") % place
        if self.line is not None:
            return gettext("%(path)s, line %(line)s") % place
        if self.column:
            return gettext("%(path)s, column %(column)s") % place
        return self.path

    def as_dict(self) -> dict:
        return {"path": self.path, "line": self.line, "column": self.column}


class ConcordError(Exception):
    """A problem the user can fix; `message` is shown as is, `where` points at the input."""

    http_status: int = status.HTTP_400_BAD_REQUEST

    def __init__(self, message: str, where: Where | None = None) -> None:
        self.message = message
        self.where = where
        super().__init__(str(self))

    def __str__(self) -> str:
        if self.where is None:
            return self.message
        return gettext("%(where)s: %(message)s") % {"where": self.where, "message": self.message}


class RowError(ConcordError):
    """A bad row in an imported file."""

    where: Where  # always given

    def __init__(self, path: str, line: int, column: str | None, message: str) -> None:
        super().__init__(message, Where(path, line, column))


def file_error(name: str, message: str) -> ConcordError:
    """What is wrong with the file `name` as a whole (no line of it to name)."""
    return ConcordError(message, Where(name))


def utf8_text(data: bytes, name: str) -> str:
    """`data` as text (UTF-8, a byte-order mark dropped), or a RowError naming the line of the
    first byte that is not UTF-8 and where in the line it is."""
    bom = len(codecs.BOM_UTF8) if data.startswith(codecs.BOM_UTF8) else 0
    try:
        return data[bom:].decode("utf-8")
    except UnicodeDecodeError as exc:
        raise not_utf8(name, data, bom + exc.start, exc.reason) from exc


def not_utf8(
    name: str, data: bytes, at: int, reason: str, *, line: int = 1, column: int = 0
) -> RowError:
    """The RowError for byte `at` of `data`, which is not UTF-8. A file read in blocks names
    where the block starts: its `line`, and the `column` (bytes of that line before it)."""
    line_start = data.rfind(b"\n", 0, at) + 1
    before = column if line_start == 0 else 0
    message = gettext(
        "not UTF-8 text: byte %(byte)s of the line (%(value)s) is %(reason)s;"
        " save the file as UTF-8"
    ) % {"byte": before + at - line_start + 1, "value": f"0x{data[at]:02x}", "reason": reason}
    return RowError(name, line + data.count(b"\n", 0, at), None, message)


class BadInput(ConcordError):
    """One input field (form field, query parameter, JSON member) that cannot be taken as sent;
    the refusal names it: `fields` in the API's shape, the message on a page."""

    def __init__(self, field: str, reason: str) -> None:
        self.field = field
        self.reason = reason
        super().__init__(f"{field}: {reason}")


class TooLarge(ConcordError):
    """A request body over its limit, refused before it is read."""

    http_status: int = status.HTTP_413_REQUEST_ENTITY_TOO_LARGE


class NotFound(ConcordError):
    http_status: int = status.HTTP_404_NOT_FOUND


class Conflict(ConcordError):
    """The request was fine but the state forbids it now (e.g. a run is already active)."""

    http_status: int = status.HTTP_409_CONFLICT


# Every refusal of the API has this shape; a bad field also lists each field's messages.
ErrorOut = inline_serializer(
    "ErrorOut",
    {
        "detail": serializers.CharField(),
        "where": serializers.DictField(allow_null=True),
        # Present when the request has no (live) sign-in: "not_authenticated" (401 or 403).
        "code": serializers.CharField(required=False),
        "fields": serializers.DictField(
            child=serializers.ListField(child=serializers.CharField()), required=False
        ),
    },
)


def api_exception_handler(exc, context):
    """Every refusal as `{"detail", "where"}` (ErrorOut): a ConcordError says where in the input;
    DRF's own (bad fields, not signed in, throttled ...) get the same shape, with `fields`
    naming each bad field, and `"code": "not_authenticated"` when no one is signed in (an
    expired session), for clients to tell from a refusal of the request itself."""
    # Imported here: rest_framework.views loads DEFAULT_PARSER_CLASSES (concord.parsers), which
    # import this module.
    from rest_framework.views import exception_handler

    if isinstance(exc, ConcordError):
        return Response(error_body(exc), status=exc.http_status)
    if isinstance(exc, TOO_MANY):  # Django's limits, met while DRF parses the body
        return Response(error_body(too_many(exc)), status=status.HTTP_400_BAD_REQUEST)
    response = exception_handler(exc, context)
    if response is None:
        return None
    if isinstance(exc, ValidationError):
        fields = response.data if isinstance(response.data, dict) else {"input": response.data}
        fields = {name: _messages(errors) for name, errors in fields.items()}
        detail = "; ".join(f"{name}: {' '.join(errors)}" for name, errors in fields.items())
        response.data = {"detail": detail, "where": None, "fields": fields}
    elif isinstance(response.data, dict):
        response.data.setdefault("where", None)
        if isinstance(exc, NotAuthenticated):
            response.data.setdefault("code", NotAuthenticated.default_code)
    return response


# Django's limits on a request's fields and files (DATA_UPLOAD_MAX_NUMBER_FIELDS/_FILES): met
# wherever the query string or a form body is first read, a middleware or DRF's parsing.
TOO_MANY = (TooManyFieldsSent, TooManyFilesSent)


def too_many(exc: Exception) -> BadInput:
    """The refusal of a request over Django's limits on fields or files, naming the limit."""
    return BadInput("request", f"too many fields or files ({exc})")


def error_body(exc: ConcordError) -> dict:
    """A ConcordError in the API's refusal shape (ErrorOut)."""
    body: dict = {"detail": exc.message, "where": exc.where.as_dict() if exc.where else None}
    if isinstance(exc, BadInput):
        body["fields"] = {exc.field: [exc.reason]}
    return body


def _messages(errors) -> list[str]:
    """A field's errors as flat strings (nested serializers give dicts and lists)."""
    if isinstance(errors, dict):
        return [f"{key}: {m}" for key, value in errors.items() for m in _messages(value)]
    if isinstance(errors, list):
        return [m for error in errors for m in _messages(error)]
    return [str(errors)]


DATABASE_DOWN = gettext_lazy(
    "The database is not answering (it may be restarting), so this request could not be"
    " completed. Try again in a few seconds: sending the same label again is safe, it is stored"
    " once."
)
RETRY_AFTER_SECONDS = 5


def server_error(request):
    """handler500, for anything a view did not handle (DEBUG off).

    A database that is down or restarting answers 503 with Retry-After, a retryable error the
    page and API clients can act on; anything else is a plain 500. Neither page touches the
    database (no session, no user) nor shows a traceback or SQL.
    """
    unavailable = isinstance(sys.exc_info()[1], db.OperationalError | db.InterfaceError)
    code = 503 if unavailable else 500
    response: HttpResponse
    if request.path.startswith("/api/"):
        detail = str(DATABASE_DOWN) if unavailable else gettext("Server error; it was logged.")
        response = JsonResponse({"detail": detail, "retryable": unavailable}, status=code)
    else:
        context = {"back": _same_site_referer(request), "message": str(DATABASE_DOWN)}
        html = render_to_string("503.html" if unavailable else "500.html", context)
        response = HttpResponse(html, status=code)
    if unavailable:
        logger.warning("database unavailable during %s %s", request.method, request.path)
        response["Retry-After"] = str(RETRY_AFTER_SECONDS)
    return response


def _same_site_referer(request) -> str:
    """Where the person came from, if it is this site: the "try again" link goes back there."""
    referer = request.META.get("HTTP_REFERER", "")
    allowed = url_has_allowed_host_and_scheme(referer, {request.get_host()}, request.is_secure())
    return referer if allowed else "/"
