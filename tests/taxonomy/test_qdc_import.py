"""A REFI-QDA codebook (.qdc) uploaded as a taxonomy version (issue 27): Concord's own export
comes back as the same tree; another tool's codes are numbered by their place; a bad file is
refused naming what is wrong, and loads nothing."""

from __future__ import annotations

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.urls import reverse

from annotation.interviews.qdc import taxonomy_qdc
from annotation.project_nodes import project_nodes
from taxonomy.models import Taxonomy
from taxonomy.qdc import qdc_rows

BOOK = '<CodeBook xmlns="urn:QDA-XML:codebook:1.0"><Codes>{}</Codes></CodeBook>'


def _upload(client, name: str, data: bytes, version: str = "qdc"):
    return client.post(
        reverse("taxonomy-upload"),
        {"name": "From a codebook", "version": version, "tree": SimpleUploadedFile(name, data)},
    )


def _tree(nodes) -> list[tuple]:
    return sorted(
        (n.code, n.level, n.parent.code if n.parent else "", n.name, n.definition) for n in nodes
    )


def test_concords_own_codebook_comes_back_as_the_same_tree(client, personas, project):
    client.force_login(personas["lead"])  # a lead of a project may upload a version
    response = _upload(client, "study.qdc", taxonomy_qdc(project))
    assert response.status_code == 302, response.content.decode()[-2000:]
    loaded = Taxonomy.objects.get(name="From a codebook", version="qdc")
    shipped = project_nodes(project, live=False).select_related("parent")
    assert _tree(loaded.nodes.select_related("parent")) == _tree(shipped)


def test_another_tools_codes_are_numbered_by_their_place():
    book = BOOK.format(
        '<Code guid="1" name="Usability"><Description>Hard to use</Description>'
        '<Code guid="2" name="Docs"><Code guid="3" name="Missing pages"/></Code>'
        '<Code guid="4" name="Errors"/></Code><Code guid="5" name="Speed"/>'
    ).encode()
    rows = [(r.code, r.level, r.parent, r.name, r.description) for r in qdc_rows(book, "x.qdc")]
    assert rows == [
        ("A", "type", "", "Usability", "Hard to use"),
        ("A.1", "theme", "A", "Docs", ""),
        ("A.1.i", "subtheme", "A.1", "Missing pages", ""),
        ("A.2", "theme", "A", "Errors", ""),
        ("B", "type", "", "Speed", ""),
    ]


@pytest.mark.parametrize(
    ("data", "said"),
    [
        (b"<CodeBook", "bad.qdc, line 1, column 1: not a REFI-QDA codebook: the XML is not"),
        (b"<CodeBook/>", "bad.qdc: not a REFI-QDA codebook: it has no CodeBook of urn:QDA-XML"),
        (BOOK.format("").encode(), "bad.qdc: the codebook has no codes"),
        (BOOK.format('<Code guid="1" name=" "/>').encode(), "a code under / has no name"),
        (
            BOOK.format(
                '<Code name="A"><Code name="b"><Code name="c"><Code name="d"/></Code></Code></Code>'
            ).encode(),
            "A &gt; b &gt; c &gt; d is nested deeper than three levels",
        ),
        (
            BOOK.format('<Code name="B Usability"/><Code name="Speed"/>').encode(),
            "two codes come out as B",
        ),
    ],
)
def test_a_bad_codebook_is_refused_naming_what_is_wrong(client, personas, data, said):
    client.force_login(personas["lead"])
    response = _upload(client, "bad.qdc", data)
    assert response.status_code == 200
    assert said in response.content.decode()
    assert not Taxonomy.objects.filter(name="From a codebook").exists()
