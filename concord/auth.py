"""Sign-in with throttling: after LOGIN_FAILURE_LIMIT failures for one username (or
LOGIN_FAILURE_LIMIT_PER_ADDRESS from one client address, higher because many people can share a
proxy's address) within the window, further attempts are refused without checking the password.

The username is counted as the sign-in form and the backend see it: stripped, then NFKC
(`AbstractBaseUser.normalize_username`), so its full-width and mathematical-letter spellings share
the counter of the plain one. Case is kept: `ModelBackend` looks the name up exactly, so `Ada` is
another account than `ada`.
The address is the client's as the trusted proxies saw it (`client_address`)."""

from __future__ import annotations

import hashlib
import ipaddress

from django.conf import settings
from django.contrib.auth import get_user_model
from django.contrib.auth import views as auth_views
from django.core.cache import cache
from django.http import HttpRequest
from django.utils.translation import ngettext


def username_key(username: str) -> str:
    """The username as authentication compares it: what the login form's UsernameField cleans
    (strip, then NFKC). No case folding: the default ModelBackend matches the name exactly."""
    return get_user_model().normalize_username(username.strip())


def client_address(request: HttpRequest) -> str:
    """The client's address. With TRUSTED_PROXY_COUNT = N > 0 it is the N-th address from the
    right of X-Forwarded-For (each trusted proxy appends the address it received from; what lies
    further left is the client's own word). A missing or malformed header, or one with fewer than
    N addresses, gives REMOTE_ADDR: the proxy is then the only address we can trust."""
    remote = request.META.get("REMOTE_ADDR", "")
    trusted = settings.TRUSTED_PROXY_COUNT
    if trusted <= 0:
        return remote
    hops = [hop.strip() for hop in request.META.get("HTTP_X_FORWARDED_FOR", "").split(",")]
    if len(hops) < trusted:
        return remote
    try:
        added_by_proxies = [ipaddress.ip_address(hop) for hop in hops[-trusted:]]
    except ValueError:
        return remote
    return str(added_by_proxies[0])


def failure_keys(username: str, address: str) -> tuple[str, str]:
    """Cache keys counting failed sign-ins for a username and for a client address. The name is
    hashed: whatever was posted makes a short key of safe characters."""
    name = hashlib.sha256(username_key(username).encode("utf-8", "surrogatepass")).hexdigest()
    return f"login-fail:user:{name}", f"login-fail:addr:{address}"


def _limits(request: HttpRequest) -> dict[str, int]:
    by_user, by_address = failure_keys(request.POST.get("username") or "", client_address(request))
    return {
        by_user: settings.LOGIN_FAILURE_LIMIT,
        by_address: settings.LOGIN_FAILURE_LIMIT_PER_ADDRESS,
    }


def login_blocked(request: HttpRequest) -> bool:
    return any(cache.get(key, 0) >= limit for key, limit in _limits(request).items())


def login_failed(request: HttpRequest) -> None:
    for key in _limits(request):
        cache.add(key, 0, timeout=settings.LOGIN_FAILURE_WINDOW_SECONDS)
        try:
            cache.incr(key)
        except ValueError:  # expired between add and incr
            cache.set(key, 1, timeout=settings.LOGIN_FAILURE_WINDOW_SECONDS)


class ThrottledLoginView(auth_views.LoginView):
    template_name = "registration/login.html"

    def post(self, request, *args, **kwargs):
        if login_blocked(request):
            form = self.get_form()
            minutes = settings.LOGIN_FAILURE_WINDOW_SECONDS // 60
            form.add_error(
                None,
                ngettext(
                    "Too many failed sign-ins. Try again in %(n)d minute.",
                    "Too many failed sign-ins. Try again in %(n)d minutes.",
                    minutes,
                )
                % {"n": minutes},
            )
            return self.render_to_response(self.get_context_data(form=form), status=429)
        return super().post(request, *args, **kwargs)

    def form_invalid(self, form):
        login_failed(self.request)
        return super().form_invalid(form)
