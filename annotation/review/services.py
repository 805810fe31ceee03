"""What the lead annotator does with an item after cross-check: decide its final label, or re-open
a decision. The reads behind the lead's pages live in annotation.review.selectors."""

from __future__ import annotations

from django.db import transaction
from django.db.models import Max
from django.utils.translation import gettext as _

from annotation.figures.tallies import figures_kept
from annotation.gate import Write, gate
from annotation.labeling.services import node_check
from annotation.lifecycle import item_move, item_outcome, resolution_method
from annotation.models import Action, AuditEvent, Item, Method, Resolution, Stage
from concord.errors import ConcordError, Conflict
from taxonomy.models import Node

RESOLVABLE_STAGES = (Stage.DISPUTED,)
# Audit actions that do not change an item's labels or stage, so they do not make a lead's
# open form stale (someone posting in the thread while the lead decides is fine).
NOT_A_CHANGE = (Action.POST, Action.PROPOSE, Action.PROPOSAL_VOTE, Action.PROPOSAL_ADD)


def item_version(item: Item) -> int:
    """A number that grows with every change to the item's labels or stage: the id of its last
    audit event that is such a change (0 if none). Forms carry it; a different number on submit
    means someone else changed the item meanwhile."""
    last = (
        AuditEvent.objects.filter(item=item)
        .exclude(action__in=NOT_A_CHANGE)
        .aggregate(last=Max("pk"))["last"]
    )
    return last or 0


@transaction.atomic
def item_resolve(
    *,
    item: Item,
    lead,
    node: Node,
    reason: str = "",
    expected_stage: str | None = None,
    expected_version: int | None = None,
) -> Resolution:
    """Give a disputed (or cross-checked) item its final label.

    `node` may be any live node at the project's depth, not only one a volunteer chose. The method
    is majority when `node` is (one of) the most common labels, else lead, which needs a reason.
    Sending the same decision again returns the first resolution (a double click changes nothing);
    a form whose `expected_stage`/`expected_version` no longer match the item raises Conflict.
    """
    gate(lead, item.project, Write.RESOLVE)
    locked = Item.objects.select_for_update().select_related("project").get(pk=item.pk)
    existing = Resolution.objects.filter(item=locked).select_related("node").first()
    if locked.stage == Stage.FINAL and existing and existing.node_id == node.pk:
        return existing
    if (expected_stage is not None and locked.stage != expected_stage) or (
        expected_version is not None and item_version(locked) != expected_version
    ):
        raise Conflict(
            _(
                "This item changed while you were looking at it (it is now %(stage)s); reload "
                "it and decide again."
            )
            % {"stage": locked.get_stage_display().lower()}
        )
    if locked.stage not in RESOLVABLE_STAGES:
        raise Conflict(
            _("Only items in cross-check or disputed can be resolved; this one is %(stage)s.")
            % {"stage": locked.get_stage_display().lower()}
        )
    node_check(project=locked.project, node=node)
    labels = list(locked.annotations.values_list("node_id", flat=True))
    method = resolution_method(labels, node.pk)
    reason = reason.strip()
    if method == Method.LEAD and not reason:
        raise ConcordError(
            _("%(code)s is not the majority label: say why you chose it (the reason is kept).")
            % {"code": node.code}
        )
    with figures_kept(locked):
        resolution = Resolution.objects.create(
            item=locked, node=node, method=method, resolver=lead, reason=reason
        )
    item_move(
        item=locked,
        to=Stage.FINAL,
        action=Action.RESOLVE,
        actor=lead,
        after={"node": node.code, "method": method, "reason": reason},
    )
    item.stage = Stage.FINAL
    return resolution


@transaction.atomic
def item_reopen(*, item: Item, lead, reason: str) -> Item:
    """Send a final item back to the lead's queue (disputed), or to labeling when it has fewer
    than k labels. The resolution row goes, but what it said (node, method, resolver, reason)
    stays in the audit trail, with the item's other history. Re-opening an item that is already
    disputed changes nothing.

    A pilot example re-opened is a pilot example no more (the move back, lifecycle.BACK_MOVES):
    the pilot page stops showing it, and the lead's label on it stays one of its labels, counted
    toward k, so volunteers label it blind for the rest."""
    gate(lead, item.project, Write.RESOLVE)
    locked = Item.objects.select_for_update().select_related("project").get(pk=item.pk)
    if locked.stage == Stage.DISPUTED:
        return locked
    if locked.stage != Stage.FINAL:
        raise Conflict(
            _("Only final items can be re-opened; this one is %(stage)s.")
            % {"stage": locked.get_stage_display().lower()}
        )
    reason = reason.strip()
    if not reason:
        raise ConcordError(_("Say why the decision is re-opened (the reason is kept)."))
    resolution = Resolution.objects.filter(item=locked).select_related("node", "resolver").first()
    before: dict[str, object] = {}
    if resolution is not None:
        before.update(
            node=resolution.node.code,
            method=resolution.method,
            resolver=resolution.resolver.get_username() if resolution.resolver else None,
            reason=resolution.reason,
        )
        with figures_kept(locked):
            resolution.delete()
    # Back to the lead's queue, or to labeling when it has fewer than k labels (a pilot example,
    # an imported row with a Final_Label and missing labels): the stage its rows give it.
    labels = list(locked.annotations.values_list("node_id", flat=True))
    outcome = item_outcome(
        stage=Stage.DISPUTED, labels=labels, resolved=False, k=locked.project.overlap_k
    )
    locked.agreement = outcome.agreement
    locked.save(update_fields=["agreement"])
    item_move(
        item=locked,
        to=outcome.stage,
        action=Action.REOPEN,
        actor=lead,
        before=before,
        after={"reason": reason},
    )
    item.stage = locked.stage
    return locked
