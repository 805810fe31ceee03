"""{% load person_settings %}: a person's own settings, for the pages whose scripts follow them."""

from django import template

from concord.person_settings import single_keys_on

register = template.Library()


@register.simple_tag(takes_context=True)
def single_keys(context) -> bool:
    """{% single_keys as on %}: whether keys without a modifier act as shortcuts for the viewer."""
    request = context.get("request")
    return single_keys_on(request.user if request is not None else None)
