"""The lead decides disputed items: method majority vs lead, reasons, any node at the project's
depth, idempotency and conflicts, re-opening with history kept; the queue's order and filters;
the resolve page and the API."""

import pytest

from annotation.models import Action, AuditEvent, Method, Resolution, Stage
from annotation.review.selectors import QueueFilters, disputed_items, queue_neighbours
from annotation.review.services import item_reopen, item_resolve, item_version
from concord.errors import ConcordError, Conflict
from tests.annotation.lead_helpers import labeled_item, node, trio_fixture  # noqa: F401

# ---------------------------------------------------------------- item_resolve


@pytest.fixture
def disputed(project, trio):
    """Two votes for C.1, one for C.2."""
    return labeled_item(project, trio, ["C.1", "C.1", "C.2"])


def test_cross_check_leaves_a_split_item_disputed(disputed):
    assert disputed.stage == Stage.DISPUTED
    assert disputed.agreement == pytest.approx(2 / 3)


def test_resolving_with_the_majority_label_is_method_majority(project, personas, disputed):
    resolution = item_resolve(item=disputed, lead=personas["lead"], node=node(project, "C.1"))
    disputed.refresh_from_db()
    assert disputed.stage == Stage.FINAL
    assert (resolution.method, resolution.resolver, resolution.reason) == (
        Method.MAJORITY,
        personas["lead"],
        "",
    )
    event = AuditEvent.objects.get(item=disputed, action=Action.RESOLVE)
    assert event.actor == personas["lead"]
    assert event.before == {"stage": "disputed"}
    assert event.after == {"stage": "final", "node": "C.1", "method": "majority", "reason": ""}


def test_a_minority_label_is_a_lead_decision_and_needs_a_reason(project, personas, disputed):
    with pytest.raises(ConcordError, match="say why"):
        item_resolve(item=disputed, lead=personas["lead"], node=node(project, "C.2"))
    disputed.refresh_from_db()
    assert disputed.stage == Stage.DISPUTED
    assert not Resolution.objects.filter(item=disputed).exists()

    resolution = item_resolve(
        item=disputed, lead=personas["lead"], node=node(project, "C.2"), reason="stack trace"
    )
    assert (resolution.method, resolution.reason) == (Method.LEAD, "stack trace")


def test_any_live_node_at_the_project_depth_is_allowed(project, personas, disputed):
    # nobody proposed A.3: still a valid final label, as a lead decision
    resolution = item_resolve(
        item=disputed, lead=personas["lead"], node=node(project, "A.3"), reason="a question"
    )
    assert (resolution.node.code, resolution.method) == ("A.3", Method.LEAD)


@pytest.mark.parametrize("code", ["C", "C.1.i"])
def test_a_node_at_another_depth_is_refused(project, personas, disputed, code):
    with pytest.raises(ConcordError, match="labels at theme depth"):
        item_resolve(item=disputed, lead=personas["lead"], node=node(project, code), reason="x")


def test_a_retired_node_is_refused(project, personas, disputed):
    from django.utils import timezone

    retired = node(project, "C.2")
    retired.retired_at = timezone.now()
    retired.save()
    with pytest.raises(ConcordError, match="retired"):
        item_resolve(item=disputed, lead=personas["lead"], node=retired, reason="x")


def test_the_same_decision_twice_is_one_resolution(project, personas, disputed):
    first = item_resolve(item=disputed, lead=personas["lead"], node=node(project, "C.1"))
    again = item_resolve(item=disputed, lead=personas["lead"], node=node(project, "C.1"))
    assert again.pk == first.pk
    assert AuditEvent.objects.filter(item=disputed, action=Action.RESOLVE).count() == 1


def test_another_decision_on_a_final_item_is_a_conflict(project, personas, disputed):
    item_resolve(item=disputed, lead=personas["lead"], node=node(project, "C.1"))
    with pytest.raises(Conflict):
        item_resolve(item=disputed, lead=personas["admin"], node=node(project, "C.2"), reason="x")


def test_a_stale_form_is_a_conflict(project, personas, disputed):
    version = item_version(disputed)
    item_reopen_stage = disputed.stage
    # someone else resolves and re-opens meanwhile: the item is disputed again, but changed
    item_resolve(item=disputed, lead=personas["admin"], node=node(project, "C.1"))
    item_reopen(item=disputed, lead=personas["admin"], reason="second look")
    with pytest.raises(Conflict, match="changed while you were looking"):
        item_resolve(
            item=disputed,
            lead=personas["lead"],
            node=node(project, "C.2"),
            reason="x",
            expected_stage=item_reopen_stage,
            expected_version=version,
        )


def test_a_post_does_not_make_the_form_stale(project, personas, disputed):
    from annotation.review.discussion import post_add

    version = item_version(disputed)
    post_add(item=disputed, author=personas["volunteer_a"], text="I think C.1")
    item_resolve(
        item=disputed,
        lead=personas["lead"],
        node=node(project, "C.1"),
        expected_stage=Stage.DISPUTED,
        expected_version=version,
    )


def test_an_item_still_labeling_cannot_be_resolved(project, personas, trio):
    item = labeled_item(project, trio[:1], ["C.1"], cross_check=False)
    with pytest.raises(Conflict, match="Only items in cross-check or disputed"):
        item_resolve(item=item, lead=personas["lead"], node=node(project, "C.1"))


# ---------------------------------------------------------------- item_reopen


def test_reopen_keeps_the_decision_in_the_history(project, personas, disputed):
    item_resolve(item=disputed, lead=personas["lead"], node=node(project, "C.2"), reason="trace")
    item_reopen(item=disputed, lead=personas["admin"], reason="new evidence")
    disputed.refresh_from_db()
    assert disputed.stage == Stage.DISPUTED
    assert not Resolution.objects.filter(item=disputed).exists()
    actions = list(AuditEvent.objects.filter(item=disputed).values_list("action", flat=True))
    assert actions == [Action.CROSS_CHECK, Action.RESOLVE, Action.REOPEN]
    reopen = AuditEvent.objects.get(item=disputed, action=Action.REOPEN)
    assert reopen.before == {
        "stage": "final",
        "node": "C.2",
        "method": "lead",
        "resolver": "lead",
        "reason": "trace",
    }
    assert reopen.after == {"stage": "disputed", "reason": "new evidence"}
    # and it can be decided again
    item_resolve(item=disputed, lead=personas["lead"], node=node(project, "C.1"))


def test_reopen_needs_a_final_item_and_a_reason(project, personas, trio, disputed):
    labeling = labeled_item(project, trio[:1], ["C.1"], cross_check=False)
    with pytest.raises(Conflict, match="Only final items"):
        item_reopen(item=labeling, lead=personas["lead"], reason="x")
    item_resolve(item=disputed, lead=personas["lead"], node=node(project, "C.1"))
    with pytest.raises(ConcordError, match="Say why"):
        item_reopen(item=disputed, lead=personas["lead"], reason="  ")


def test_reopen_of_an_imported_final_item_keeps_its_agreement(labeled_project, personas):
    item = labeled_project.items.first()  # imported: final, agreement computed as live labels'
    assert item.stage == Stage.FINAL
    assert item.agreement is not None
    item_reopen(item=item, lead=personas["lead"], reason="check")
    item.refresh_from_db()
    assert item.stage == Stage.DISPUTED
    assert item.agreement is not None


# ---------------------------------------------------------------- queue


@pytest.fixture
def queue(project, trio):
    """Four disputed items with agreement 2/3, 1/3, 2/3 (another repo) and one final item."""
    return {
        "c1": labeled_item(project, trio, ["C.1", "C.1", "C.2"]),
        "split": labeled_item(project, trio, ["A.1", "B.1", "C.1"]),
        "mind": labeled_item(
            project, trio, ["B.1", "B.2", "B.2"], owner="ascend", repo="MindSpeed"
        ),
        "final": labeled_item(project, trio, ["C.3", "C.3", "C.3"]),
    }


def test_queue_is_lowest_agreement_first(project, queue):
    assert list(disputed_items(project)) == [queue["split"], queue["c1"], queue["mind"]]


@pytest.mark.parametrize(
    ("filters", "expected"),
    [
        (QueueFilters(type="C"), ["split", "c1"]),
        (QueueFilters(type="B"), ["split", "mind"]),
        (QueueFilters(theme="C.2"), ["c1"]),
        (QueueFilters(repository="ascend/MindSpeed"), ["mind"]),
        (QueueFilters(type="C", repository="NVIDIA/Megatron-LM"), ["split", "c1"]),
        (QueueFilters(theme="C.3"), []),
    ],
)
def test_queue_filters(project, queue, filters, expected):
    assert list(disputed_items(project, filters)) == [queue[k] for k in expected]


def test_queue_neighbours_follow_the_order_even_after_a_decision(project, personas, queue):
    filters = QueueFilters()
    assert queue_neighbours(project, filters, queue["split"]) == (None, queue["c1"].pk)
    assert queue_neighbours(project, filters, queue["c1"]) == (queue["split"].pk, queue["mind"].pk)
    item_resolve(item=queue["c1"], lead=personas["lead"], node=node(project, "C.1"))
    assert queue_neighbours(project, filters, queue["c1"]) == (queue["split"].pk, queue["mind"].pk)


# ---------------------------------------------------------------- pages


def test_queue_page_lists_items_with_their_votes_and_filters(client, personas, project, queue):
    client.force_login(personas["lead"])
    page = client.get(f"/projects/{project.slug}/disputed/?type=B").content.decode()
    assert "3 disputed" not in page
    assert "2 disputed items match" in page
    assert page.index(f'data-item="{queue["split"].pk}"') < page.index(
        f'data-item="{queue["mind"].pk}"'
    )
    assert "B.2</span>\u00d72" in page


def test_resolve_page_shows_labels_suggestion_and_picker(client, personas, project, disputed):
    client.force_login(personas["lead"])
    response = client.get(f"/projects/{project.slug}/items/{disputed.pk}/resolve/")
    page = response.content.decode()
    assert response.status_code == 200
    for name in ("volunteer_a", "volunteer_b", "volunteer_c", "summary by volunteer_b"):
        assert name in page
    assert f'data-suggestion="{node(project, "C.1").pk}"' in page
    assert 'class="votes-chart"' in page
    # every live theme is offered, not only the proposed ones
    assert page.count('name="node"') == project.taxonomy.nodes.filter(level="theme").count()
    assert 'id="audit-trail"' in page
    assert "Reached cross-check" in page


def test_resolve_form_resolves_and_moves_to_the_next_item(client, personas, project, queue):
    client.force_login(personas["lead"])
    item = queue["split"]
    response = client.post(
        f"/projects/{project.slug}/items/{item.pk}/resolve/",
        {
            "node": node(project, "C.1").pk,
            "reason": "the trace shows a kernel bug",
            "expected_stage": "disputed",
            "expected_version": item_version(item),
        },
    )
    assert response.status_code == 302
    assert response["Location"] == f"/projects/{project.slug}/items/{queue['c1'].pk}/resolve/"
    item.refresh_from_db()
    assert item.stage == Stage.FINAL
    page = client.get(f"/projects/{project.slug}/items/{item.pk}/resolve/").content.decode()
    assert 'id="final-label"' in page
    assert "majority by lead" in page  # C.1 is tied first with A.1 and B.1
    # the project page shows the decision in the lead panel
    panel = client.get(f"/projects/{project.slug}/").content.decode()
    assert 'id="recent-decisions"' in panel
    assert "C.1" in panel


def test_resolve_form_without_a_reason_explains_and_keeps_the_item(
    client, personas, project, disputed
):
    client.force_login(personas["lead"])
    response = client.post(
        f"/projects/{project.slug}/items/{disputed.pk}/resolve/", {"node": node(project, "C.2").pk}
    )
    assert response.status_code == 400
    assert "say why you chose it" in response.content.decode()
    disputed.refresh_from_db()
    assert disputed.stage == Stage.DISPUTED


def test_stale_resolve_form_answers_409(client, personas, project, disputed):
    client.force_login(personas["lead"])
    url = f"/projects/{project.slug}/items/{disputed.pk}/resolve/"
    response = client.post(
        url, {"node": node(project, "C.1").pk, "expected_stage": "disputed", "expected_version": 1}
    )
    assert response.status_code == 409


def test_reopen_button(client, personas, project, disputed):
    client.force_login(personas["lead"])
    item_resolve(item=disputed, lead=personas["lead"], node=node(project, "C.1"))
    response = client.post(
        f"/projects/{project.slug}/items/{disputed.pk}/reopen/", {"reason": "looks wrong"}
    )
    assert response.status_code == 302
    disputed.refresh_from_db()
    assert disputed.stage == Stage.DISPUTED
    page = client.get(response["Location"]).content.decode()
    assert "Re-opened" in page
    assert "looks wrong" in page


# ---------------------------------------------------------------- API


@pytest.fixture
def api(client, personas):
    client.force_login(personas["lead"])
    return client


def test_api_disputed_is_paginated_and_filtered(api, project, queue):
    body = api.get(f"/api/projects/{project.slug}/disputed/?type=C").json()
    assert body["count"] == 2
    assert [r["id"] for r in body["results"]] == [queue["split"].pk, queue["c1"].pk]
    assert body["results"][1]["votes"][0] == {
        "node_id": node(project, "C.1").pk,
        "code": "C.1",
        "name": node(project, "C.1").name,
        "n": 2,
    }


def test_api_review_resolve_and_reopen(api, project, disputed):
    base = f"/api/projects/{project.slug}/items/{disputed.pk}"
    review = api.get(f"{base}/review/").json()
    assert review["suggestion"]["code"] == "C.1"
    assert [label["volunteer"] for label in review["labels"]] == [
        "volunteer_a",
        "volunteer_b",
        "volunteer_c",
    ]
    body = {"node": "C.2", "expected_stage": review["stage"], "expected_version": review["version"]}
    refused = api.post(f"{base}/resolve/", body, content_type="application/json")
    assert refused.status_code == 400
    assert "say why" in refused.json()["detail"]
    resolved = api.post(
        f"{base}/resolve/", {**body, "reason": "trace"}, content_type="application/json"
    )
    assert resolved.status_code == 200
    assert resolved.json()["method"] == "lead"
    assert resolved.json()["resolver"] == "lead"
    again = api.post(
        f"{base}/resolve/", {**body, "reason": "trace"}, content_type="application/json"
    )
    assert again.status_code == 200
    assert again.json() == resolved.json()  # the same decision
    no_reason = api.post(f"{base}/reopen/", {"reason": ""}, content_type="application/json")
    assert no_reason.status_code == 400
    reopened = api.post(f"{base}/reopen/", {"reason": "again"}, content_type="application/json")
    assert reopened.json()["stage"] == "disputed"
    audit = api.get(f"{base}/review/").json()["audit"]
    assert [e["action"] for e in audit] == ["cross_check", "resolve", "reopen"]


def test_api_resolve_with_an_unknown_code(api, project, disputed):
    url = f"/api/projects/{project.slug}/items/{disputed.pk}/resolve/"
    response = api.post(url, {"node": "Z.9"}, content_type="application/json")
    assert response.status_code == 400
    assert "Z.9" in response.json()["detail"]


def test_api_item_of_another_project_is_404(api, project, personas, disputed):
    from annotation.models import Membership, Project

    other = Project.objects.get(slug="other")
    Membership.objects.create(project=other, user=personas["lead"], role="lead")
    assert api.get(f"/api/projects/other/items/{disputed.pk}/review/").status_code == 404
