"""Who may use each lead page and endpoint: anonymous people are sent to sign in (pages) or
refused (API); a member of another project gets 404 (the project is not revealed); a volunteer
gets 403 where the lead role is needed; leads and admins get in. Refused requests change
nothing (no audit row)."""

from dataclasses import dataclass

import pytest
from django.urls import reverse

from annotation.models import AuditEvent
from annotation.review.proposals import proposal_create
from annotation.review.services import item_resolve
from tests.annotation.lead_helpers import labeled_item, node, open_item, trio_fixture  # noqa: F401

PEOPLE = ("anonymous", "outsider", "volunteer_a", "lead", "admin")
ALLOWED = {
    "volunteer": {"volunteer_a", "lead", "admin"},
    "lead": {"lead", "admin"},
}


@dataclass(frozen=True)
class Call:
    name: str
    least: str
    method: str = "get"
    kwargs: str = "project"  # project | disputed | final | proposal
    body: tuple = ()

    def __str__(self) -> str:
        return f"{self.method} {self.name}"


CALLS = [
    Call("disputed-queue", "lead"),
    Call("item-resolve", "lead", kwargs="disputed"),
    Call("item-resolve", "lead", "post", "disputed", (("node", "C1"),)),
    Call("item-reopen", "lead", "post", "final", (("reason", "again"),)),
    Call("item-discussion", "volunteer", kwargs="disputed"),
    Call("item-discussion", "volunteer", "post", "disputed", (("text", "hi"),)),
    Call("project-pilot", "volunteer"),
    Call("project-pilot", "lead", "post", body=(("action", "start"), ("n", 1))),
    Call("proposal-list", "volunteer"),
    Call("proposal-new", "volunteer"),
    Call("proposal-new", "volunteer", "post", body=(("name", "New category"),)),
    Call("proposal-vote", "volunteer", "post", "proposal", (("approve", "1"),)),
    Call("proposal-add-node", "lead", "post", "proposal"),
    Call("proposal-send-back", "lead", "post", "proposal"),
    Call("project-stats", "volunteer"),
    Call("api-disputed", "lead"),
    Call("api-item-review", "lead", kwargs="disputed"),
    Call("api-item-resolve", "lead", "post", "disputed", (("node", "C.1"),)),
    Call("api-item-reopen", "lead", "post", "final", (("reason", "again"),)),
    Call("api-item-posts", "volunteer", kwargs="disputed"),
    Call("api-item-posts", "volunteer", "post", "disputed", (("text", "hi"),)),
    Call("api-pilot", "lead", "post", body=(("action", "start"), ("n", 1))),
    Call("api-proposals", "volunteer"),
    Call("api-proposals", "volunteer", "post", body=(("name", "New category"),)),
    Call("api-proposal-vote", "volunteer", "post", "proposal", (("approve", True),)),
    Call("api-proposal-add-node", "lead", "post", "proposal"),
    Call("api-proposal-send-back", "lead", "post", "proposal"),
    Call("api-stats", "volunteer"),
]


@pytest.fixture
def world(project, personas, trio):
    disputed = labeled_item(project, trio, ["C.1", "C.1", "C.2"])
    final = labeled_item(project, trio, ["C.2", "C.2", "C.1"])
    item_resolve(item=final, lead=personas["lead"], node=node(project, "C.2"))
    open_item(project)
    proposal = proposal_create(
        project=project, proposer=personas["lead"], parent=node(project, "C"), name="Proposed"
    )
    kwargs = {
        "project": {"slug": project.slug},
        "disputed": {"slug": project.slug, "item_id": disputed.pk},
        "final": {"slug": project.slug, "item_id": final.pk},
        "proposal": {"slug": project.slug, "pk": proposal.pk},
    }
    return kwargs, {"C1": str(node(project, "C.1").pk)}


@pytest.mark.parametrize("call", CALLS, ids=str)
def test_who_gets_in(client, personas, world, call):
    kwargs, values = world
    url = reverse(call.name, kwargs=kwargs[call.kwargs])
    body = {k: values.get(v, v) if isinstance(v, str) else v for k, v in call.body}
    api = call.name.startswith("api-")
    for person in PEOPLE:
        client.logout()
        if person != "anonymous":
            client.force_login(personas[person])
        events = AuditEvent.objects.count()
        if call.method == "get":
            response = client.get(url)
        elif api:
            response = client.post(url, body, content_type="application/json")
        else:
            response = client.post(url, body)
        code = response.status_code
        assert code < 500, f"{person}: {code}"
        if person in ALLOWED[call.least]:
            assert code not in (401, 403, 404), f"{person} kept out ({code})"
            assert not (code == 302 and "/accounts/login/" in response["Location"])
            continue
        if person == "anonymous":
            expected = (401,) if api else (302,)
        elif person == "outsider":
            expected = (404,)
        else:
            expected = (403,)
        assert code in expected, f"{person} got {code}, expected {expected}"
        if code == 302:
            assert "/accounts/login/" in response["Location"]
        assert AuditEvent.objects.count() == events, f"{person} changed something"
