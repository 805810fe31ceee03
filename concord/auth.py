"""Sign-in with throttling: after LOGIN_FAILURE_LIMIT failures for one username (or
LOGIN_FAILURE_LIMIT_PER_ADDRESS from one client address, higher because many people can share a
proxy's address) within the window, further attempts are refused without checking the password."""

from __future__ import annotations

from django.conf import settings
from django.contrib.auth import views as auth_views
from django.core.cache import cache


def failure_keys(username: str, address: str) -> tuple[str, str]:
    """Cache keys counting failed sign-ins for a username and for a client address."""
    return f"login-fail:user:{username.strip().lower()}", f"login-fail:addr:{address}"


def _limits(request) -> dict[str, int]:
    by_user, by_address = failure_keys(
        request.POST.get("username") or "", request.META.get("REMOTE_ADDR", "")
    )
    return {
        by_user: settings.LOGIN_FAILURE_LIMIT,
        by_address: settings.LOGIN_FAILURE_LIMIT_PER_ADDRESS,
    }


def login_blocked(request) -> bool:
    return any(cache.get(key, 0) >= limit for key, limit in _limits(request).items())


def login_failed(request) -> None:
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
            form.add_error(None, f"Too many failed sign-ins. Try again in {minutes} minutes.")
            return self.render_to_response(self.get_context_data(form=form), status=429)
        return super().post(request, *args, **kwargs)

    def form_invalid(self, form):
        login_failed(self.request)
        return super().form_invalid(form)
