"""One error type for everything a user can get wrong, with where it happened.

Importers raise `RowError` naming file, line and column; the DRF exception handler and the HTML
views show the same message. A traceback never reaches a client.
"""

from __future__ import annotations

from dataclasses import dataclass

from rest_framework import status
from rest_framework.response import Response
from rest_framework.views import exception_handler


@dataclass(frozen=True)
class Where:
    path: str
    line: int | None = None
    column: str | None = None

    def __str__(self) -> str:
        parts = [self.path]
        if self.line is not None:
            parts.append(f"line {self.line}")
        if self.column:
            parts.append(f"column {self.column}")
        return ", ".join(parts)

    def as_dict(self) -> dict:
        return {"path": self.path, "line": self.line, "column": self.column}


class ConcordError(Exception):
    """A problem the user can fix; `message` is shown as is, `where` points at the input."""

    http_status = status.HTTP_400_BAD_REQUEST

    def __init__(self, message: str, where: Where | None = None) -> None:
        self.message = message
        self.where = where
        super().__init__(str(self))

    def __str__(self) -> str:
        return f"{self.where}: {self.message}" if self.where else self.message


class RowError(ConcordError):
    """A bad row in an imported file."""

    def __init__(self, path: str, line: int, column: str | None, message: str) -> None:
        super().__init__(message, Where(path, line, column))


class NotFound(ConcordError):
    http_status = status.HTTP_404_NOT_FOUND


class Conflict(ConcordError):
    """The request was fine but the state forbids it now (e.g. a run is already active)."""

    http_status = status.HTTP_409_CONFLICT


def api_exception_handler(exc, context):
    """Turn a ConcordError into `{"detail", "where"}`; everything else goes to DRF's handler."""
    if isinstance(exc, ConcordError):
        body = {"detail": exc.message, "where": exc.where.as_dict() if exc.where else None}
        return Response(body, status=exc.http_status)
    return exception_handler(exc, context)
