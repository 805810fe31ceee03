"""A person's own settings (concord.models.PersonSettings): read on the pages that use them,
changed only by the person. The labeling and lead pages read the single-key switch on every
load, so it is cached per person (a miss, or Redis down, costs one query)."""

from __future__ import annotations

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.cache import cache
from django.http import HttpResponseRedirect
from django.urls import reverse
from django.utils.translation import gettext as _
from django.views.decorators.http import require_POST

from concord.models import PersonSettings
from concord.next_page import local_next

_CACHE_SECONDS = 24 * 3600


def _cache_key(user_id: int) -> str:
    return f"concord:single-keys:{user_id}"


def single_keys_on(user) -> bool:
    """Whether keys without a modifier act as shortcuts for this person (on unless turned off)."""
    if not getattr(user, "is_authenticated", False):
        return True
    key = _cache_key(user.pk)
    on = cache.get(key)
    if on is None:
        row = PersonSettings.objects.filter(user=user).values_list("single_key_shortcuts")
        on = next(iter(row), (True,))[0]
        cache.set(key, on, _CACHE_SECONDS)
    return bool(on)


def single_keys_set(*, user, on: bool) -> None:
    """Turn this person's single-key shortcuts on or off, on every device they use."""
    PersonSettings.objects.update_or_create(user=user, defaults={"single_key_shortcuts": on})
    cache.set(_cache_key(user.pk), on, _CACHE_SECONDS)


@login_required
@require_POST
def single_keys_page(request):
    """The switch on the pages' key lists: POST `single_keys` = on|off, back to `next`."""
    choice = request.POST.get("single_keys")
    if choice in ("on", "off"):
        single_keys_set(user=request.user, on=choice == "on")
        messages.success(
            request,
            _("Single-key shortcuts are on.")
            if choice == "on"
            else _(
                "Single-key shortcuts are off: outside text boxes, keys without Ctrl or Alt "
                "do nothing on the labeling and lead pages."
            ),
        )
    # Back to the page the switch was on, never elsewhere; anything else leads home.
    return HttpResponseRedirect(local_next(request, reverse("home")))
