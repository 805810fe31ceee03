"""The pilot: a random sample of open, unlabelled items; volunteers wait while it runs; once
closed, the pilot page shows the lead's labels and summaries to every member."""

import pytest

from annotation.labeling.assignment import next_item
from annotation.lifecycle import Move, items_move
from annotation.models import Action, Annotation, AuditEvent, Item, PilotStatus, Role, Stage
from annotation.review.pilot import pilot_close, pilot_examples, pilot_items, pilot_start
from annotation.review.services import item_reopen
from concord.errors import ConcordError, Conflict
from tests.annotation.labeling_helpers import label
from tests.annotation.lead_helpers import labeled_item, node, open_item, trio_fixture  # noqa: F401


@pytest.fixture
def open_items(project):
    return [open_item(project) for _ in range(12)]


def test_start_flags_a_random_sample_of_open_unlabelled_items(project, personas, trio, open_items):
    labeled = labeled_item(project, trio[:1], ["C.1"], cross_check=False)  # has a label: not open
    taken = pilot_start(project=project, lead=personas["lead"], n=5)
    assert taken == 5
    project.refresh_from_db()
    assert project.pilot_status == PilotStatus.RUNNING
    flagged = set(project.items.filter(in_pilot=True).values_list("pk", flat=True))
    assert len(flagged) == 5
    assert flagged <= {i.pk for i in open_items}
    assert labeled.pk not in flagged
    event = AuditEvent.objects.get(project=project, action=Action.PILOT)
    assert event.after == {"status": "running", "asked": 5, "items": 5}


def test_sample_is_random(project, personas, open_items):
    samples = set()
    for _ in range(4):
        pilot_start(project=project, lead=personas["lead"], n=3)
        samples.add(frozenset(project.items.filter(in_pilot=True).values_list("pk", flat=True)))
        project.items.update(in_pilot=False)
        pilot_close(project=project, lead=personas["lead"])
        project.pilot_status = PilotStatus.NONE
        project.save()
    assert len(samples) > 1  # 4 draws of 3 from 12 all equal: about 1 in 10^7


def test_sample_is_capped_by_the_open_items(project, personas, open_items):
    assert pilot_start(project=project, lead=personas["lead"], n=50) == 12


def test_refusals(project, personas, open_items):
    with pytest.raises(ConcordError):
        pilot_start(project=project, lead=personas["lead"], n=0)
    with pytest.raises(Conflict):
        pilot_close(project=project, lead=personas["lead"])
    pilot_start(project=project, lead=personas["lead"], n=2)
    with pytest.raises(Conflict, match="already running"):
        pilot_start(project=project, lead=personas["lead"], n=2)


def test_no_open_items(project, personas):
    with pytest.raises(ConcordError, match="No open"):
        pilot_start(project=project, lead=personas["lead"], n=2)


def test_close_then_every_member_sees_the_worked_examples(client, project, personas, open_items):
    pilot_start(project=project, lead=personas["lead"], n=2)
    pilot_item = project.items.filter(in_pilot=True).select_related("issue").first()
    Annotation.objects.create(
        item=pilot_item,
        volunteer=personas["lead"],
        node=node(project, "C.1"),
        summary="loss diverges after resume",
        is_pilot=True,
    )
    project.items.filter(pk=pilot_item.pk).update(label_count=1, stage=Stage.LABELING)

    client.force_login(personas["volunteer_a"])
    url = f"/projects/{project.slug}/pilot/"
    while_running = client.get(url).content.decode()
    assert "loss diverges after resume" not in while_running
    assert "appear here once it closes" in while_running

    pilot_close(project=project, lead=personas["lead"])
    project.refresh_from_db()
    assert project.pilot_status == PilotStatus.CLOSED
    pilot_close(project=project, lead=personas["lead"])  # again: nothing changes
    assert AuditEvent.objects.filter(action=Action.PILOT).count() == 2
    page = client.get(url).content.decode()
    assert "loss diverges after resume" in page
    assert "worked examples" in page
    # the worked example is final on the lead's label, so no volunteer is sent it to label blind
    pilot_item.refresh_from_db()
    assert pilot_item.stage == Stage.FINAL
    assert (pilot_item.resolution.node.code, pilot_item.resolution.method) == ("C.1", "lead")
    # the sampled item the lead did not label goes back to the pool
    assert list(project.items.filter(in_pilot=True)) == [pilot_item]


def test_pilot_page_form_and_api(client, project, personas, open_items):
    client.force_login(personas["lead"])
    url = f"/projects/{project.slug}/pilot/"
    assert client.post(url, {"action": "start", "n": "3"}).status_code == 302
    assert project.items.filter(in_pilot=True).count() == 3
    response = client.post(
        f"/api/projects/{project.slug}/pilot/", {"action": "close"}, content_type="application/json"
    )
    # nothing was labelled in the pilot, so no worked examples stay: all three go back
    assert response.json() == {"status": "closed", "items": 0}
    missing_n = client.post(
        f"/api/projects/{project.slug}/pilot/", {"action": "start"}, content_type="application/json"
    )
    assert missing_n.status_code == 400
    client.force_login(personas["volunteer_a"])
    assert client.post(url, {"action": "start", "n": "3"}).status_code == 403


# ---------------------------------------------------------------- an example re-opened


def closed_pilot_example(project, lead) -> Item:
    """A pilot of one item that the lead labels (through "next item", as the page does) and
    closes: the item is a final worked example."""
    item = open_item(project, title="WORKED-EXAMPLE-TITLE")
    assert pilot_start(project=project, lead=lead, n=1) == 1
    assert next_item(project=project, volunteer=lead) == item
    label(item, lead, "C.1", summary="WORKED-EXAMPLE-SUMMARY")
    pilot_close(project=project, lead=lead)
    item.refresh_from_db()
    assert (item.stage, item.in_pilot) == (Stage.FINAL, True)
    return item


def test_a_reopened_example_leaves_the_pilot_and_is_labeled_blind(client, project, personas):
    lead, me = personas["lead"], personas["volunteer_a"]
    item = closed_pilot_example(project, lead)
    url = f"/projects/{project.slug}/pilot/"
    client.force_login(me)
    assert "WORKED-EXAMPLE-SUMMARY" in client.get(url).content.decode()  # a worked example

    item_reopen(item=item, lead=lead, reason="the definitions changed")
    item.refresh_from_db()
    # one label short of k: back to labeling, out of the pilot, in the same transaction
    assert (item.stage, item.in_pilot, item.label_count) == (Stage.LABELING, False, 1)
    pilot_label = Annotation.objects.get(item=item)
    assert (pilot_label.volunteer, pilot_label.is_pilot) == (lead, False)  # a label like any

    page = client.get(url).content.decode()
    assert "WORKED-EXAMPLE-SUMMARY" not in page
    assert "WORKED-EXAMPLE-TITLE" not in page
    assert item.issue.url not in page
    # handed to volunteers and labeled blind: the lead's label counts toward k
    assert next_item(project=project, volunteer=me) == item
    label(item, me, "C.1", summary="mine")
    label(item, personas["volunteer_b"], "C.1", summary="theirs")
    item.refresh_from_db()
    assert (item.stage, item.label_count, item.resolution.method) == (Stage.FINAL, 3, "unanimous")


def test_the_pilot_page_never_shows_members_an_item_that_can_be_labeled(client, project, personas):
    """Even an item some path left in the pilot while moving it back (the lifecycle takes it
    out): members see final examples only; the lead still sees the whole sample."""
    item = closed_pilot_example(project, personas["lead"])
    Item.objects.filter(pk=item.pk).update(stage=Stage.LABELING)
    assert list(pilot_items(project, Role.VOLUNTEER)) == []
    assert list(pilot_examples(project, Role.VOLUNTEER)) == []
    assert list(pilot_items(project, Role.LEAD)) == [item]
    client.force_login(personas["volunteer_a"])
    page = client.get(f"/projects/{project.slug}/pilot/").content.decode()
    assert "WORKED-EXAMPLE-SUMMARY" not in page


def test_every_move_back_ends_the_pilot_role(project, personas):
    """The lifecycle's moves back (an import too, in bulk) take the item out of the pilot."""
    item = closed_pilot_example(project, personas["lead"])
    items_move(project=project, moves=[Move(item.pk, Stage.FINAL, Stage.LABELING)], action="import")
    item.refresh_from_db()
    assert (item.stage, item.in_pilot) == (Stage.LABELING, False)
    assert not Annotation.objects.filter(item=item, is_pilot=True).exists()
