"""The labeling page stays small: the categories' definitions and examples are a separate asset,
cached by the browser under the picker's version, and the page itself is compressed."""

from __future__ import annotations

import gzip

import pytest

from taxonomy.models import Example, Node
from tests.annotation.labeling_helpers import items

PAGE_LIMIT = 30_000  # bytes of HTML before compression (issue 15)


@pytest.mark.parametrize("depth", ["theme", "subtheme"])
def test_labeling_page_is_small_and_gzipped(client, personas, project, depth):
    project.label_depth = depth
    project.save()
    items(project, 1)
    client.force_login(personas["volunteer_a"])
    response = client.get(f"/projects/{project.slug}/label/", HTTP_ACCEPT_ENCODING="gzip")
    assert response["Content-Encoding"] == "gzip"
    html = gzip.decompress(response.content).decode()
    assert len(html.encode()) < PAGE_LIMIT
    assert 'id="picker"' in html
    example = Example.objects.filter(node__taxonomy=project.taxonomy).first()
    assert example.text not in html  # examples come with the asset, not with every item


def test_categories_asset_is_cached_under_its_version_until_the_taxonomy_changes(
    client, personas, project
):
    client.force_login(personas["volunteer_a"])
    url = f"/projects/{project.slug}/label/categories.json"
    first = client.get(url).json()
    version = first["version"]
    assert first["categories"]["C"]["definition"].startswith("Reports of deviations")
    c1 = first["categories"]["C.1"]
    assert c1["below"]  # its sub-themes' names
    assert c1["examples"]  # and their examples, with their kind
    assert {kind for kind, _ in c1["examples"]} == {"Symptom"}

    compressed = client.get(url, {"v": version}, HTTP_ACCEPT_ENCODING="gzip")
    assert compressed["Content-Encoding"] == "gzip"
    cached = client.get(url, {"v": version})
    assert "immutable" in cached["Cache-Control"]
    assert "max-age=31536000" in cached["Cache-Control"]
    assert "no-cache" in client.get(url, {"v": "old"})["Cache-Control"]

    Example.objects.create(node=Node.objects.get(taxonomy=project.taxonomy, code="C.1.i"),
                           kind="symptom", text="a new symptom")  # fmt: skip
    changed = client.get(url).json()
    assert changed["version"] != version
    assert ["Symptom", "a new symptom"] in changed["categories"]["C.1"]["examples"]
    items(project, 1)
    page = client.get(f"/projects/{project.slug}/label/")
    assert f"categories.json?v={changed['version']}" in page.content.decode()


def test_categories_asset_is_for_members_only(client, personas, project):
    client.force_login(personas["outsider"])
    assert client.get(f"/projects/{project.slug}/label/categories.json").status_code == 404
