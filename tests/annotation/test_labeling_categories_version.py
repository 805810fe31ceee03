"""The labeling page's category details (categories.json) are versioned by their content: the
browser keeps them for a year under `?v=`, so every edit of what they show (a definition, an
example, a name, a retired flag, a project's own node), by whatever path, must give another `v`,
and the JSON under the new `v` must say what the taxonomy says now."""

from __future__ import annotations

import re

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from annotation.models import ProjectNode
from taxonomy.models import Example, Node
from taxonomy.selectors import taxonomy_fingerprint
from taxonomy.services import node_add
from tests.annotation.labeling_helpers import items
from tests.factories import UserFactory


def page_version(client, project) -> str:
    page = client.get(f"/projects/{project.slug}/label/").content.decode()
    return re.search(r"categories\.json\?v=([0-9a-f]+)", page)[1]


def categories(client, project, version: str):
    return client.get(f"/projects/{project.slug}/label/categories.json", {"v": version})


@pytest.fixture
def labeling(client, personas, project):
    items(project, 3)
    client.force_login(personas["volunteer_a"])
    return client


def test_editing_a_definition_gives_a_new_version_with_the_new_definition(
    labeling, project, client
):
    before = page_version(labeling, project)
    assert categories(labeling, project, before).json()["version"] == before

    node = Node.objects.get(taxonomy=project.taxonomy, code="C.1")
    assert not node.examples.exists()  # so the edit adds and removes no example row
    client.force_login(UserFactory(username="site-staff", is_staff=True))
    data = {"definition": "Edited: failures at start-up", "examples": ""}
    assert client.post(f"/taxonomy-admin/nodes/{node.pk}/", data).status_code == 302

    client.force_login(project.memberships.get(user__username="volunteer_a").user)
    after = page_version(client, project)
    assert after != before
    fresh = categories(client, project, after)
    assert fresh.json()["version"] == after
    assert fresh.json()["categories"]["C.1"]["definition"] == "Edited: failures at start-up"
    assert "immutable" in fresh["Cache-Control"]
    # The old address answers with what is true now, and not to be kept.
    stale = categories(client, project, before)
    assert stale.json()["categories"]["C.1"]["definition"] == "Edited: failures at start-up"
    assert "no-cache" in stale["Cache-Control"]


def test_every_change_the_details_show_gives_a_new_version(labeling, project):
    """Edits that keep every count and id as they were (the old version was made of those)."""
    seen = {page_version(labeling, project)}

    def changed() -> str:
        version = page_version(labeling, project)
        assert version not in seen
        seen.add(version)
        return version

    example = Example.objects.filter(node__taxonomy=project.taxonomy, node__code="C.1.i").first()
    Example.objects.filter(pk=example.pk).update(text="an example, reworded")
    version = changed()
    examples = categories(labeling, project, version).json()["categories"]["C.1"]["examples"]
    assert [example.get_kind_display(), "an example, reworded"] in examples

    Node.objects.filter(taxonomy=project.taxonomy, code="C.1.i").update(name="Renamed sub-theme")
    below = categories(labeling, project, changed()).json()["categories"]["C.1"]["below"]
    assert "Renamed sub-theme" in below

    Node.objects.filter(taxonomy=project.taxonomy, code="C.2").update(definition="New words")
    assert categories(labeling, project, changed()).json()["categories"]["C.2"]["definition"] == (
        "New words"
    )

    retired = Node.objects.get(taxonomy=project.taxonomy, code="C.3")
    Node.objects.filter(pk=retired.pk).update(retired_at="2025-01-01T00:00:00Z")
    assert "C.3" not in categories(labeling, project, changed()).json()["categories"]
    Node.objects.filter(pk=retired.pk).update(retired_at=None)
    restored = page_version(labeling, project)
    assert "C.3" in categories(labeling, project, restored).json()["categories"]

    parent = Node.objects.get(taxonomy=project.taxonomy, code="C")
    own = node_add(taxonomy=project.taxonomy, parent=parent, name="Checkpoint drift")
    ProjectNode.objects.create(project=project, node=own)
    assert own.code in categories(labeling, project, changed()).json()["categories"]


def test_the_fingerprint_is_one_query_and_stable(project):
    """Asked once per labeling page: one query (about 3 ms for the study's taxonomy, 91 nodes
    and 2,630 examples, on PostgreSQL), the same answer while nothing changes."""
    with CaptureQueriesContext(connection) as queries:
        first = taxonomy_fingerprint(project.taxonomy)
    assert len(queries) == 1
    assert taxonomy_fingerprint(project.taxonomy) == first
