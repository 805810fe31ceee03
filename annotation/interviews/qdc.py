"""The project's taxonomy as a REFI-QDA codebook (.qdc, the exchange standard NVivo, ATLAS.ti,
MAXQDA and others read): one Code per node, nested as the tree is, named "<code> <name>" so the
codes survive the trip, with the definition as Description. Each Code's guid is derived from the
taxonomy and the code (uuid5), so exporting again gives the same guids and a tool that imported
the first file recognises the codes."""

from __future__ import annotations

import uuid
from xml.etree import ElementTree as ET

from annotation.models import Project
from annotation.project_nodes import project_nodes
from taxonomy.models import Node

NAMESPACE = "urn:QDA-XML:codebook:1.0"
GUIDS = uuid.UUID("6f1c2b1e-27a0-4c1e-9a53-7c0c0d2d1e27")  # Concord's namespace for code guids


def code_guid(node: Node) -> str:
    return str(uuid.uuid5(GUIDS, f"{node.taxonomy_id}:{node.code}"))


def taxonomy_qdc(project: Project) -> bytes:
    nodes = list(project_nodes(project, live=False).order_by("position", "code"))
    children: dict[int | None, list[Node]] = {}
    for node in nodes:
        children.setdefault(node.parent_id, []).append(node)
    ET.register_namespace("", NAMESPACE)
    book = ET.Element(f"{{{NAMESPACE}}}CodeBook", {"origin": "Concord"})
    codes = ET.SubElement(book, f"{{{NAMESPACE}}}Codes")
    for root in children.get(None, []):
        _code(codes, root, children)
    ET.indent(book)
    return ET.tostring(book, encoding="utf-8", xml_declaration=True)


def _code(parent: ET.Element, node: Node, children: dict[int | None, list[Node]]) -> None:
    element = ET.SubElement(
        parent,
        f"{{{NAMESPACE}}}Code",
        {"guid": code_guid(node), "name": f"{node.code} {node.name}", "isCodable": "true"},
    )
    if node.definition:
        ET.SubElement(element, f"{{{NAMESPACE}}}Description").text = node.definition
    for child in children.get(node.pk, []):
        _code(element, child, children)
