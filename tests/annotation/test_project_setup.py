"""Projects without the Django admin: create (page, API, command), edit settings with a
guidelines preview, archive (the labeling rule hands out and takes nothing; exports still work)."""

from __future__ import annotations

import pytest
from django.core.management import CommandError, call_command
from rest_framework.test import APIClient

from annotation.gate import OPERATOR, Write
from annotation.labeling.assignment import NoneReason, next_item_claim
from annotation.models import (
    Action,
    Annotation,
    AuditEvent,
    ItemImport,
    Membership,
    Project,
    Role,
)
from annotation.projects.services import project_items_add
from annotation.projects.settings import project_archive
from concord.errors import Conflict
from tests.annotation.labeling_helpers import items
from tests.factories import IssueFactory, UserFactory

SETTINGS = {
    "name": "LLM issues 2026",
    "slug": "llm-2026",
    "overlap_k": "7",
    "label_depth": "theme",
    "screening_enabled": "on",
    "screening_votes": "2",
    "screening_rule": "lead",
    "reservation_minutes": "20",
    "quota_per_volunteer": "",
    "reveal_after_cross_check": "on",
    "guidelines": "Label the **root cause**.",
}


@pytest.fixture
def staff(db):
    return UserFactory(username="site-admin", is_staff=True, is_superuser=True)


def test_staff_create_a_project_on_the_page_and_become_its_admin(client, staff, study_taxonomy):
    client.force_login(staff)
    response = client.post("/new-project/", {**SETTINGS, "taxonomy": study_taxonomy.pk})
    assert response.status_code == 302
    project = Project.objects.get(slug="llm-2026")
    assert response["Location"] == f"/projects/{project.slug}/"
    assert (project.overlap_k, project.reservation_minutes, project.quota_per_volunteer) == (
        7,
        20,
        None,
    )
    assert Membership.objects.get(project=project, user=staff).role == Role.ADMIN
    event = AuditEvent.objects.get(project=project, action=Action.PROJECT)
    assert (event.after["overlap_k"], event.actor) == (7, staff)


def test_a_taken_slug_or_a_k_of_zero_is_named_beside_its_field(client, staff, project):
    client.force_login(staff)
    data = {**SETTINGS, "taxonomy": project.taxonomy_id, "slug": project.slug, "overlap_k": "0"}
    page = client.post("/new-project/", data)
    assert page.status_code == 200
    errors = page.context["form"].errors
    assert {"slug", "overlap_k"} <= set(errors)
    assert Project.objects.count() == 1


def test_guidelines_preview_is_sanitized_and_saves_nothing(client, staff, study_taxonomy):
    client.force_login(staff)
    hostile = "Hello <script>alert(1)</script> [x](javascript:alert(2)) **bold**"
    data = {**SETTINGS, "taxonomy": study_taxonomy.pk, "guidelines": hostile, "preview": ""}
    page = client.post("/new-project/", data)
    html = page.content.decode()
    preview = html[html.index('id="guidelines-preview"') :]
    assert "<strong>bold</strong>" in preview
    assert "<script>" not in preview
    assert "javascript:" not in preview
    assert not Project.objects.filter(slug="llm-2026").exists()


def test_a_project_admin_edits_settings_and_only_changes_are_audited(client, personas, project):
    client.force_login(personas["admin"])
    page = client.get(f"/projects/{project.slug}/settings/")
    assert page.status_code == 200
    data = {**SETTINGS, "slug": project.slug, "taxonomy": project.taxonomy_id, "overlap_k": "5"}
    assert client.post(f"/projects/{project.slug}/settings/", data).status_code == 302
    project.refresh_from_db()
    assert (project.name, project.overlap_k) == ("LLM issues 2026", 5)
    event = AuditEvent.objects.filter(project=project, action=Action.PROJECT).last()
    assert (event.before["overlap_k"], event.after["overlap_k"]) == (3, 5)
    assert "slug" not in event.after  # unchanged fields are not in the row


def test_taxonomy_cannot_change_once_the_project_has_labels(client, personas, labeled_project):
    from taxonomy.models import Taxonomy

    other = Taxonomy.objects.create(name="Other", version="1")
    client.force_login(personas["admin"])
    data = {**SETTINGS, "slug": labeled_project.slug, "taxonomy": other.pk}
    page = client.post(f"/projects/{labeled_project.slug}/settings/", data)
    assert page.status_code == 200
    assert "cannot change" in page.content.decode()
    labeled_project.refresh_from_db()
    assert labeled_project.taxonomy.name == "LLM challenges"


def test_archived_project_hands_out_and_takes_no_label_but_still_exports(client, personas, project):
    (item,) = items(project, 1)
    client.force_login(personas["admin"])
    assert client.post(f"/projects/{project.slug}/archive/", {"archive": "1"}).status_code == 302
    project.refresh_from_db()
    assert project.archived_at is not None

    claim = next_item_claim(project=project, volunteer=personas["volunteer_a"])
    assert (claim.item, claim.reason) == (None, NoneReason.ARCHIVED)
    api = APIClient()
    api.force_authenticate(personas["volunteer_a"])
    put = api.put(
        f"/api/projects/{project.slug}/items/{item.pk}/annotation/",
        {"node": "C.1", "summary": "x"},
        format="json",
    )
    assert put.status_code == 409
    assert "archived" in put.json()["detail"]
    assert not Annotation.objects.exists()
    export = client.get(f"/api/projects/{project.slug}/exports/repositories/")
    assert export.status_code == 200
    assert f"{item.issue.owner}/{item.issue.repo}" in b"".join(export.streaming_content).decode()
    assert "archived" in client.get(f"/projects/{project.slug}/").content.decode().lower()

    client.post(f"/projects/{project.slug}/archive/", {"archive": "0"})
    project.refresh_from_db()
    claim = next_item_claim(project=project, volunteer=personas["volunteer_a"])
    assert claim.item == item


def test_archived_project_refuses_edits_of_own_labels(personas, project):
    from annotation.labeling.services import annotation_submit
    from concord.errors import Conflict
    from taxonomy.models import Node

    (item,) = items(project, 1)
    volunteer = personas["volunteer_a"]
    next_item_claim(project=project, volunteer=volunteer)
    c1, c2 = (
        Node.objects.get(taxonomy=project.taxonomy, code="C.1"),
        Node.objects.get(taxonomy=project.taxonomy, code="C.2"),
    )
    annotation, _ = annotation_submit(item=item, volunteer=volunteer, node=c1, summary="a")
    project_archive(project=project, actor=personas["admin"], archived=True)
    project.refresh_from_db()
    with pytest.raises(Conflict, match="archived"):
        annotation_submit(item=item, volunteer=volunteer, node=c2, summary="b", version=1)
    annotation.refresh_from_db()
    assert annotation.node == c1


def test_api_creates_reads_changes_and_archives(staff, personas, project, study_taxonomy):
    api = APIClient()
    api.force_authenticate(staff)
    body = {**SETTINGS, "taxonomy": study_taxonomy.pk, "screening_enabled": False}
    body.pop("quota_per_volunteer")
    created = api.post("/api/projects/", body, format="json")
    assert created.status_code == 201, created.json()
    assert created.json()["screening_enabled"] is False
    again = api.post("/api/projects/", body, format="json")
    assert again.status_code == 400
    assert "slug" in again.json()["fields"]

    api.force_authenticate(personas["admin"])
    changed = api.patch(f"/api/projects/{project.slug}/", {"overlap_k": 4}, format="json")
    assert changed.status_code == 200
    assert changed.json()["overlap_k"] == 4
    zero = api.patch(f"/api/projects/{project.slug}/", {"overlap_k": 0}, format="json")
    assert zero.status_code == 400
    archived = api.post(f"/api/projects/{project.slug}/archive/", {"archived": True}, format="json")
    assert archived.json()["archived"] is True

    api.force_authenticate(personas["volunteer_a"])
    assert api.get(f"/api/projects/{project.slug}/").json()["overlap_k"] == 4
    assert api.patch(f"/api/projects/{project.slug}/", {"overlap_k": 2}).status_code == 403
    assert api.post("/api/projects/", body, format="json").status_code == 403
    assert [p["slug"] for p in api.get("/api/projects/").json()] == [project.slug]


def test_create_project_command(study_taxonomy, tmp_path, capsys):
    alice = UserFactory(username="alice")
    guidelines = tmp_path / "g.md"
    guidelines.write_text("# 指南\n标注根因。", encoding="utf-8")
    call_command(
        "create_project",
        "--name",
        "框架问题",
        "--slug",
        "frameworks",
        "--k",
        "7",
        "--no-screening",
        "--guidelines-file",
        str(guidelines),
        "--admin",
        "alice",
    )
    project = Project.objects.get(slug="frameworks")
    assert (project.name, project.overlap_k, project.screening_enabled) == ("框架问题", 7, False)
    assert project.guidelines.startswith("# 指南")
    assert Membership.objects.get(project=project, user=alice).role == Role.ADMIN
    assert "Created project frameworks" in capsys.readouterr().out
    with pytest.raises(CommandError, match="slug"):
        call_command("create_project", "--name", "x", "--slug", "frameworks")
    with pytest.raises(CommandError, match="overlap_k"):
        call_command("create_project", "--name", "x", "--slug", "y", "--k", "0")


def test_archived_project_takes_no_new_items_by_any_route(personas, project):
    """Read only means no items either: an item import through the API and a source's issues on
    the page are refused with the same words, and nothing is queued or added."""
    project_archive(project=project, actor=personas["admin"], archived=True)
    api = APIClient()
    api.force_authenticate(personas["admin"])
    body = '{"url": "https://github.com/NVIDIA/Megatron-LM/issues/1", "title": "t"}'
    answer = api.post(
        f"/api/projects/{project.slug}/item-imports/",
        {"text": body, "name": "one.jsonl"},
        format="json",
    )
    assert answer.status_code == 409
    assert "archived" in answer.json()["detail"]
    assert not ItemImport.objects.exists()

    project.refresh_from_db()
    with pytest.raises(Conflict, match="archived"):
        project_items_add(
            project=project, actor=OPERATOR, write=Write.ITEMS_IMPORT, issue_ids=[IssueFactory().pk]
        )
    assert not project.items.exists()


# ---------------------------------------------------------------- the rule's inputs mid-study


def test_lowering_k_settles_the_items_that_now_have_their_k_labels(personas, project):
    """k 3 -> 2: labeling items with two labels reach cross-check as if their second label had
    just been given (unanimous -> final with its resolution, else disputed), each with its audit
    row; an item short of the new k keeps labeling; disputed and final items stay as they are.
    Raising k again moves nothing."""
    from annotation.models import Item, Method, Resolution, Stage
    from annotation.projects.settings import project_update
    from tests.annotation.labeling_helpers import label

    a, b, c = personas["volunteer_a"], personas["volunteer_b"], personas["lead"]
    agree, differ, short, done, fresh = items(project, 5)
    for item, codes in [(agree, ["C.1", "C.1"]), (differ, ["C.1", "C.2"]), (short, ["C.1"]),
                        (done, ["C.1", "C.2", "A.1"])]:  # fmt: skip
        for volunteer, code in zip((a, b, c), codes, strict=False):
            label(item, volunteer, code=code)
    stages = dict(Item.objects.filter(project=project).values_list("pk", "stage"))
    assert [stages[i.pk] for i in (agree, differ, short, done, fresh)] == [
        Stage.LABELING, Stage.LABELING, Stage.LABELING, Stage.DISPUTED, Stage.OPEN,
    ]  # fmt: skip

    project_update(project=project, actor=personas["admin"], overlap_k=2)
    for item in (agree, differ, short, done, fresh):
        item.refresh_from_db()
    assert [i.stage for i in (agree, differ, short, done, fresh)] == [
        Stage.FINAL, Stage.DISPUTED, Stage.LABELING, Stage.DISPUTED, Stage.OPEN,
    ]  # fmt: skip
    assert Resolution.objects.get(item=agree).method == Method.UNANIMOUS
    assert not Resolution.objects.filter(item=differ).exists()
    assert (agree.agreement, differ.agreement) == (1.0, 0.5)
    settled = AuditEvent.objects.filter(action=Action.CROSS_CHECK, after__has_key="overlap_k")
    assert sorted(settled.values_list("item_id", "before", "after", "actor")) == sorted([
        (agree.pk, {"stage": "labeling"}, {"stage": "final", "agreement": 1.0, "overlap_k": 2},
         personas["admin"].pk),
        (differ.pk, {"stage": "labeling"},
         {"stage": "disputed", "agreement": 0.5, "overlap_k": 2}, personas["admin"].pk),
    ])  # fmt: skip
    change = AuditEvent.objects.get(project=project, action=Action.PROJECT, item=None)
    assert (change.before, change.after) == ({"overlap_k": 3}, {"overlap_k": 2})
    # nothing is left labeling with its k labels: nothing stuck, nothing handed out past k
    assert not Item.objects.filter(project=project, stage=Stage.LABELING, label_count__gte=2)
    claim = next_item_claim(project=project, volunteer=personas["admin"])
    assert claim.item in (short, fresh)

    project_update(project=project, actor=personas["admin"], overlap_k=4)
    assert dict(Item.objects.filter(project=project).values_list("pk", "stage")) == {
        agree.pk: Stage.FINAL, differ.pk: Stage.DISPUTED, short.pk: Stage.LABELING,
        done.pk: Stage.DISPUTED, fresh.pk: Stage.OPEN,
    }  # fmt: skip
    assert settled.count() == 2


def test_k_lowered_through_the_api_settles_too(personas, project):
    from annotation.models import Item, Stage
    from tests.annotation.labeling_helpers import label

    (item,) = items(project, 1)
    label(item, personas["volunteer_a"], code="C.2")
    api = APIClient()
    api.force_authenticate(personas["admin"])
    assert api.patch(f"/api/projects/{project.slug}/", {"overlap_k": 1}).status_code == 200
    assert Item.objects.get(pk=item.pk).stage == Stage.FINAL  # one label, unanimous at k = 1


def test_depth_cannot_change_once_the_project_has_labels(client, personas, project):
    """Theme and sub-theme labels on one item would not compare: the depth is refused with words
    (409) once a label exists, on the page and the API; before that it changes freely."""
    from tests.annotation.labeling_helpers import label

    (item,) = items(project, 1)
    api = APIClient()
    api.force_authenticate(personas["admin"])
    url = f"/api/projects/{project.slug}/"
    assert api.patch(url, {"label_depth": "subtheme"}).status_code == 200
    assert api.patch(url, {"label_depth": "theme"}).status_code == 200
    label(item, personas["volunteer_a"])
    refused = api.patch(url, {"label_depth": "subtheme"})
    assert refused.status_code == 409
    assert refused.json()["detail"] == (
        "The project has labels at theme depth; the depth cannot change any more (an item would "
        "mix labels of two depths)."
    )
    client.force_login(personas["admin"])
    data = {**SETTINGS, "slug": project.slug, "taxonomy": project.taxonomy_id,
            "label_depth": "subtheme"}  # fmt: skip
    page = client.post(f"/projects/{project.slug}/settings/", data)
    assert page.status_code == 200
    assert "the depth cannot change any more" in page.content.decode()
    project.refresh_from_db()
    assert project.label_depth == "theme"
    depths = AuditEvent.objects.filter(project=project, after__has_key="label_depth")
    assert [e.after["label_depth"] for e in depths.order_by("pk")] == ["subtheme", "theme"]
