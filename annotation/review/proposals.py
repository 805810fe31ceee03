"""Taxonomy proposals: a member asks for a missing category; it is accepted only when every
member of the project approves (the study's rule), then the lead adds it and may send the items
that triggered it back for relabeling."""

from __future__ import annotations

from django.contrib.auth import get_user_model
from django.contrib.auth.hashers import UNUSABLE_PASSWORD_PREFIX
from django.db import transaction
from django.db.models import Count, Prefetch, Q, QuerySet
from django.utils.translation import gettext as _

from annotation.audit import audit_record
from annotation.blindness import items_seen_by
from annotation.gate import Write, gate
from annotation.lifecycle import item_move
from annotation.models import (
    Action,
    Item,
    Project,
    ProjectNode,
    Proposal,
    ProposalStatus,
    ProposalVote,
    Reservation,
    Resolution,
    Skip,
    Stage,
)
from annotation.project_nodes import node_is_foreign
from concord.errors import ConcordError, Conflict
from taxonomy.models import Level, Node
from taxonomy.services import node_add


def electorate(project: Project) -> QuerySet:
    """Who must approve: every member who can sign in. Accounts made by a study-label import
    (one per LabelJ column, no password) cannot vote, so they cannot block a proposal forever."""
    return (
        get_user_model()
        .objects.filter(memberships__project=project, is_active=True)
        .exclude(password__startswith=UNUSABLE_PASSWORD_PREFIX)
    )


@transaction.atomic
def proposal_create(
    *,
    project: Project,
    proposer,
    parent: Node | None,
    name: str,
    definition: str = "",
    reason: str = "",
    item: Item | None = None,
) -> Proposal:
    """Propose a new category under `parent` (None: a new type). The proposer's own approval is
    recorded with it; `item`, the issue no category fit, is attached."""
    gate(proposer, project, Write.PROPOSE)
    name = name.strip()
    if not name:
        raise ConcordError(_("A proposed category needs a name."))
    if parent is not None:
        if parent.taxonomy_id != project.taxonomy_id:
            raise ConcordError(
                _("%(code)s is not in this project's taxonomy.") % {"code": parent.code}
            )
        if node_is_foreign(project, parent):
            raise ConcordError(
                _("%(code)s is another project's category, not one of %(project)s.")
                % {"code": parent.code, "project": project}
            )
        if parent.level == Level.SUBTHEME:
            raise ConcordError(_("Sub-themes are the deepest level; pick a theme or a type."))
        if parent.is_retired:
            raise ConcordError(_("%(code)s is retired.") % {"code": parent.code})
    if item is not None and item.project_id != project.pk:
        raise ConcordError(_("That item belongs to another project."))
    proposal = Proposal.objects.create(
        project=project,
        proposer=proposer,
        parent=parent,
        name=name,
        definition=definition.strip(),
        reason=reason.strip(),
    )
    if item is not None:
        proposal.items.add(item)
    audit_record(
        project=project,
        item=item,
        actor=proposer,
        action=Action.PROPOSE,
        after={
            "proposal": proposal.pk,
            "parent": parent.code if parent else None,
            "name": proposal.name,
        },
    )
    ProposalVote.objects.create(proposal=proposal, member=proposer, approve=True)
    _settle(proposal)
    return proposal


@transaction.atomic
def proposal_vote(*, proposal: Proposal, member, approve: bool) -> Proposal:
    """Record `member`'s vote (changeable while the proposal is open). One rejection rejects it;
    approval by every member accepts it. Voting again the same way changes nothing."""
    locked = Proposal.objects.select_for_update().select_related("project").get(pk=proposal.pk)
    gate(member, proposal.project, Write.PROPOSE)
    current = ProposalVote.objects.filter(proposal=locked, member=member).first()
    if current is not None and current.approve == approve:
        return locked
    if locked.status != ProposalStatus.OPEN:
        raise Conflict(
            _("Voting has ended: the proposal is %(status)s.")
            % {"status": locked.get_status_display().lower()}
        )
    ProposalVote.objects.update_or_create(
        proposal=locked, member=member, defaults={"approve": approve}
    )
    audit_record(
        project=locked.project,
        actor=member,
        action=Action.PROPOSAL_VOTE,
        before={"approve": current.approve} if current else None,
        after={"proposal": locked.pk, "approve": approve},
    )
    _settle(locked)
    proposal.status = locked.status
    return locked


def _settle(proposal: Proposal) -> None:
    votes = proposal.votes.all()
    if votes.filter(approve=False).exists():
        proposal.status = ProposalStatus.REJECTED
    else:
        approvers = set(votes.filter(approve=True).values_list("member_id", flat=True))
        voters = set(electorate(proposal.project).values_list("pk", flat=True))
        if voters <= approvers:
            proposal.status = ProposalStatus.ACCEPTED
    if proposal.status != ProposalStatus.OPEN:
        proposal.save(update_fields=["status"])


@transaction.atomic
def proposal_add_node(*, proposal: Proposal, lead) -> Node:
    """Add an accepted proposal's category to the taxonomy with the next free code under its
    parent. Adding it again returns the same node."""
    locked = Proposal.objects.select_for_update().select_related("project").get(pk=proposal.pk)
    gate(lead, proposal.project, Write.PROPOSAL_SETTLE)
    if locked.status == ProposalStatus.ADDED and locked.node is not None:
        return locked.node
    if locked.status != ProposalStatus.ACCEPTED:
        raise Conflict(
            _("Only a proposal every member approved can be added; this one is %(status)s.")
            % {"status": locked.get_status_display().lower()}
        )
    node = node_add(
        taxonomy=locked.project.taxonomy,
        parent=locked.parent,
        name=locked.name,
        definition=locked.definition,
    )
    locked.node = node
    locked.status = ProposalStatus.ADDED
    locked.save(update_fields=["node", "status"])
    # The category is this project's only, though the taxonomy may be shared (project_nodes).
    ProjectNode.objects.create(project=locked.project, node=node, proposal=locked)
    audit_record(
        project=locked.project,
        actor=lead,
        action=Action.PROPOSAL_ADD,
        before={"status": ProposalStatus.ACCEPTED},
        after={"proposal": locked.pk, "node": node.code, "name": node.name},
    )
    proposal.status, proposal.node = locked.status, node
    return node


@transaction.atomic
def proposal_send_back(*, proposal: Proposal, lead) -> int:
    """Send the items that triggered `proposal` back for relabeling: their labels, resolution,
    skips and reservations go (the labels and the resolution are kept in the audit trail), the
    count drops to 0 and the stage to open. Returns how many items went back; items already
    open and unlabelled are left alone."""
    locked = Proposal.objects.select_for_update().select_related("project").get(pk=proposal.pk)
    gate(lead, proposal.project, Write.PROPOSAL_SETTLE)
    if locked.status not in (ProposalStatus.ACCEPTED, ProposalStatus.ADDED):
        raise Conflict(
            _("Only a proposal every member approved sends items back; this one is %(status)s.")
            % {"status": locked.get_status_display().lower()}
        )
    items = list(
        Item.objects.select_for_update()
        .select_related("project")
        .filter(proposals=locked, stage__in=[Stage.LABELING, Stage.DISPUTED, Stage.FINAL])
        .order_by("pk")
    )
    for item in items:
        labels = [
            {
                "volunteer": volunteer,
                "node": code,
                "summary": summary,
            }
            for volunteer, code, summary in item.annotations.order_by("pk").values_list(
                "volunteer__username", "node__code", "summary"
            )
        ]
        resolution = Resolution.objects.filter(item=item).select_related("node").first()
        before: dict = {"labels": labels}
        if resolution is not None:
            before["resolution"] = {"node": resolution.node.code, "method": resolution.method}
            resolution.delete()
        item.annotations.all().delete()
        Skip.objects.filter(item=item).delete()
        Reservation.objects.filter(item=item).delete()
        # Out of the pilot too: its page shows the lead's labels on pilot items, and this item
        # is blind again.
        item.label_count, item.agreement, item.in_pilot = 0, None, False
        item.save(update_fields=["label_count", "agreement", "in_pilot"])
        item_move(
            item=item,
            to=Stage.OPEN,
            action=Action.RELABEL,
            actor=lead,
            before=before,
            after={"proposal": locked.pk},
        )
    return len(items)


def proposals_overview(project: Project, viewer) -> QuerySet[Proposal]:
    """Proposals newest first, with their vote counts and the items attached that `viewer` may
    see: a proposal says how its proposer saw an item (its type, its reason), so a volunteer
    sees another's item only once they labeled it themselves or it is revealed."""
    seen = items_seen_by(viewer, project).select_related("issue").order_by("pk")
    return (
        project.proposals.select_related("proposer", "parent", "node")
        .prefetch_related(Prefetch("items", queryset=seen))
        .annotate(
            approvals=Count("votes", filter=Q(votes__approve=True), distinct=True),
            rejections=Count("votes", filter=Q(votes__approve=False), distinct=True),
            attached=Count("items", distinct=True),
        )
        .order_by("-created_at", "-pk")
    )


def reason_seen(proposal: Proposal, viewer) -> str:
    """The proposal's reason as `viewer` may read it (a proposal from proposals_overview): not
    while it is about items they may not see yet; the category itself stays open to their
    vote."""
    # both come from proposals_overview(project, viewer): the count of attached items (an
    # annotation, unknown to the type checker) and the items this viewer may see
    attached: int = proposal.attached  # type: ignore[attr-defined]
    about_hidden_items = attached and not proposal.items.all()
    return "" if about_hidden_items and proposal.proposer_id != viewer.pk else proposal.reason


def my_votes(project: Project, user) -> dict[int, bool]:
    return dict(
        ProposalVote.objects.filter(proposal__project=project, member=user).values_list(
            "proposal_id", "approve"
        )
    )
