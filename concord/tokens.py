"""API tokens: each person may hold one, create it anew (the old one stops working at once) or
revoke it. The key is shown once, right after it is made. A new password revokes it."""

from __future__ import annotations

from django.contrib.auth.decorators import login_required
from django.db import transaction
from django.shortcuts import render
from django.utils.translation import gettext_lazy as _
from django.views.decorators.http import require_http_methods
from rest_framework.authentication import TokenAuthentication
from rest_framework.authtoken.models import Token
from rest_framework.exceptions import AuthenticationFailed

from concord.prepared import PreparedQuery

_TOKEN_WITH_USER = PreparedQuery(lambda key: Token.objects.select_related("user").filter(key=key))


class PreparedTokenAuthentication(TokenAuthentication):
    """DRF's `Authorization: Token <key>`, its lookup compiled once: every API request makes it
    (issue #16)."""

    def authenticate_credentials(self, key: str):
        token = _TOKEN_WITH_USER.first(key=key)
        if token is None:
            raise AuthenticationFailed(_("Invalid token."))
        if not token.user.is_active:
            raise AuthenticationFailed(_("User inactive or deleted."))
        return (token.user, token)


@transaction.atomic
def token_renew(*, user) -> Token:
    """A new token for `user`; any previous one is revoked."""
    Token.objects.filter(user=user).delete()
    return Token.objects.create(user=user)


def token_revoke(*, user) -> bool:
    deleted, _ = Token.objects.filter(user=user).delete()
    return bool(deleted)


class RevokeTokenOnNewPassword:
    """A password validator that refuses nothing: it is in AUTH_PASSWORD_VALIDATORS for Django's
    `password_changed` call, which `AbstractBaseUser.save()` makes after every `set_password()`
    (own change, reset, the admin's set password, `manage.py changepassword`) and never for a
    hash upgraded at sign-in. One place, whichever page or command set the password: a token
    taken with the old password stops working with it."""

    def validate(self, password, user=None) -> None:
        return None

    def password_changed(self, password, user=None) -> None:
        if user is not None and user.pk is not None:
            token_revoke(user=user)

    def get_help_text(self) -> str:
        return str(_("A new password revokes your API token, if you have one."))


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
