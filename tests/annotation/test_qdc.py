"""The taxonomy as a REFI-QDA codebook (.qdc) for qualitative tools (issue 27): every category of
the project once, nested as the tree, with its definition; the same guids on every export."""

from __future__ import annotations

from xml.etree import ElementTree as ET

from annotation.project_nodes import project_nodes

NS = {"q": "urn:QDA-XML:codebook:1.0"}


def test_the_codebook_holds_every_category_nested_with_stable_guids(client, personas, project):
    client.force_login(personas["lead"])
    url = f"/projects/{project.slug}/interviews/codebook.qdc"
    first = client.get(url)
    assert first["Content-Disposition"].endswith('codebook.qdc"')
    book = ET.fromstring(first.content)  # noqa: S314 - our own output, just written
    assert book.tag == "{urn:QDA-XML:codebook:1.0}CodeBook"
    codes = book.findall(".//q:Code", NS)
    nodes = list(project_nodes(project, live=False).select_related("parent"))
    assert sorted(c.get("name") for c in codes) == sorted(f"{n.code} {n.name}" for n in nodes)
    by_name = {c.get("name"): c for c in codes}
    for node in nodes:
        code = by_name[f"{node.code} {node.name}"]
        if node.parent is not None:
            parent = by_name[f"{node.parent.code} {node.parent.name}"]
            assert code in list(parent.findall("q:Code", NS))
        if node.definition:
            assert code.find("q:Description", NS).text == node.definition
    assert len({c.get("guid") for c in codes}) == len(codes)
    assert client.get(url).content == first.content
    client.force_login(personas["volunteer_a"])
    assert client.get(url).status_code == 403
