"""Template helpers of the taxonomy pages that need to know about projects (the taxonomy app
knows none): which nodes the reader may edit."""

from __future__ import annotations

from django import template

from annotation.gate import nodes_editable
from taxonomy.models import Taxonomy

register = template.Library()


@register.simple_tag(takes_context=True)
def editable_nodes(context, taxonomy: Taxonomy) -> set[int]:
    """{% editable_nodes taxonomy as editable %}: the ids of the nodes whose edit link works for
    the reader (annotation.gate.nodes_editable); a volunteer gets none."""
    return nodes_editable(context["request"].user, taxonomy)
