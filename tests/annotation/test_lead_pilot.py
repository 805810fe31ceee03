"""The pilot: a random sample of open, unlabelled items; volunteers wait while it runs; once
closed, the pilot page shows the lead's labels and summaries to every member."""

import pytest

from annotation.models import Action, Annotation, AuditEvent, PilotStatus, Stage
from annotation.review.pilot import pilot_close, pilot_start
from concord.errors import ConcordError, Conflict
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
