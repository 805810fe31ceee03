"""Throttling of everything that guesses or floods, on one mechanism: counters in the cache
(`_count`), each by account and by client address, refused with 429 once over their limit.

- Sign-in: after LOGIN_FAILURE_LIMIT failures for one username (or
  LOGIN_FAILURE_LIMIT_PER_ADDRESS from one client address, higher because many people can share a
  proxy's address) within the window, further attempts are refused without checking the
  password. A wrong current password on the password-change form is a failed sign-in of that
  account, on the same counters: a borrowed session cannot guess the password there instead.
- Password-reset mail: PASSWORD_RESET_LIMIT requests per e-mail address asked and
  PASSWORD_RESET_LIMIT_PER_ADDRESS per client address within PASSWORD_RESET_WINDOW_SECONDS. The
  mail is composed and sent by a background task for every address asked, known or not, so the
  answer takes as long either way; its link starts with SITE_URL, never with the request's Host.
- The API: per person, the `burst` and `sustained` rates of REST_FRAMEWORK's
  DEFAULT_THROTTLE_RATES (API_THROTTLE_BURST, API_THROTTLE_SUSTAINED).

The username is counted as the sign-in form and the backend see it: stripped, then NFKC
(`AbstractBaseUser.normalize_username`), so its full-width and mathematical-letter spellings share
the counter of the plain one. Case is kept: `ModelBackend` looks the name up exactly, so `Ada` is
another account than `ada`.
The address is the client's as the trusted proxies saw it (`client_address`)."""

from __future__ import annotations

import hashlib
import ipaddress
import unicodedata

from celery import shared_task
from django.conf import settings
from django.contrib.auth import get_user_model
from django.contrib.auth import views as auth_views
from django.contrib.auth.forms import PasswordResetForm
from django.core.cache import cache
from django.core.exceptions import NON_FIELD_ERRORS
from django.http import HttpRequest, HttpResponse, HttpResponseRedirect
from django.utils import translation
from django.utils.translation import ngettext
from rest_framework.settings import api_settings
from rest_framework.throttling import SimpleRateThrottle

from concord.tasks import send


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


# ---------------------------------------------------------------- the counters


def _hashed(text: str) -> str:
    """Whatever was posted as a short key of safe characters."""
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


def _count(key: str, window: int) -> int:
    """One more at `key`, a count that lasts `window` seconds from its first; returns the count.
    With the cache down django-redis answers None: 0, and throttling lets everyone through
    rather than locking everyone out."""
    try:
        return cache.incr(key) or 0
    except ValueError:  # no count yet, or it has just expired
        if cache.add(key, 1, timeout=window):
            return 1
        return _count(key, window)  # another request started it in between


def _over(limits: dict[str, int]) -> bool:
    """Whether any counter has reached its limit (`limits`: cache key -> limit)."""
    counts = cache.get_many(list(limits))  # one round trip; {} with the cache down
    return any(counts.get(key, 0) >= limit for key, limit in limits.items())


def _count_all(limits: dict[str, int], window: int) -> None:
    for key in limits:
        _count(key, window)


def _refused(view, message: str) -> HttpResponse:
    """The view's page with `message` and 429. The form shown is unbound: a bound one would be
    validated, and its errors would tell whether the password was right."""
    kwargs = view.get_form_kwargs()
    kwargs.pop("data", None)
    kwargs.pop("files", None)
    form = view.get_form_class()(**kwargs)
    # add_error() wants a cleaned form: an unbound one has only its (empty) errors to add to.
    form.errors[NON_FIELD_ERRORS] = form.error_class([message], error_class="nonfield")
    return view.render_to_response(view.get_context_data(form=form), status=429)


def _minutes(seconds: int) -> int:
    return max(1, seconds // 60)


# ---------------------------------------------------------------- sign-in and password change


def failure_keys(username: str, address: str) -> tuple[str, str]:
    """Cache keys counting failed sign-ins for a username and for a client address."""
    return f"login-fail:user:{_hashed(username_key(username))}", f"login-fail:addr:{address}"


def _sign_in_limits(username: str, request: HttpRequest) -> dict[str, int]:
    by_user, by_address = failure_keys(username, client_address(request))
    return {
        by_user: settings.LOGIN_FAILURE_LIMIT,
        by_address: settings.LOGIN_FAILURE_LIMIT_PER_ADDRESS,
    }


class ThrottledLoginView(auth_views.LoginView):
    template_name = "registration/login.html"

    def _limits(self) -> dict[str, int]:
        return _sign_in_limits(self.request.POST.get("username") or "", self.request)

    def post(self, request, *args, **kwargs):
        if _over(self._limits()):
            minutes = _minutes(settings.LOGIN_FAILURE_WINDOW_SECONDS)
            message = ngettext(
                "Too many failed sign-ins. Try again in %(n)d minute.",
                "Too many failed sign-ins. Try again in %(n)d minutes.",
                minutes,
            ) % {"n": minutes}
            return _refused(self, message)
        return super().post(request, *args, **kwargs)

    def form_invalid(self, form):
        _count_all(self._limits(), settings.LOGIN_FAILURE_WINDOW_SECONDS)
        return super().form_invalid(form)


class ThrottledPasswordChangeView(auth_views.PasswordChangeView):
    """A wrong current password is a failed sign-in of this account from this address."""

    def _limits(self) -> dict[str, int]:
        return _sign_in_limits(self.request.user.get_username(), self.request)

    def post(self, request, *args, **kwargs):
        if _over(self._limits()):
            minutes = _minutes(settings.LOGIN_FAILURE_WINDOW_SECONDS)
            message = ngettext(
                "Too many wrong passwords. Try again in %(n)d minute.",
                "Too many wrong passwords. Try again in %(n)d minutes.",
                minutes,
            ) % {"n": minutes}
            return _refused(self, message)
        return super().post(request, *args, **kwargs)

    def form_invalid(self, form):
        if form.has_error("old_password", "password_incorrect"):
            _count_all(self._limits(), settings.LOGIN_FAILURE_WINDOW_SECONDS)
        return super().form_invalid(form)


# ---------------------------------------------------------------- password reset


def _reset_limits(request: HttpRequest) -> dict[str, int]:
    # The address as Django's reset form matches accounts: ignoring case (NFKC casefold).
    asked = unicodedata.normalize("NFKC", (request.POST.get("email") or "").strip()).casefold()
    return {
        f"reset:mail:{_hashed(asked)}": settings.PASSWORD_RESET_LIMIT,
        f"reset:addr:{client_address(request)}": settings.PASSWORD_RESET_LIMIT_PER_ADDRESS,
    }


class ThrottledPasswordResetView(auth_views.PasswordResetView):
    """Queues the reset mail for the address asked, whether an account has it or not: the page
    does the same work and answers the same either way, so neither its words nor its time tell
    which addresses have accounts."""

    def post(self, request, *args, **kwargs):
        if _over(_reset_limits(request)):
            minutes = _minutes(settings.PASSWORD_RESET_WINDOW_SECONDS)
            message = ngettext(
                "Too many password-reset requests. Try again in %(n)d minute.",
                "Too many password-reset requests. Try again in %(n)d minutes.",
                minutes,
            ) % {"n": minutes}
            return _refused(self, message)
        return super().post(request, *args, **kwargs)

    def form_valid(self, form):
        _count_all(_reset_limits(self.request), settings.PASSWORD_RESET_WINDOW_SECONDS)
        send(password_reset_mail, form.cleaned_data["email"], translation.get_language())
        return HttpResponseRedirect(self.get_success_url())


@shared_task(name="concord.password_reset_mail")
def password_reset_mail(email: str, language: str) -> None:
    """The reset mail, in the asker's language, to each active account with this address (none
    for an unknown one). The link starts with SITE_URL: a request's Host is the client's word."""
    protocol, site = settings.SITE_URL.rstrip("/").split("://", 1)
    form = PasswordResetForm({"email": email})
    if not form.is_valid():
        return
    with translation.override(language):
        form.save(domain_override=site, use_https=protocol == "https")


# ---------------------------------------------------------------- the API


class _ApiThrottle(SimpleRateThrottle):
    """DRF's throttle counted in a fixed window with `_count` (one cache round trip a request;
    DRF's own reads and writes a list of every request's time). Per person; a request that is
    not signed in (refused anyway) counts for its address."""

    scope: str
    num_requests: int
    duration: int

    def get_rate(self):
        # Read at each request: DRF's class attribute would keep the rates of import time.
        return api_settings.DEFAULT_THROTTLE_RATES[self.scope]

    def get_cache_key(self, request, view):
        if request.user and request.user.is_authenticated:
            return f"api-{self.scope}:user:{request.user.pk}"
        return f"api-{self.scope}:addr:{client_address(request)}"

    def allow_request(self, request, view):
        if self.rate is None:
            return True
        now = self.timer()
        self.retry_in = self.duration - now % self.duration  # till this window ends
        key = f"{self.get_cache_key(request, view)}:{int(now // self.duration)}"
        return _count(key, self.duration) <= self.num_requests

    def wait(self):
        return self.retry_in


class BurstThrottle(_ApiThrottle):
    scope = "burst"


class SustainedThrottle(_ApiThrottle):
    scope = "sustained"
