"""Isolation between projects that share a taxonomy: a category one project adds through a
proposal is that project's only (annotation.project_nodes), and only its members decide on its
proposals."""

from __future__ import annotations

import html
import re

import pytest
from django.core.exceptions import PermissionDenied
from rest_framework.test import APIClient

from annotation.models import ProjectNode, ProposalStatus, Role
from annotation.project_nodes import foreign_node_ids, project_nodes
from annotation.projects.importers import ImportFailed, study_labels_import
from annotation.reporting.exports import export_options
from annotation.reporting.reports import project_distribution
from annotation.review.proposals import (
    proposal_add_node,
    proposal_create,
    proposal_send_back,
    proposal_vote,
)
from annotation.review.services import item_resolve
from concord.errors import ConcordError
from tests.annotation.labeling_helpers import hand_out, items
from tests.annotation.lead_helpers import labeled_item, node, trio_fixture  # noqa: F401
from tests.factories import MembershipFactory, ProjectFactory, UserFactory

URL1 = "https://github.com/NVIDIA/Megatron-LM/issues/1516"


def page_text(response) -> str:
    return " ".join(html.unescape(re.sub(r"<[^>]+>", " ", response.content.decode())).split())


@pytest.fixture
def project_b(project):
    """A second project on the study taxonomy (`project` is A), with a lead and a volunteer."""
    b = ProjectFactory(taxonomy=project.taxonomy, slug="bee")
    b.lead = UserFactory(username="lead_b")
    b.volunteer = UserFactory(username="volunteer_of_b")
    MembershipFactory(project=b, user=b.lead, role=Role.LEAD)
    MembershipFactory(project=b, user=b.volunteer, role=Role.VOLUNTEER)
    return b


def accepted(project_b, *, parent_code: str | None, name: str):
    proposal = proposal_create(
        project=project_b,
        proposer=project_b.volunteer,
        parent=node(project_b, parent_code) if parent_code else None,
        name=name,
    )
    proposal_vote(proposal=proposal, member=project_b.lead, approve=True)
    proposal.refresh_from_db()
    assert proposal.status == ProposalStatus.ACCEPTED
    return proposal


@pytest.fixture
def b_proposal(project_b):
    return accepted(project_b, parent_code="C", name="Checkpoint format drift")


@pytest.fixture
def b_theme(project_b, b_proposal):
    """B's proposal accepted and added: a new theme under C in the shared taxonomy."""
    return proposal_add_node(proposal=b_proposal, lead=project_b.lead)


def test_the_added_node_is_recorded_as_bs(project, project_b, personas, b_proposal, b_theme):
    assert b_theme.taxonomy_id == project.taxonomy_id
    assert ProjectNode.objects.get(node=b_theme).project == project_b
    assert b_theme.pk in foreign_node_ids(project)
    assert b_theme.pk not in foreign_node_ids(project_b)
    assert not project_nodes(project).filter(pk=b_theme.pk).exists()
    assert project_nodes(project_b).filter(pk=b_theme.pk).exists()
    # adding again is still idempotent, and records nothing twice
    assert proposal_add_node(proposal=b_proposal, lead=project_b.lead) == b_theme
    assert ProjectNode.objects.filter(node=b_theme).count() == 1


def test_as_volunteer_cannot_label_with_bs_code(client, project, personas, b_theme):
    (item,) = items(project, 1)
    hand_out(item, personas["volunteer_a"])
    api = APIClient()
    api.force_authenticate(personas["volunteer_a"])
    url = f"/api/projects/{project.slug}/items/{item.pk}/annotation/"
    refused = api.put(url, {"node": b_theme.code, "summary": "x"}, format="json")
    assert refused.status_code == 400
    assert b_theme.code in refused.json()["detail"]
    assert "another project" in refused.json()["detail"]

    client.force_login(personas["volunteer_a"])
    page = client.post(
        f"/projects/{project.slug}/items/{item.pk}/label/",
        {"node": b_theme.code, "summary": "my words"},
    )
    assert page.status_code == 400
    assert f"{b_theme.code} is not a category of {project}" in page_text(page)
    assert not item.annotations.exists()
    # the rest of the taxonomy still works
    assert api.put(url, {"node": "C.1", "summary": "x"}, format="json").status_code == 201


def test_as_picker_leaves_it_out_bs_shows_it(client, project, project_b, personas, b_theme):
    items(project, 1)
    items(project_b, 1)
    client.force_login(personas["volunteer_a"])
    page = client.get(f"/projects/{project.slug}/label/").content.decode()
    assert 'value="C.1"' in page
    assert f'value="{b_theme.code}"' not in page
    assert b_theme.name not in page
    client.force_login(project_b.volunteer)
    page = client.get(f"/projects/{project_b.slug}/label/").content.decode()
    assert f'value="{b_theme.code}"' in page  # B's page: a different cache entry


def test_bs_volunteers_label_with_it(project_b, b_theme):
    (item,) = items(project_b, 1)
    hand_out(item, project_b.volunteer)
    api = APIClient()
    api.force_authenticate(project_b.volunteer)
    url = f"/api/projects/{project_b.slug}/items/{item.pk}/annotation/"
    created = api.put(url, {"node": b_theme.code, "summary": "x"}, format="json")
    assert created.status_code == 201
    assert created.json()["node"] == b_theme.code


def test_as_import_refuses_bs_code_bs_takes_it(project, project_b, b_theme, tmp_path):
    path = tmp_path / "labels.csv"
    path.write_text(f"Issue_URL,Label1,Final_Label\n{URL1},{b_theme.code},C.1\n", encoding="utf-8")
    with pytest.raises(ImportFailed) as caught:
        study_labels_import(project=project, path=path)
    (error,) = caught.value.errors
    assert (error.where.line, error.where.column) == (2, "Label1")
    assert b_theme.code in error.message
    assert not project.items.exists()
    assert study_labels_import(project=project_b, path=path).annotations_created == 1


def test_a_cannot_resolve_with_it_nor_propose_under_it(project, personas, trio, b_theme):
    item = labeled_item(project, trio, ["C.1", "C.2", "C.2"])
    with pytest.raises(ConcordError, match=re.escape(f"{b_theme.code} is not a category")):
        item_resolve(item=item, lead=personas["lead"], node=b_theme)
    with pytest.raises(ConcordError, match="another project's category"):
        proposal_create(project=project, proposer=personas["lead"], parent=b_theme, name="Sub")


def test_as_proposal_form_does_not_offer_it(client, project, personas, b_theme):
    client.force_login(personas["volunteer_a"])
    page = client.get(f"/projects/{project.slug}/proposals/new/").content.decode()
    assert f'value="{b_theme.pk}"' not in page
    assert b_theme.name not in page
    response = client.post(
        f"/projects/{project.slug}/proposals/new/", {"parent": b_theme.pk, "name": "Sub"}
    )
    assert response.status_code == 200  # the form refuses the choice
    assert not project.proposals.exists()


def test_a_new_type_of_b_is_no_type_of_as_reports(project, project_b, personas):
    new_type = proposal_add_node(
        proposal=accepted(project_b, parent_code=None, name="Security"), lead=project_b.lead
    )
    assert new_type.code not in [t.code for t in project_distribution(project).by_type]
    assert new_type.code in [t.code for t in project_distribution(project_b).by_type]
    with pytest.raises(ConcordError, match="is not a type"):
        export_options(project=project, format="final", type=new_type.code)
    assert export_options(project=project_b, format="final", type=new_type.code)


# ---------------------------------------------------------------- deciding is B's members' only


def test_a_member_of_a_cannot_vote_add_or_send_back_on_bs_proposal(
    client, project, project_b, personas, b_proposal
):
    api = APIClient()
    for who in ("volunteer_a", "lead", "admin"):
        api.force_authenticate(personas[who])
        client.force_login(personas[who])
        for verb in ("vote", "add-node", "send-back"):
            # through B's URLs: not a member of B, so B is not even revealed
            b_url = f"/api/projects/{project_b.slug}/proposals/{b_proposal.pk}/{verb}/"
            assert api.post(b_url, {"approve": False}, format="json").status_code == 404
            page = f"/projects/{project_b.slug}/proposals/{b_proposal.pk}/{verb}/"
            assert client.post(page, {"approve": "0"}).status_code == 404
            # B's proposal id under A's URLs: no such proposal in A
            # (403 first for a volunteer of A on a lead's verb)
            refused = {404, 403} if who == "volunteer_a" and verb != "vote" else {404}
            a_url = f"/api/projects/{project.slug}/proposals/{b_proposal.pk}/{verb}/"
            assert api.post(a_url, {"approve": False}, format="json").status_code in refused
            page = f"/projects/{project.slug}/proposals/{b_proposal.pk}/{verb}/"
            assert client.post(page, {"approve": "0"}).status_code in refused
    # the services check it too, whoever calls them
    with pytest.raises(PermissionDenied):
        proposal_vote(proposal=b_proposal, member=personas["lead"], approve=False)
    with pytest.raises(PermissionDenied):
        proposal_add_node(proposal=b_proposal, lead=personas["lead"])
    with pytest.raises(PermissionDenied):
        proposal_send_back(proposal=b_proposal, lead=personas["lead"])
    with pytest.raises(PermissionDenied):  # a volunteer of B is no lead
        proposal_add_node(proposal=b_proposal, lead=project_b.volunteer)
    b_proposal.refresh_from_db()
    assert (b_proposal.status, b_proposal.node) == (ProposalStatus.ACCEPTED, None)
    assert not b_proposal.votes.filter(member__in=personas.values()).exists()
