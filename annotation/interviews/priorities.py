"""Practitioner priorities: each participant's top 3 categories per issue type (the interview
guideline's ranking question). Given on a form, by the participant themself through a one-time
link (no account; it carries its creator's authority, asked of the gate when used), or imported
as CSV (`Participant,Rank,Category`). They feed the triangulation's ranks.
"""

from __future__ import annotations

import csv
import io
import secrets
from collections import defaultdict
from dataclasses import dataclass
from datetime import timedelta

from django.db import transaction
from django.utils import timezone
from django.utils.translation import gettext as _

from annotation.gate import OPERATOR, Write, WriteForbidden, gate, write_refusal
from annotation.models import Project
from annotation.project_nodes import project_nodes
from annotation.projects.importers import ImportFailed
from annotation.projects.members import token_hash
from concord.errors import ConcordError, RowError, utf8_text
from taxonomy.interviews.models import TOP, Participant, Ranking, RankingLink
from taxonomy.models import Level, Node

LINK_DAYS = 30
CSV_COLUMNS = ("Participant", "Rank", "Category")


@dataclass(frozen=True)
class TypeChoices:
    type: Node
    themes: list[Node]


def ranking_choices(project: Project) -> list[TypeChoices]:
    """Per issue type of the project, the themes a participant may rank (taxonomy order)."""
    nodes = list(
        project_nodes(project)
        .filter(level__in=[Level.TYPE, Level.THEME])
        .order_by("position", "code")
    )
    types = [n for n in nodes if n.level == Level.TYPE]
    return [
        TypeChoices(t, [n for n in nodes if n.level == Level.THEME and n.parent_id == t.pk])
        for t in types
    ]


def ranked_themes(project: Project) -> dict[int, tuple[str, set[str]]]:
    """participant id -> (kind, the theme codes they ranked), for those who ranked: one query."""
    out: dict[int, tuple[str, set[str]]] = {}
    rows = Ranking.objects.filter(participant__project=project).values_list(
        "participant_id", "participant__kind", "node__code"
    )
    for participant, kind, code in rows:
        out.setdefault(participant, (kind, set()))[1].add(code)
    return out


def participant_rankings(participant: Participant) -> dict[str, list[str]]:
    """type code -> the theme codes in rank order."""
    out: dict[str, list[str]] = defaultdict(list)
    for ranking in participant.rankings.select_related("issue_type", "node").order_by(
        "issue_type__code", "position"
    ):
        out[ranking.issue_type.code].append(ranking.node.code)
    return dict(out)


def _checked(project: Project, choices: dict[str, list[str]]) -> list[tuple[Node, int, Node]]:
    """(type, position, theme) for `choices` (type code -> theme codes, best first), or a
    ConcordError naming what is wrong. Blank places are skipped; a theme counts once."""
    offered = {c.type.code: c for c in ranking_choices(project)}
    places = []
    for type_code, codes in choices.items():
        if type_code not in offered:
            raise ConcordError(
                _("%(code)s is no issue type of this project.") % {"code": type_code}
            )
        themes = {t.code: t for t in offered[type_code].themes}
        picked = [c for c in codes if c]
        if len(picked) > TOP:
            raise ConcordError(_("Rank at most %(n)d categories per issue type.") % {"n": TOP})
        if len(set(picked)) != len(picked):
            raise ConcordError(_("Each category may be ranked once."))
        for position, code in enumerate(picked, start=1):
            if code not in themes:
                raise ConcordError(
                    _("%(code)s is no category of %(type)s.")
                    % {"code": code, "type": offered[type_code].type.name}
                )
            places.append((offered[type_code].type, position, themes[code]))
    return places


@transaction.atomic
def ranking_save(*, participant: Participant, actor, choices: dict[str, list[str]]) -> int:
    """Replace the participant's ranking for the issue types in `choices`; how many places."""
    gate(actor, participant.project, Write.INTERVIEWS)
    places = _checked(participant.project, choices)
    types = list(choices)
    Ranking.objects.filter(participant=participant, issue_type__code__in=types).delete()
    Ranking.objects.bulk_create(
        Ranking(participant=participant, issue_type=t, position=p, node=n) for t, p, n in places
    )
    return len(places)


# ---------------------------------------------------------------- the one-time link


class RankingLinkUnusable(ConcordError):
    """The link is unknown, used or expired, or its creator may no longer take rankings."""


@transaction.atomic
def ranking_link_create(*, participant: Participant, creator) -> tuple[RankingLink, str]:
    """A new link for `participant` and its token (shown once; only its hash is stored)."""
    gate(creator, participant.project, Write.INTERVIEWS)
    token = secrets.token_urlsafe(32)
    link = RankingLink.objects.create(
        participant=participant,
        token_hash=token_hash(token),
        created_by=creator if getattr(creator, "pk", None) else None,
        expires_at=timezone.now() + timedelta(days=LINK_DAYS),
    )
    return link, token


def ranking_link_valid(token: str) -> RankingLink:
    link = (
        RankingLink.objects.select_related("participant__project__taxonomy", "created_by")
        .filter(token_hash=token_hash(token))
        .first()
    )
    if link is None:
        raise RankingLinkUnusable(_("This ranking link is not valid; ask for a new one."))
    if link.used_at is not None:
        raise RankingLinkUnusable(_("This ranking link has been used already. Thank you!"))
    if link.expires_at <= timezone.now():
        raise RankingLinkUnusable(_("This ranking link has expired; ask for a new one."))
    refusal = write_refusal(link.created_by or OPERATOR, link.participant.project, Write.INTERVIEWS)
    if isinstance(refusal, WriteForbidden):
        raise RankingLinkUnusable(
            _("Whoever made this link no longer runs the interviews; ask for a new one.")
        )
    if refusal is not None:
        raise RankingLinkUnusable(refusal.message)
    return link


@transaction.atomic
def ranking_submit(*, token: str, choices: dict[str, list[str]]) -> int:
    """Save the ranking sent through a link and use the link up (locked: one submit wins)."""
    found = ranking_link_valid(token)
    link = RankingLink.objects.select_for_update().get(pk=found.pk)
    if link.used_at is not None:
        raise RankingLinkUnusable(_("This ranking link has been used already. Thank you!"))
    n = ranking_save(
        participant=found.participant, actor=found.created_by or OPERATOR, choices=choices
    )
    link.used_at = timezone.now()
    link.save(update_fields=["used_at"])
    return n


# ---------------------------------------------------------------- CSV


def rankings_import(*, project: Project, actor, data: bytes, name: str) -> int:
    """`Participant,Rank,Category` rows (a category's type is the one above it): every problem
    by line and column, then each named participant's ranking replaced for the types in the
    file, in one transaction. How many places were stored."""
    gate(actor, project, Write.INTERVIEWS)
    rows = _csv_rows(project, data, name)
    with transaction.atomic():
        total = 0
        for participant, choices in rows.items():
            total += ranking_save(participant=participant, actor=actor, choices=choices)
    return total


def _csv_rows(project: Project, data: bytes, name: str) -> dict[Participant, dict[str, list[str]]]:
    errors: list[RowError] = []
    try:
        text = utf8_text(data, name)
    except RowError as exc:
        raise ImportFailed([exc]) from exc
    reader = csv.reader(io.StringIO(text, newline=""))
    header = [h.strip().lower() for h in next(reader, [])]
    missing = [c for c in CSV_COLUMNS if c.lower() not in header]
    if missing:
        message = _("missing column(s): %(columns)s") % {"columns": ", ".join(missing)}
        raise ImportFailed([RowError(name, 1, None, message)])
    at = {c: header.index(c.lower()) for c in CSV_COLUMNS}
    people = {p.code: p for p in Participant.objects.filter(project=project)}
    themes = {
        n.code: n for n in project_nodes(project).filter(level=Level.THEME).select_related("parent")
    }
    places: dict[tuple[Participant, str], dict[int, str]] = defaultdict(dict)
    for cells in reader:
        line = reader.line_num
        if not any(c.strip() for c in cells):
            continue
        value = {c: (cells[i].strip() if i < len(cells) else "") for c, i in at.items()}
        participant = people.get(value["Participant"])
        theme = themes.get(value["Category"])
        rank = int(value["Rank"]) if value["Rank"].isdigit() else 0
        if participant is None:
            message = _("%(participant)s is not a participant of this project")
            said = {"participant": repr(value["Participant"])}
            errors.append(RowError(name, line, "Participant", message % said))
        if theme is None:
            message = _("%(category)s is no theme of this project's taxonomy")
            said = {"category": repr(value["Category"])}
            errors.append(RowError(name, line, "Category", message % said))
        if not 1 <= rank <= TOP:
            message = _("%(rank)s: a rank is 1 to %(most)s")
            allowed = {"rank": repr(value["Rank"]), "most": TOP}
            errors.append(RowError(name, line, "Rank", message % allowed))
        if participant is None or theme is None or not 1 <= rank <= TOP:
            continue
        key = (participant, theme.parent.code if theme.parent else "")
        if rank in places[key]:
            message = _("%(participant)s has a rank %(rank)s for %(type)s already")
            taken = {"participant": participant.code, "rank": rank, "type": key[1]}
            errors.append(RowError(name, line, "Rank", message % taken))
        places[key][rank] = theme.code
    if errors:
        raise ImportFailed(errors)
    out: dict[Participant, dict[str, list[str]]] = defaultdict(dict)
    for (participant, type_code), ranks in places.items():
        out[participant][type_code] = [ranks[r] for r in sorted(ranks)]
    return out
