"""Taxonomy proposals: accepted only when every member approves (the study's rule), rejected by
one rejection; the lead adds the node with the next free code and sends the items back."""

import pytest
from django.core.exceptions import PermissionDenied

from annotation.models import Action, AuditEvent, ProposalStatus, Resolution, Stage
from annotation.review.proposals import (
    electorate,
    proposal_add_node,
    proposal_create,
    proposal_send_back,
    proposal_vote,
)
from annotation.review.services import item_resolve
from concord.errors import ConcordError, Conflict
from tests.annotation.lead_helpers import labeled_item, node, trio_fixture  # noqa: F401


@pytest.fixture
def members(personas, trio):
    """Everyone who must approve: three volunteers, the lead, the admin."""
    return [*trio, personas["lead"], personas["admin"]]


@pytest.fixture
def proposal(project, personas, members):
    return proposal_create(
        project=project,
        proposer=personas["volunteer_a"],
        parent=node(project, "C.1"),
        name="Checkpoint format drift",
        definition="Saved checkpoints no longer load",
        reason="Neither C.1.i nor C.1.ii covers it",
    )


def vote_all(proposal, people, approve=True):
    for person in people:
        proposal_vote(proposal=proposal, member=person, approve=approve)
    proposal.refresh_from_db()
    return proposal


def test_the_proposer_approves_by_proposing(proposal, personas):
    assert proposal.status == ProposalStatus.OPEN
    assert list(proposal.votes.values_list("member__username", "approve")) == [
        ("volunteer_a", True)
    ]
    assert AuditEvent.objects.filter(action=Action.PROPOSE).count() == 1


def test_one_member_missing_keeps_it_open(proposal, members):
    vote_all(proposal, members[1:-1])  # everyone but the admin
    assert proposal.status == ProposalStatus.OPEN


def test_all_members_approving_accepts_it(proposal, members):
    assert vote_all(proposal, members).status == ProposalStatus.ACCEPTED


def test_one_rejection_rejects_it(proposal, members):
    vote_all(proposal, members[1:3])
    proposal_vote(proposal=proposal, member=members[3], approve=False)
    proposal.refresh_from_db()
    assert proposal.status == ProposalStatus.REJECTED
    with pytest.raises(Conflict, match="Voting has ended"):
        proposal_vote(proposal=proposal, member=members[4], approve=True)


def test_a_member_may_change_their_vote_while_open_and_repeats_are_one_vote(proposal, members):
    lead = members[3]
    proposal_vote(proposal=proposal, member=lead, approve=True)
    proposal_vote(proposal=proposal, member=lead, approve=True)
    assert proposal.votes.filter(member=lead).count() == 1
    assert AuditEvent.objects.filter(action=Action.PROPOSAL_VOTE).count() == 1
    # changing to a rejection rejects it (one rejection is enough)
    proposal_vote(proposal=proposal, member=lead, approve=False)
    proposal.refresh_from_db()
    assert proposal.status == ProposalStatus.REJECTED


def test_imported_accounts_that_cannot_sign_in_do_not_vote(labeled_project, personas):
    """The study import makes one passwordless account per LabelJ column: not voters."""
    p = proposal_create(
        project=labeled_project,
        proposer=personas["volunteer_a"],
        parent=None,
        name="Security",
    )
    assert vote_all(p, [personas["volunteer_b"], personas["lead"]]).status == "open"
    assert vote_all(p, [personas["admin"]]).status == ProposalStatus.ACCEPTED


def test_outsiders_cannot_propose_or_vote(project, personas, proposal):
    with pytest.raises(PermissionDenied):
        proposal_create(project=project, proposer=personas["outsider"], parent=None, name="x")
    with pytest.raises(PermissionDenied):
        proposal_vote(proposal=proposal, member=personas["outsider"], approve=True)


def test_parent_must_be_a_type_or_theme_of_the_taxonomy(project, personas):
    with pytest.raises(ConcordError, match="deepest level"):
        proposal_create(
            project=project,
            proposer=personas["lead"],
            parent=node(project, "C.1.i"),
            name="x",
        )


def test_add_node_only_when_accepted_then_next_free_code(project, personas, members, proposal):
    with pytest.raises(Conflict, match="every member approved"):
        proposal_add_node(proposal=proposal, lead=personas["lead"])
    vote_all(proposal, members)
    subthemes = node(project, "C.1").children.count()
    new = proposal_add_node(proposal=proposal, lead=personas["lead"])
    assert new.parent == node(project, "C.1")
    assert new.name == "Checkpoint format drift"
    assert new.definition == "Saved checkpoints no longer load"
    assert node(project, "C.1").children.count() == subthemes + 1
    proposal.refresh_from_db()
    assert (proposal.status, proposal.node) == (ProposalStatus.ADDED, new)
    assert proposal_add_node(proposal=proposal, lead=personas["lead"]) == new  # idempotent
    event = AuditEvent.objects.get(action=Action.PROPOSAL_ADD)
    assert event.after["node"] == new.code


def test_send_back_clears_labels_into_the_audit_trail(project, personas, trio):
    item = labeled_item(project, trio, ["C.1", "C.2", "C.2"])
    item_resolve(item=item, lead=personas["lead"], node=node(project, "C.2"))
    untouched = labeled_item(project, trio, ["A.1", "A.2", "A.2"])
    proposal = proposal_create(
        project=project, proposer=trio[0], parent=node(project, "C"), name="New", item=item
    )
    with pytest.raises(Conflict, match="Only a proposal every member approved"):
        proposal_send_back(proposal=proposal, lead=personas["lead"])
    assert vote_all(proposal, electorate(project)).status == ProposalStatus.ACCEPTED
    assert proposal_send_back(proposal=proposal, lead=personas["lead"]) == 1
    item.refresh_from_db()
    assert (item.stage, item.label_count, item.agreement) == (Stage.OPEN, 0, None)
    assert not item.annotations.exists()
    assert not Resolution.objects.filter(item=item).exists()
    assert untouched.annotations.count() == 3
    event = AuditEvent.objects.get(item=item, action=Action.RELABEL)
    assert event.before["stage"] == "final"
    assert event.before["resolution"] == {"node": "C.2", "method": "majority"}
    assert [(lab["volunteer"], lab["node"]) for lab in event.before["labels"]] == [
        ("volunteer_a", "C.1"),
        ("volunteer_b", "C.2"),
        ("volunteer_c", "C.2"),
    ]
    # again: the item is already open and unlabelled, nothing to do
    assert proposal_send_back(proposal=proposal, lead=personas["lead"]) == 0


# ---------------------------------------------------------------- pages and API


def test_new_proposal_page_takes_the_item_and_shows_the_taxonomy(client, project, personas, trio):
    item = labeled_item(project, trio[:1], ["C.1"], cross_check=False, title="Odd NaN")
    client.force_login(personas["volunteer_a"])
    url = f"/projects/{project.slug}/proposals/new/?item={item.pk}"
    page = client.get(url).content.decode()
    assert "Odd NaN" in page
    assert (
        page.count('name="parent"')
        == 1 + project.taxonomy.nodes.filter(level__in=["type", "theme"]).count()
    )
    response = client.post(
        url, {"item": item.pk, "parent": node(project, "C.1").pk, "name": "NaN in loss"}
    )
    assert response.status_code == 302
    created = project.proposals.get()
    assert list(created.items.all()) == [item]
    listing = client.get(f"/projects/{project.slug}/proposals/").content.decode()
    assert "NaN in loss" in listing
    assert "1 of 5 approve" in listing  # a, b, c, lead, admin; the proposer approved


def test_proposal_api_round_trip(client, project, personas, members):
    client.force_login(personas["volunteer_b"])
    base = f"/api/projects/{project.slug}/proposals/"
    created = client.post(
        base, {"parent": "B", "name": "Tooling"}, content_type="application/json"
    ).json()
    assert (created["parent"], created["status"], created["approvals"]) == ("B", "open", 1)
    for person in members:
        client.force_login(person)
        client.post(
            f"{base}{created['id']}/vote/", {"approve": True}, content_type="application/json"
        )
    client.force_login(personas["lead"])
    added = client.post(f"{base}{created['id']}/add-node/").json()
    assert added["status"] == "added"
    assert added["node"] == node(project, "B").children.order_by("-position").first().code
    assert client.post(f"{base}{created['id']}/send-back/").json() == {"items": 0}
    client.force_login(personas["volunteer_a"])
    assert client.post(f"{base}{created['id']}/add-node/").status_code == 403
