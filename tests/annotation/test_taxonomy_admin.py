"""The taxonomy in the app: leads and admins upload a new version (all-or-nothing, errors name
the uploaded file), edit definitions and examples, retire a node that has labels (never delete);
each change is audited in every project using the taxonomy."""

from __future__ import annotations

from django.core.files.uploadedfile import SimpleUploadedFile

from annotation.models import Action, AuditEvent
from taxonomy.models import Node, Taxonomy
from tests.conftest import STUDY


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
    client.force_login(personas["lead"])
    data = {"definition": "新定义 显存不足", "examples": "OOM at step 1\n\nOOM at step 1\nNaN"}
    assert client.post(f"/taxonomy-admin/nodes/{node.pk}/", data).status_code == 302
    node.refresh_from_db()
    assert node.definition == "新定义 显存不足"
    assert list(node.examples.values_list("text", flat=True)) == ["OOM at step 1", "NaN"]
    event = AuditEvent.objects.get(project=project, action=Action.TAXONOMY)
    assert event.after["examples"] == ["OOM at step 1", "NaN"]
    assert event.actor == personas["lead"]


def test_a_node_with_labels_is_retired_not_deleted(client, personas, labeled_project):
    node = Node.objects.filter(annotations__item__project=labeled_project).first()
    client.force_login(personas["admin"])
    client.post(f"/taxonomy-admin/nodes/{node.pk}/retire/", {"retire": "1"})
    node.refresh_from_db()
    assert node.retired_at is not None
    assert node.annotations.exists()
    retired = AuditEvent.objects.get(project=labeled_project, action=Action.TAXONOMY)
    assert retired.after == {"code": node.code, "retired": True}
    client.post(f"/taxonomy-admin/nodes/{node.pk}/retire/", {"retire": "0"})
    node.refresh_from_db()
    assert node.retired_at is None
