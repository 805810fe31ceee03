"""Every write of the interviews feature: importing the study's interview files (codebook,
background, guideline) and mapping a code the taxonomy lacks to a node. Each asks the gate first.

An import is all-or-nothing (every problem of every file reported, by file, line and column,
before anything is written) and idempotent: participants are upserted by code, quotes by
(participant, prompt, text), links by (quote, code). A link whose code the project's taxonomy
does not have is kept unresolved and reported, never dropped; a lead's mapping of it survives a
re-import.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from django.db import transaction
from django.utils.translation import gettext as _

from annotation.gate import Write, gate
from annotation.models import Project
from annotation.project_nodes import project_nodes
from annotation.projects.importers import ImportFailed
from concord.errors import ConcordError, RowError, utf8_text
from taxonomy.interviews.files import (
    NODES,
    BackgroundRow,
    CodebookRow,
    background_match,
    background_parse,
    codebook_parse,
)
from taxonomy.interviews.models import (
    InterviewGuide,
    Participant,
    ParticipantKind,
    Quote,
    QuoteLink,
)
from taxonomy.models import Node

GUIDELINE_MAX = 200_000  # characters; the study's guideline is under 4,000


@dataclass(frozen=True)
class InterviewFile:
    name: str
    data: bytes


@dataclass
class InterviewReport:
    """What an import found and did: every quote and link accounted for."""

    participants: int = 0
    users: int = 0
    developers: int = 0
    participants_created: int = 0
    quotes: int = 0
    quotes_created: int = 0
    links: int = 0
    links_resolved: int = 0
    unresolved: list[dict] = field(default_factory=list)  # {path, line, column, value}
    background_rows: int = 0
    guideline: str = ""  # the guideline file's name, if one came

    def as_dict(self) -> dict:
        return dict(self.__dict__)


def interviews_import(
    *,
    project: Project,
    actor,
    codebook: InterviewFile,
    background: InterviewFile | None = None,
    guideline: InterviewFile | None = None,
) -> InterviewReport:
    """Check every file, then write them in one transaction (ImportFailed lists every problem
    and nothing is written)."""
    gate(actor, project, Write.INTERVIEWS)
    parsed = codebook_parse(codebook.data, codebook.name)
    errors: list[RowError] = list(parsed.errors)
    people: dict[str, BackgroundRow] = {}
    background_rows = 0
    if background is not None:
        sheet = background_parse(background.data, background.name)
        errors += sheet.errors
        background_rows = len(sheet.rows)
        if not sheet.errors and not parsed.errors:
            people, mismatches = background_match(parsed.rows, sheet.rows, background.name)
            errors += mismatches
    guide_text = _guideline_text(guideline, errors)
    if errors:
        raise ImportFailed(errors)
    if not parsed.rows:
        raise ConcordError(
            _("%(name)s has no quotes: nothing to import.") % {"name": codebook.name}
        )
    with transaction.atomic():
        report = _write(project, parsed.rows, people, codebook.name)
        if guideline is not None:
            InterviewGuide.objects.update_or_create(
                project=project, defaults={"name": guideline.name[:200], "text": guide_text}
            )
            report.guideline = guideline.name
    report.background_rows = background_rows
    return report


def _guideline_text(guideline: InterviewFile | None, errors: list) -> str:
    if guideline is None:
        return ""
    try:
        text = utf8_text(guideline.data, guideline.name)
    except RowError as exc:
        errors.append(exc)
        return ""
    if len(text) > GUIDELINE_MAX:
        message = _("over %(most)s characters") % {"most": GUIDELINE_MAX}
        errors.append(RowError(guideline.name, 1, None, message))
    return text


def _write(
    project: Project, rows: list[CodebookRow], people: dict[str, BackgroundRow], name: str
) -> InterviewReport:
    report = InterviewReport()
    nodes = {n.code: n for n in project_nodes(project, live=False)}
    participants: dict[str, Participant] = {}
    for row in rows:
        if row.participant not in participants:
            participant, created = _participant_upsert(project, row, people.get(row.participant))
            participants[row.participant] = participant
            report.participants_created += created
        quote, created = Quote.objects.update_or_create(
            participant=participants[row.participant],
            prompt_category=row.prompt,
            text=row.quote,
            defaults={"insight": row.insight, "source": name[:200], "line": row.line},
        )
        report.quotes += 1
        report.quotes_created += created
        for code in row.codes:
            resolved = _link_upsert(quote, code, nodes.get(code))
            report.links += 1
            report.links_resolved += resolved
            if code not in nodes:
                report.unresolved.append(
                    {"path": name, "line": row.line, "column": NODES, "value": code}
                )
    report.participants = len(participants)
    kinds = [p.kind for p in participants.values()]
    report.users = kinds.count(ParticipantKind.USER)
    report.developers = kinds.count(ParticipantKind.DEVELOPER)
    return report


def _participant_upsert(
    project: Project, row: CodebookRow, background: BackgroundRow | None
) -> tuple[Participant, bool]:
    facts = {"kind": row.kind, "experience": row.experience, "framework": row.framework}
    if background is not None:
        facts |= {
            "role": background.role,
            "gender": background.gender,
            "years": background.years,
            "duties": background.duties,
        }
    return Participant.objects.update_or_create(
        project=project, code=row.participant, defaults=facts
    )


def _link_upsert(quote: Quote, code: str, node: Node | None) -> bool:
    """Link `quote` to `code`; whether the link has a node. A code the taxonomy lacks keeps the
    node a lead mapped it to, if any."""
    link, created = QuoteLink.objects.get_or_create(quote=quote, code=code, defaults={"node": node})
    if not created and node is not None and link.node_id != node.pk:
        link.node = node
        link.mapped_by = None
        link.save(update_fields=["node", "mapped_by"])
    return link.node_id is not None


@transaction.atomic
def unresolved_code_map(*, project: Project, actor, code: str, node_code: str) -> int:
    """Map every link of the project's quotes written as `code` (a code the taxonomy lacks) to
    the project's node `node_code`; how many links changed. Mapping again moves them."""
    gate(actor, project, Write.INTERVIEWS)
    if project_nodes(project, live=False).filter(code=code).exists():
        raise ConcordError(_("%(code)s is a category of this taxonomy already.") % {"code": code})
    node = project_nodes(project).filter(code=node_code.strip()).first()
    if node is None:
        raise ConcordError(
            _("%(code)s is no category of this project.") % {"code": node_code.strip()[:30]}
        )
    links = QuoteLink.objects.filter(quote__participant__project=project, code=code)
    if not links.exists():
        raise ConcordError(_("No quote links %(code)s.") % {"code": code})
    return links.update(node=node, mapped_by=actor if getattr(actor, "pk", None) else None)
