"""Coding interview transcripts in the browser (issue 27): a lead uploads a transcript and
assigns coders (or members volunteer); each coder links passages to the project's categories,
blind to the other coders' codes until every coder is done (annotation.blindness); then the
agreement of each pair of coders, per category and overall, and their disagreements for the lead.

Every write asks the gate first: uploading and assigning are the lead's (Write.INTERVIEWS),
coding is every member's (Write.CODE) on a transcript they code and have not finished. Coding
the same passage with the same category again is the same row (a double click, a retry).
"""

from __future__ import annotations

import csv
import io
import itertools
import zipfile
from dataclasses import dataclass
from xml.etree import ElementTree as ET

from django.contrib.auth import get_user_model
from django.db import transaction
from django.db.models import QuerySet
from django.utils import timezone
from django.utils.translation import gettext as _

from annotation.access import user_role
from annotation.blindness import coding_revealed, project_passages_seen_by
from annotation.gate import Write, gate
from annotation.models import Project
from annotation.project_nodes import project_nodes
from annotation.reporting.exports import FORMULA_TRIGGERS
from concord.errors import ConcordError, file_error, utf8_text
from taxonomy.interviews.models import (
    CodedPassage,
    Participant,
    SettledCode,
    Transcript,
    TranscriptCoder,
)
from taxonomy.interviews.units import (
    PairAgreement,
    Unit,
    coding_agreement,
    transcript_units,
    units_covered,
)

TRANSCRIPT_MAX = 500_000  # characters: a two-hour interview is about 100,000
NOTE_MAX = 2_000
DOCX_TEXT = "{http://schemas.openxmlformats.org/wordprocessingml/2006/main}"
TEXT_SUFFIXES = (".txt", ".md", ".markdown")


# ---------------------------------------------------------------- writes


def transcript_upload(
    *, project: Project, actor, name: str, data: bytes, participant: Participant | None = None
) -> Transcript:
    """Store a transcript (.txt, .md or .docx) as plain text with "\\n" line ends, the offsets
    every coded passage is counted in."""
    gate(actor, project, Write.INTERVIEWS)
    text = transcript_text(name, data)
    if participant is not None and participant.project_id != project.pk:
        raise ConcordError(_("No such participant in this project."))
    return Transcript.objects.create(
        project=project,
        participant=participant,
        name=name[:200],
        text=text,
        created_by=actor if getattr(actor, "pk", None) else None,
    )


def transcript_text(name: str, data: bytes) -> str:
    """The text of an uploaded transcript, or an error naming the file and what is wrong."""
    lower = name.lower()
    if lower.endswith(".docx"):
        text = _docx_text(name, data)
    elif lower.endswith(TEXT_SUFFIXES):
        text = utf8_text(data, name)
    else:
        raise file_error(name, _("a transcript is a .txt, .md or .docx file"))
    text = text.replace("\r\n", "\n").replace("\r", "\n").replace("\x00", "")
    if not text.strip():
        raise file_error(name, _("the file has no text"))
    if len(text) > TRANSCRIPT_MAX:
        raise file_error(name, _("over %(n)d characters") % {"n": TRANSCRIPT_MAX})
    return text


def _docx_text(name: str, data: bytes) -> str:
    """A Word document's paragraphs, one to a line (its body's text only: no notes or
    comments). The standard library's parser expands no external entities."""
    try:
        with zipfile.ZipFile(io.BytesIO(data)) as archive:
            info = archive.getinfo("word/document.xml")
            if info.file_size > 20 * TRANSCRIPT_MAX:
                raise file_error(name, _("over %(n)d characters") % {"n": TRANSCRIPT_MAX})
            # expat (2.4 and later) refuses entity amplification and ElementTree fetches no
            # external entity; the size above bounds what is read (zipfile stops at it)
            root = ET.fromstring(archive.read(info))  # noqa: S314
    except (zipfile.BadZipFile, KeyError, ET.ParseError) as exc:
        raise file_error(name, _("not a Word document (.docx)")) from exc
    lines = []
    for paragraph in root.iter(f"{DOCX_TEXT}p"):
        parts = []
        for node in paragraph.iter():
            if node.tag == f"{DOCX_TEXT}t":
                parts.append(node.text or "")
            elif node.tag == f"{DOCX_TEXT}tab":
                parts.append("\t")
            elif node.tag in (f"{DOCX_TEXT}br", f"{DOCX_TEXT}cr"):
                parts.append("\n")
        lines.append("".join(parts))
    return "\n".join(lines)


def transcript_coder_join(*, transcript: Transcript, actor) -> TranscriptCoder:
    """`actor` volunteers to code `transcript` (joining twice is joining once)."""
    gate(actor, transcript.project, Write.CODE)
    _still_open(transcript)
    coder, _created = TranscriptCoder.objects.get_or_create(transcript=transcript, coder=actor)
    return coder


def _still_open(transcript: Transcript) -> None:
    """Once every coder is done everyone may see the codes: a new coder would code them seeing
    them, so none joins then."""
    if coding_revealed(transcript):
        raise ConcordError(_("Every coder of this transcript is done: it takes no new coders."))


def transcript_coder_assign(*, transcript: Transcript, actor, username: str) -> TranscriptCoder:
    """A lead makes a member of the project a coder of `transcript`."""
    project = transcript.project
    gate(actor, project, Write.INTERVIEWS)
    _still_open(transcript)
    person = get_user_model().objects.filter(username=username.strip()).first()
    if person is None or user_role(person, project) is None:
        raise ConcordError(
            _("%(name)s is no member of this project.") % {"name": username.strip()[:150]}
        )
    coder, _created = TranscriptCoder.objects.get_or_create(
        transcript=transcript,
        coder=person,
        defaults={"assigned_by": actor if getattr(actor, "pk", None) else None},
    )
    return coder


def _coding(transcript: Transcript, actor) -> TranscriptCoder:
    """`actor`'s coding of `transcript`, while they may still change it."""
    gate(actor, transcript.project, Write.CODE)
    coder = TranscriptCoder.objects.filter(transcript=transcript, coder=actor).first()
    if coder is None:
        raise ConcordError(_("You do not code this transcript: join its coders first."))
    if coder.done_at is not None:
        raise ConcordError(
            _("You said your coding of this transcript is complete: it no longer changes.")
        )
    return coder


@transaction.atomic
def passage_code(
    *, transcript: Transcript, actor, start: int, end: int, node_code: str, note: str = ""
) -> CodedPassage:
    """Link the passage [start, end) (white space at its ends left out) to the category
    `node_code`. The same passage and category again returns the first row (its note
    updated)."""
    _coding(transcript, actor)
    text = transcript.text
    start, end = max(0, start), min(len(text), end)
    while start < end and text[start].isspace():
        start += 1
    while end > start and text[end - 1].isspace():
        end -= 1
    if start >= end:
        raise ConcordError(_("Select a passage of the transcript first."))
    code = node_code.strip()
    node = project_nodes(transcript.project).filter(code=code).first()
    if node is None:
        raise ConcordError(_("%(code)s is no category of this project.") % {"code": code[:30]})
    passage, created = CodedPassage.objects.get_or_create(
        transcript=transcript,
        coder=actor,
        node=node,
        start=start,
        end=end,
        defaults={"note": note[:NOTE_MAX]},
    )
    if not created and note and passage.note != note[:NOTE_MAX]:
        passage.note = note[:NOTE_MAX]
        passage.save(update_fields=["note"])
    return passage


def passage_remove(*, transcript: Transcript, actor, passage_id: int) -> None:
    """Take back one of `actor`'s own codes (removing it twice is removing it once)."""
    _coding(transcript, actor)
    CodedPassage.objects.filter(transcript=transcript, coder=actor, pk=passage_id).delete()


def transcript_done(*, transcript: Transcript, actor) -> TranscriptCoder:
    """`actor` says their coding of `transcript` is complete: it no longer changes, and once
    every coder says so the coders see each other's codes."""
    coder = _coding(transcript, actor)
    TranscriptCoder.objects.filter(pk=coder.pk, done_at__isnull=True).update(done_at=timezone.now())
    coder.refresh_from_db()
    return coder


@transaction.atomic
def disagreement_settle(
    *, transcript: Transcript, actor, line: int, node_code: str, keep: bool
) -> SettledCode:
    """A lead says whether the category `node_code` applies to line `line`, which one coder gave
    it and another did not (saying it again replaces the word). Once every coder is done."""
    project = transcript.project
    gate(actor, project, Write.INTERVIEWS)
    if not coding_revealed(transcript):
        raise ConcordError(_("Disagreements are settled once every coder is done."))
    if line not in {unit.number for unit in transcript_units(transcript.text)}:
        raise ConcordError(_("Line %(line)d is no line of this transcript.") % {"line": line})
    code = node_code.strip()
    node = project_nodes(project, live=False).filter(code=code).first()
    if node is None:
        raise ConcordError(_("%(code)s is no category of this project.") % {"code": code[:30]})
    settled, _created = SettledCode.objects.update_or_create(
        transcript=transcript,
        line=line,
        node=node,
        defaults={"keep": keep, "settled_by": actor if getattr(actor, "pk", None) else None},
    )
    return settled


# ---------------------------------------------------------------- reads


def transcript_lines(
    transcript: Transcript, passages: list[CodedPassage], *, names: bool
) -> list[dict]:
    """The transcript's lines as its page shows them: each with its text and the (category,
    coder's name if `names`) of the given passages that touch it."""
    lines = []
    for unit in transcript_units(transcript.text):
        codes = {
            (p.node.code, p.coder.username if names else "")
            for p in passages
            if p.start < unit.end and unit.start < p.end
        }
        text = transcript.text[unit.start : unit.end]
        lines.append({"unit": unit, "text": text, "codes": sorted(codes)})
    return lines


def project_transcripts(project: Project) -> QuerySet[Transcript]:
    return (
        Transcript.objects.filter(project=project)
        .select_related("participant")
        .prefetch_related("coders__coder")
        .order_by("pk")
    )


@dataclass(frozen=True)
class DisagreementRow:
    line: int
    text: str  # the unit's text
    code: str
    name: str  # the category's name
    marked_by: str  # the coder who marked it (the other did not)
    keep: bool | None  # the lead's word on it (None: not settled yet)


@dataclass(frozen=True)
class CoderPairAgreement:
    a: str  # usernames
    b: str
    agreement: PairAgreement
    disagreements: list[DisagreementRow]


def _marks(
    transcript: Transcript, units: list[Unit]
) -> tuple[dict[int, dict[str, set[int]]], dict[str, str]]:
    """Per coder (by id), per code, the units they marked; and each code's category name."""
    marked: dict[int, dict[str, set[int]]] = {c.coder_id: {} for c in transcript.coders.all()}
    names: dict[str, str] = {}
    passages = CodedPassage.objects.filter(transcript=transcript).select_related("node")
    for passage in passages:
        codes = marked.setdefault(passage.coder_id, {})
        codes.setdefault(passage.node.code, set()).update(
            units_covered(units, passage.start, passage.end)
        )
        names[passage.node.code] = passage.node.name
    return marked, names


def _verdicts(transcript: Transcript) -> dict[tuple[int, str], bool]:
    """The lead's word on each settled (line, code)."""
    rows = SettledCode.objects.filter(transcript=transcript).values_list(
        "line", "node__code", "keep"
    )
    return {(line, code): keep for line, code, keep in rows}


def transcript_agreement(transcript: Transcript) -> list[CoderPairAgreement]:
    """The agreement of each pair of the transcript's coders on its units (every coder's codes:
    the caller shows it only to whom blindness.sees_all_codes allows)."""
    units = transcript_units(transcript.text)
    coders = [c.coder for c in transcript.coders.all()]
    marked, names = _marks(transcript, units)
    verdicts = _verdicts(transcript)
    pairs = []
    for a, b in itertools.combinations(coders, 2):
        result = coding_agreement(len(units), marked[a.pk], marked[b.pk])
        rows = [
            DisagreementRow(
                line=units[d.unit].number,
                text=_unit_text(transcript.text, units[d.unit]),
                code=d.code,
                name=names.get(d.code, ""),
                marked_by=(a if d.by_a else b).username,
                keep=verdicts.get((units[d.unit].number, d.code)),
            )
            for d in result.disagreements
        ]
        pairs.append(CoderPairAgreement(a.username, b.username, result, rows))
    return pairs


def _unit_text(text: str, unit: Unit) -> str:
    return text[unit.start : unit.end].strip()


@dataclass(frozen=True)
class FinalCode:
    line: int
    text: str  # the line's text
    code: str
    name: str
    how: str  # "agreed" (every coder gave it) or "kept" (the lead kept a disagreement)


@dataclass(frozen=True)
class FinalCodes:
    codes: list[FinalCode]
    unsettled: int  # disagreements the lead has not settled yet


def transcript_final_codes(transcript: Transcript) -> FinalCodes:
    """The transcript's final codes once every coder is done: each (line, category) every coder
    gave, and each one some coder gave that the lead kept."""
    if not coding_revealed(transcript):
        return FinalCodes([], 0)
    units = transcript_units(transcript.text)
    marked, names = _marks(transcript, units)
    verdicts = _verdicts(transcript)
    coders = list(marked.values())
    given: dict[tuple[int, str], int] = {}
    for codes in coders:
        for code, marked_units in codes.items():
            for unit in marked_units:
                given[(unit, code)] = given.get((unit, code), 0) + 1
    final, unsettled = [], 0
    for (unit, code), n in sorted(given.items()):
        line = units[unit].number
        if n == len(coders):
            how = "agreed"
        elif verdicts.get((line, code)) is True:
            how = "kept"
        else:
            unsettled += (line, code) not in verdicts
            continue
        text = _unit_text(transcript.text, units[unit])
        final.append(FinalCode(line, text, code, names.get(code, ""), how))
    return FinalCodes(final, unsettled)


FINAL_COLUMNS = [
    "transcript",
    "participant",
    "participant_type",
    "line",
    "code",
    "category",
    "how",
    "text",
]


def final_codes_csv(project: Project) -> str:
    """The final codes of the project's transcripts whose coders are all done (FINAL_COLUMNS),
    with the exports' formula guard."""
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(FINAL_COLUMNS)
    for transcript in project_transcripts(project):
        participant = transcript.participant
        for c in transcript_final_codes(transcript).codes:
            row = [
                transcript.name,
                participant.code if participant else "",
                participant.kind if participant else "",
                str(c.line),
                c.code,
                c.name,
                c.how,
                c.text,
            ]
            writer.writerow(["'" + x if x[:1] in FORMULA_TRIGGERS else x for x in row])
    return out.getvalue()


CSV_COLUMNS = [
    "transcript",
    "participant",
    "participant_type",
    "coder",
    "code",
    "category",
    "start",
    "end",
    "lines",
    "passage",
    "note",
    "coded_at",
]


def coded_passages_csv(project: Project, viewer) -> str:
    """Every coded passage of the project's transcripts that `viewer` may see, one row each
    (CSV_COLUMNS); free text with the exports' formula guard."""
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(CSV_COLUMNS)
    passages = (
        project_passages_seen_by(viewer, project)
        .select_related("transcript__participant", "coder", "node")
        .order_by("transcript_id", "start", "end", "coder__username", "node__code")
    )
    for p in passages:
        transcript = p.transcript
        participant = transcript.participant
        first = transcript.text.count("\n", 0, p.start) + 1
        last = transcript.text.count("\n", 0, p.end) + 1
        row = [
            transcript.name,
            participant.code if participant else "",
            participant.kind if participant else "",
            p.coder.username,
            p.node.code,
            p.node.name,
            str(p.start),
            str(p.end),
            str(first) if first == last else f"{first}-{last}",
            transcript.text[p.start : p.end],
            p.note,
            p.created_at.isoformat(),
        ]
        writer.writerow(["'" + c if c[:1] in FORMULA_TRIGGERS else c for c in row])
    return out.getvalue()
