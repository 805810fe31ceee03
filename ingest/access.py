"""Who may use ingest, in one place. Sources and keyword sets are global (not per project), so
the ingest admin is a site staff user; everyone else is refused, deny by default."""

from __future__ import annotations

from collections.abc import Callable
from functools import wraps

from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied
from rest_framework.permissions import BasePermission

DENIED = "Sources, harvests, keyword sets and URL lists are for site staff."


def is_ingest_admin(user) -> bool:
    return bool(user and user.is_authenticated and (user.is_staff or user.is_superuser))


def require_ingest_admin(user) -> None:
    if not is_ingest_admin(user):
        raise PermissionDenied(DENIED)


def ingest_admin_required(view: Callable) -> Callable:
    """Pages: anonymous users go to sign-in, signed-in non-staff get 403."""

    @login_required
    @wraps(view)
    def wrapped(request, *args, **kwargs):
        require_ingest_admin(request.user)
        return view(request, *args, **kwargs)

    return wrapped


class IsIngestAdmin(BasePermission):
    """API: the same rule as the pages (anonymous 403, as DRF's session auth answers)."""

    message = DENIED

    def has_permission(self, request, view) -> bool:
        return is_ingest_admin(request.user)
