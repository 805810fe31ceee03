"""An item's discussion thread, and who may read it: blindness holds until cross-check."""

from __future__ import annotations

from django.core.exceptions import PermissionDenied
from django.db import transaction
from django.utils.translation import gettext as _

from annotation.access import role_reaches, user_role
from annotation.audit import audit_record
from annotation.blindness import is_revealed
from annotation.gate import Write, gate
from annotation.models import Action, Item, Post, Role
from concord.errors import ConcordError

POST_MAX_CHARS = 10_000


def labels_revealed(item: Item, role: str | None) -> bool:
    """May someone with `role` in the item's project see its labels and its thread? Leads and
    admins always; volunteers only once the item has all its labels (cross-check or later) and the
    project reveals them then; otherwise another volunteer's label would bias theirs."""
    if role_reaches(role, Role.LEAD):
        return True
    if role != Role.VOLUNTEER:
        return False
    return is_revealed(item, item.project)


@transaction.atomic
def post_add(*, item: Item, author, text: str) -> Post:
    """Add `text` (Markdown, shown sanitized) to the item's thread. PermissionDenied for
    volunteers while the item is still blind, and for non-members."""
    gate(author, item.project, Write.DISCUSS)
    role = user_role(author, item.project)
    if not labels_revealed(item, role):
        raise PermissionDenied(
            _("The discussion of this item opens to volunteers once it reaches cross-check.")
        )
    text = text.strip()
    if not text:
        raise ConcordError(_("Write something first."))
    if len(text) > POST_MAX_CHARS:
        raise ConcordError(
            _("A post holds at most %(max)s characters.") % {"max": f"{POST_MAX_CHARS:,}"}
        )
    post = Post.objects.create(item=item, author=author, text=text)
    audit_record(
        project=item.project,
        item=item,
        actor=author,
        action=Action.POST,
        after={"post": post.pk, "text": text[:200]},
    )
    return post
