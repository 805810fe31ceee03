"""The project's taxonomy as a REFI-QDA codebook (.qdc, the exchange standard NVivo, ATLAS.ti,
MAXQDA and others read): one Code per node, nested as the tree is, named "<code> <name>" so the
codes survive the trip, with the definition as Description. Each Code's guid is derived from the
taxonomy and the code (uuid5), so exporting again gives the same guids and a tool that imported
the first file recognises the codes.

The coded transcripts go out as a REFI-QDA project (.qdpx: a zip of project.qde and the sources):
the coders as Users, the same codebook, each transcript a TextSource (its text as
sources/<guid>.txt) with every coder's passages as PlainTextSelections (positions in characters,
as Concord counts them) coded with their Code, the coder's note as Description. Each imported
codebook quote is a TextSource too, its whole text coded with the categories it links."""

from __future__ import annotations

import io
import uuid
import zipfile
from xml.etree import ElementTree as ET

from django.db.models import Prefetch

from annotation.blindness import project_passages_seen_by
from annotation.models import Project
from annotation.project_nodes import project_nodes
from taxonomy.interviews.models import CodedPassage, Quote, QuoteLink, Transcript
from taxonomy.models import Node

NAMESPACE = "urn:QDA-XML:codebook:1.0"
PROJECT = "urn:QDA-XML:project:1.0"
GUIDS = uuid.UUID("6f1c2b1e-27a0-4c1e-9a53-7c0c0d2d1e27")  # Concord's namespace for code guids


def code_guid(node: Node) -> str:
    return str(uuid.uuid5(GUIDS, f"{node.taxonomy_id}:{node.code}"))


def _guid(kind: str, pk: int) -> str:
    return str(uuid.uuid5(GUIDS, f"{kind}:{pk}"))


def taxonomy_qdc(project: Project) -> bytes:
    ET.register_namespace("", NAMESPACE)
    book = ET.Element(f"{{{NAMESPACE}}}CodeBook", {"origin": "Concord"})
    _codes(book, project, NAMESPACE)
    ET.indent(book)
    return ET.tostring(book, encoding="utf-8", xml_declaration=True)


def _codes(parent: ET.Element, project: Project, ns: str) -> None:
    nodes = list(project_nodes(project, live=False).order_by("position", "code"))
    children: dict[int | None, list[Node]] = {}
    for node in nodes:
        children.setdefault(node.parent_id, []).append(node)
    codes = ET.SubElement(parent, f"{{{ns}}}Codes")
    for root in children.get(None, []):
        _code(codes, root, children, ns)


def _code(parent: ET.Element, node: Node, children: dict[int | None, list[Node]], ns: str) -> None:
    element = ET.SubElement(
        parent,
        f"{{{ns}}}Code",
        {"guid": code_guid(node), "name": f"{node.code} {node.name}", "isCodable": "true"},
    )
    if node.definition:
        ET.SubElement(element, f"{{{ns}}}Description").text = node.definition
    for child in children.get(node.pk, []):
        _code(element, child, children, ns)


def transcripts_qdpx(project: Project, viewer) -> bytes:
    """The project's transcripts with the coded passages `viewer` may see (every coder's, but
    for a transcript they code themselves before all are done), and its imported quotes with
    their categories, as a REFI-QDA project."""
    transcripts = list(
        Transcript.objects.filter(project=project).select_related("participant").order_by("pk")
    )
    passages = list(
        project_passages_seen_by(viewer, project)
        .select_related("coder", "node")
        .order_by("transcript_id", "start", "end", "pk")
    )
    quotes = (
        Quote.objects.filter(participant__project=project)
        .select_related("participant")
        .prefetch_related(Prefetch("links", QuoteLink.objects.select_related("node")))
        .order_by("participant__code", "pk")
    )
    ET.register_namespace("", PROJECT)
    root = ET.Element(f"{{{PROJECT}}}Project", {"name": project.name, "origin": "Concord"})
    users = ET.SubElement(root, f"{{{PROJECT}}}Users")
    for coder in sorted({p.coder for p in passages}, key=lambda u: u.pk):
        ET.SubElement(
            users, f"{{{PROJECT}}}User", {"guid": _guid("user", coder.pk), "name": coder.username}
        )
    _codes(ET.SubElement(root, f"{{{PROJECT}}}CodeBook"), project, PROJECT)
    sources = ET.SubElement(root, f"{{{PROJECT}}}Sources")
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        for transcript in transcripts:
            guid = _guid("transcript", transcript.pk)
            archive.writestr(f"sources/{guid}.txt", transcript.text.encode("utf-8"))
            source = ET.SubElement(
                sources,
                f"{{{PROJECT}}}TextSource",
                {"guid": guid, "name": transcript.name, "plainTextPath": f"internal://{guid}.txt"},
            )
            if transcript.participant is not None:
                ET.SubElement(source, f"{{{PROJECT}}}Description").text = str(
                    transcript.participant
                )
            for p in (p for p in passages if p.transcript_id == transcript.pk):
                _selection(source, p, transcript.text)
        for quote in quotes:
            _quote(archive, sources, quote)
        ET.indent(root)
        archive.writestr("project.qde", ET.tostring(root, encoding="utf-8", xml_declaration=True))
    return buffer.getvalue()


def _quote(archive: zipfile.ZipFile, sources: ET.Element, quote: Quote) -> None:
    """An imported codebook quote: a source of its own, its whole text coded with each category
    it is linked to (an unresolved code has no category and is left out)."""
    guid = _guid("quote", quote.pk)
    archive.writestr(f"sources/{guid}.txt", quote.text.encode("utf-8"))
    source = ET.SubElement(
        sources,
        f"{{{PROJECT}}}TextSource",
        {
            "guid": guid,
            "name": f"{quote.participant.code} · {quote.prompt_category or quote.pk}"[:200],
            "plainTextPath": f"internal://{guid}.txt",
        },
    )
    if quote.insight:
        ET.SubElement(source, f"{{{PROJECT}}}Description").text = quote.insight
    nodes = [link.node for link in quote.links.all() if link.node is not None]
    if not nodes or not quote.text:
        return
    selection = ET.SubElement(
        source,
        f"{{{PROJECT}}}PlainTextSelection",
        {
            "guid": _guid("quote-selection", quote.pk),
            "name": quote.text[:60],
            "startPosition": "0",
            "endPosition": str(len(quote.text)),
        },
    )
    for node in dict.fromkeys(nodes):
        coding = ET.SubElement(
            selection, f"{{{PROJECT}}}Coding", {"guid": _guid(f"quote-{node.pk}", quote.pk)}
        )
        ET.SubElement(coding, f"{{{PROJECT}}}CodeRef", {"targetGUID": code_guid(node)})


def _selection(source: ET.Element, passage: CodedPassage, text: str) -> None:
    user = _guid("user", passage.coder_id)
    selection = ET.SubElement(
        source,
        f"{{{PROJECT}}}PlainTextSelection",
        {
            "guid": _guid("passage", passage.pk),
            "name": text[passage.start : passage.end][:60],
            "startPosition": str(passage.start),
            "endPosition": str(passage.end),
            "creatingUser": user,
            "creationDateTime": passage.created_at.strftime("%Y-%m-%dT%H:%M:%SZ"),
        },
    )
    if passage.note:
        ET.SubElement(selection, f"{{{PROJECT}}}Description").text = passage.note
    coding = ET.SubElement(
        selection,
        f"{{{PROJECT}}}Coding",
        {"guid": _guid("coding", passage.pk), "creatingUser": user},
    )
    ET.SubElement(coding, f"{{{PROJECT}}}CodeRef", {"targetGUID": code_guid(passage.node)})
