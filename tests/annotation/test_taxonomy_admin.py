"""The taxonomy in the app: leads and admins upload a new version (all-or-nothing, errors name
the uploaded file); site staff edit definitions and examples of the shared nodes and retire a node
that has labels (never delete); a project's leads curate only the nodes that project added. Each
change is audited in every project using the taxonomy."""

from __future__ import annotations

from django.core.files.uploadedfile import SimpleUploadedFile

from annotation.models import Action, AuditEvent, ProjectNode
from annotation.projects.settings import project_archive
from taxonomy.models import Node, Taxonomy
from taxonomy.services import node_add
from tests.conftest import STUDY
from tests.factories import UserFactory


def staff():
    return UserFactory(username="site-staff", is_staff=True)


def own_node(project) -> Node:
    """A category `project` added for itself (as an accepted proposal does)."""
    parent = project.taxonomy.nodes.get(code="C")
    node = node_add(taxonomy=project.taxonomy, parent=parent, name="Checkpoint drift")
    ProjectNode.objects.create(project=project, node=node)
    return node


def upload(client, name="LLM challenges", version="2", tree=None, details=()):
    tree = tree or SimpleUploadedFile("taxonomy.csv", (STUDY / "taxonomy.csv").read_bytes())
    data = {"name": name, "version": version, "tree": tree, "details": list(details)}
    return client.post("/taxonomy-admin/upload/", data)


def test_a_lead_uploads_a_new_version_with_its_details(client, personas, project):
    client.force_login(personas["lead"])
    details = [
        SimpleUploadedFile(p.name, p.read_bytes())
        for p in sorted((STUDY / "study-details").glob("*.csv"))
    ]
    response = upload(client, details=details)
    assert response.status_code == 302
    new = Taxonomy.objects.get(name="LLM challenges", version="2")
    assert new.nodes.count() == project.taxonomy.nodes.count()
    assert new.nodes.get(code="C.1.i").examples.exists()


def test_a_bad_file_loads_nothing_and_names_the_upload(client, personas, project):
    client.force_login(personas["admin"])
    bad = SimpleUploadedFile("mine.csv", b"code,level,parent,name\nA,type,,Q\nA.1,subtheme,A,x\n")
    page = upload(client, version="3", tree=bad).content.decode()
    assert "mine.csv, line 3" in page
    assert "/tmp/" not in page  # noqa: S108 (the saved copy's folder is not shown)
    assert not Taxonomy.objects.filter(version="3").exists()
    again = upload(client, version="1")  # an existing version is never overwritten
    assert "exists already" in again.content.decode()


def test_volunteers_may_not_curate(client, personas, project):
    client.force_login(personas["volunteer_a"])
    assert upload(client).status_code == 403
    node = project.taxonomy.nodes.get(code="C.1")
    assert client.get(f"/taxonomy-admin/nodes/{node.pk}/").status_code == 403


def test_editing_a_definition_and_examples_is_audited(client, personas, project):
    node = project.taxonomy.nodes.get(code="C.1.i")
    editor = staff()
    client.force_login(editor)
    data = {"definition": "新定义 显存不足", "examples": "OOM at step 1\n\nOOM at step 1\nNaN"}
    assert client.post(f"/taxonomy-admin/nodes/{node.pk}/", data).status_code == 302
    node.refresh_from_db()
    assert node.definition == "新定义 显存不足"
    assert list(node.examples.values_list("text", flat=True)) == ["OOM at step 1", "NaN"]
    event = AuditEvent.objects.get(project=project, action=Action.TAXONOMY)
    assert event.after["examples"] == ["OOM at step 1", "NaN"]
    assert event.actor == editor


def test_the_chinese_name_and_definition_are_edited_and_audited(client, personas, project):
    node = project.taxonomy.nodes.get(code="C.2")
    client.force_login(staff())
    data = {"name_zh": " 显存与资源 ", "definition_zh": "显存不足、泄漏"}
    data |= {"definition": "", "examples": ""}
    assert client.post(f"/taxonomy-admin/nodes/{node.pk}/", data).status_code == 302
    node.refresh_from_db()
    assert (node.name_zh, node.definition_zh) == ("显存与资源", "显存不足、泄漏")
    event = AuditEvent.objects.get(project=project, action=Action.TAXONOMY)
    assert event.before["name_zh"] == "资源效率与内存管理"
    assert event.after["name_zh"] == "显存与资源"
    # a form from before the Chinese fields existed leaves them as they are
    assert client.post(f"/taxonomy-admin/nodes/{node.pk}/", {"definition": "x"}).status_code == 302
    node.refresh_from_db()
    assert node.definition == "x"
    assert (node.name_zh, node.definition_zh) == ("显存与资源", "显存不足、泄漏")


def test_a_node_with_labels_is_retired_not_deleted(client, personas, labeled_project):
    node = Node.objects.filter(annotations__item__project=labeled_project).first()
    client.force_login(staff())
    client.post(f"/taxonomy-admin/nodes/{node.pk}/retire/", {"retire": "1"})
    node.refresh_from_db()
    assert node.retired_at is not None
    assert node.annotations.exists()
    retired = AuditEvent.objects.get(project=labeled_project, action=Action.TAXONOMY)
    assert retired.after == {"code": node.code, "retired": True}
    client.post(f"/taxonomy-admin/nodes/{node.pk}/retire/", {"retire": "0"})
    node.refresh_from_db()
    assert node.retired_at is None


def test_a_shared_node_is_not_a_projects_to_change(client, personas, project):
    """A lead or admin of one project may not rewrite or retire a node every project labels with:
    that goes through a new taxonomy version or site staff."""
    node = project.taxonomy.nodes.get(code="C.1")
    for person in ("lead", "admin", "outsider"):
        client.force_login(personas[person])
        edit = client.post(f"/taxonomy-admin/nodes/{node.pk}/", {"definition": "mine"})
        retire = client.post(f"/taxonomy-admin/nodes/{node.pk}/retire/", {"retire": "1"})
        assert (edit.status_code, retire.status_code) == (403, 403), person
    node.refresh_from_db()
    assert node.definition != "mine"
    assert node.retired_at is None
    assert not AuditEvent.objects.filter(action=Action.TAXONOMY).exists()


def test_a_project_curates_its_own_nodes_only(client, personas, project):
    """The node `project` added is its leads' to edit and retire; the lead of another project on
    the same taxonomy is refused, and so is everyone once the project is archived."""
    node = own_node(project)
    client.force_login(personas["outsider"])
    refused = client.post(f"/taxonomy-admin/nodes/{node.pk}/retire/", {"retire": "1"})
    assert refused.status_code == 403
    assert project.name not in refused.content.decode()  # not even its name, to an outsider
    node.refresh_from_db()
    assert node.retired_at is None

    client.force_login(personas["lead"])
    edited = client.post(
        f"/taxonomy-admin/nodes/{node.pk}/", {"definition": "Ours", "examples": ""}
    )
    assert edited.status_code == 302
    assert (
        client.post(f"/taxonomy-admin/nodes/{node.pk}/retire/", {"retire": "1"}).status_code == 302
    )
    node.refresh_from_db()
    assert (node.definition, node.retired_at is not None) == ("Ours", True)

    client.force_login(personas["volunteer_a"])
    assert (
        client.post(f"/taxonomy-admin/nodes/{node.pk}/retire/", {"retire": "0"}).status_code == 403
    )

    project_archive(project=project, actor=personas["admin"], archived=True)
    client.force_login(personas["lead"])
    refused = client.post(f"/taxonomy-admin/nodes/{node.pk}/retire/", {"retire": "0"})
    assert refused.status_code == 409
    assert "archived" in refused.content.decode()
    node.refresh_from_db()
    assert node.retired_at is not None
