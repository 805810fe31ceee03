"""API tokens: each person may hold one, create it anew (the old one stops working at once) or
revoke it. The key is shown once, right after it is made."""

from __future__ import annotations

from django.contrib.auth.decorators import login_required
from django.db import transaction
from django.shortcuts import render
from django.views.decorators.http import require_http_methods
from rest_framework.authtoken.models import Token


@transaction.atomic
def token_renew(*, user) -> Token:
    """A new token for `user`; any previous one is revoked."""
    Token.objects.filter(user=user).delete()
    return Token.objects.create(user=user)


def token_revoke(*, user) -> bool:
    deleted, _ = Token.objects.filter(user=user).delete()
    return bool(deleted)


@login_required
@require_http_methods(["GET", "POST"])
def api_token_page(request):
    context: dict[str, object] = {"new_key": None, "revoked": False}
    if request.method == "POST":
        if request.POST.get("action") == "revoke":
            context["revoked"] = token_revoke(user=request.user)
        else:
            context["new_key"] = token_renew(user=request.user).key
    context["token"] = Token.objects.filter(user=request.user).first()
    return render(request, "registration/api_token.html", context)
