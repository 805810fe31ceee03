"""Triangulation: the labeled issues beside the interviews, per theme. For each theme: its share
of the final labels (reporting's project_distribution, the one count of labeled issues), how
many users and how many developers raised it, its rank among users, among developers and among
issues; Spearman's rank correlation between each pair, with its interval; and the themes whose
ranks part (practitioners stress what issues rarely show, and the reverse).

What a participant raised is their practitioner ranking when they gave one (annotation.interviews
.priorities: a category they put in their top 3), else the themes their quotes link to and the
final codes of their transcripts coded in the browser (annotation.interviews.coding). A link
or a ranked category below a theme counts for its theme; a link to a whole type counts for none.
One page, API, CSV and command read `project_triangulation`.
"""

from __future__ import annotations

import csv
import io
from collections import defaultdict
from dataclasses import asdict, dataclass

from django.utils.translation import gettext as _

from annotation.interviews.coding import project_transcripts, transcript_final_codes
from annotation.interviews.priorities import ranked_themes
from annotation.models import Project
from annotation.project_nodes import project_nodes
from annotation.reporting.charts import label_room
from annotation.reporting.reports import project_distribution
from taxonomy.interviews.models import ParticipantKind, QuoteLink
from taxonomy.interviews.ranking import RankCorrelation, rank_gap, ranks_of, spearman
from taxonomy.models import Level


@dataclass(frozen=True)
class ThemeRow:
    code: str
    name: str
    issues: int  # final labels in the theme
    issue_share: float  # of all final labels
    users: int  # users who raised it
    developers: int
    user_share: float  # of the users interviewed
    developer_share: float
    issue_rank: float
    user_rank: float
    developer_rank: float
    practitioner_rank: float  # users and developers together


@dataclass(frozen=True)
class Comparison:
    key: str  # "users-developers", ...
    label: str
    correlation: RankCorrelation


@dataclass(frozen=True)
class Triangulation:
    themes: list[ThemeRow]  # every theme of the project, in taxonomy order
    total_issues: int
    users: int  # participants interviewed, per kind
    developers: int
    comparisons: list[Comparison]
    gap: int  # places apart that count as a disagreement
    stressed_by_practitioners: list[ThemeRow]  # practitioners rank it far above issues
    frequent_in_issues: list[ThemeRow]  # issues rank it far above practitioners
    users_vs_developers: list[ThemeRow]  # the two groups rank it far apart


def project_triangulation(project: Project) -> Triangulation:
    themes = list(
        project_nodes(project, live=False)
        .filter(level=Level.THEME)
        .order_by("parent__position", "position", "code")
        .values_list("code", "name")
    )
    issues = {t.code: t.items for t in project_distribution(project).by_theme}
    total = sum(issues.values())
    raised, people = _raised(project)
    codes = [code for code, _name in themes]
    counts = {
        "issues": [issues.get(c, 0) for c in codes],
        "users": [len(raised[ParticipantKind.USER][c]) for c in codes],
        "developers": [len(raised[ParticipantKind.DEVELOPER][c]) for c in codes],
    }
    counts["practitioners"] = [
        u + d for u, d in zip(counts["users"], counts["developers"], strict=True)
    ]
    ranks = {key: ranks_of(values) for key, values in counts.items()}
    rows = [
        ThemeRow(
            code=code,
            name=name,
            issues=counts["issues"][i],
            issue_share=counts["issues"][i] / total if total else 0.0,
            users=counts["users"][i],
            developers=counts["developers"][i],
            user_share=_share(counts["users"][i], people[ParticipantKind.USER]),
            developer_share=_share(counts["developers"][i], people[ParticipantKind.DEVELOPER]),
            issue_rank=ranks["issues"][i],
            user_rank=ranks["users"][i],
            developer_rank=ranks["developers"][i],
            practitioner_rank=ranks["practitioners"][i],
        )
        for i, (code, name) in enumerate(themes)
    ]
    gap = rank_gap(len(rows))
    return Triangulation(
        themes=rows,
        total_issues=total,
        users=people[ParticipantKind.USER],
        developers=people[ParticipantKind.DEVELOPER],
        comparisons=_comparisons(counts),
        gap=gap,
        stressed_by_practitioners=[
            r for r in rows if r.users + r.developers and r.issue_rank - r.practitioner_rank >= gap
        ],
        frequent_in_issues=[
            r for r in rows if r.issues and r.practitioner_rank - r.issue_rank >= gap
        ],
        users_vs_developers=[
            r
            for r in rows
            if (r.users or r.developers) and abs(r.user_rank - r.developer_rank) >= gap
        ],
    )


def _share(n: int, of: int) -> float:
    return n / of if of else 0.0


def _raised(project: Project) -> tuple[dict[str, dict[str, set[int]]], dict[str, int]]:
    """Per kind, per theme code: the participants who raised it; and how many participants of
    each kind there are. One query for the links, one for the people."""
    raised: dict[str, dict[str, set[int]]] = {k: defaultdict(set) for k in ParticipantKind}
    ranked = ranked_themes(project)  # participant -> (kind, theme codes) of those who ranked
    for participant, (kind, codes) in ranked.items():
        for code in codes:
            raised[kind][code].add(participant)
    links = (
        QuoteLink.objects.filter(quote__participant__project=project, node__isnull=False)
        .exclude(quote__participant_id__in=list(ranked))
        .values_list(
            "quote__participant_id",
            "quote__participant__kind",
            "node__level",
            "node__code",
            "node__parent__code",
        )
    )
    for participant, kind, level, code, parent in links:
        theme = code if level == Level.THEME else parent if level == Level.SUBTHEME else None
        if theme:
            raised[kind][theme].add(participant)
    _raised_in_transcripts(project, raised, skip=set(ranked))
    people: dict[str, int] = dict.fromkeys(ParticipantKind, 0)
    for kind in project.participants.values_list("kind", flat=True):
        people[kind] += 1
    return raised, people


def _raised_in_transcripts(
    project: Project, raised: dict[str, dict[str, set[int]]], *, skip: set[int]
) -> None:
    """Add the themes of the final codes of each participant's coded transcripts (coding
    .transcript_final_codes: every coder done; lines all coders gave a category, or the lead
    kept), as their quotes' links count."""
    transcripts = (
        project_transcripts(project)
        .filter(participant__isnull=False)
        .exclude(participant_id__in=skip)
    )
    theme_of: dict[str, str] | None = None
    for transcript in transcripts:
        participant = transcript.participant
        codes = {c.code for c in transcript_final_codes(transcript).codes}
        if participant is None or not codes:
            continue
        if theme_of is None:
            theme_of = _themes_of(project)
        for code in codes:
            if code in theme_of:
                raised[participant.kind][theme_of[code]].add(participant.pk)


def _themes_of(project: Project) -> dict[str, str]:
    """Each theme's and sub-theme's code -> its theme's code."""
    rows = project_nodes(project, live=False).values_list("code", "level", "parent__code")
    return {
        code: code if level == Level.THEME else parent
        for code, level, parent in rows
        if level in (Level.THEME, Level.SUBTHEME)
    }


def _comparisons(counts: dict[str, list[int]]) -> list[Comparison]:
    pairs = [
        ("users-developers", _("Users and developers"), "users", "developers"),
        ("issues-users", _("Issues and users"), "issues", "users"),
        ("issues-developers", _("Issues and developers"), "issues", "developers"),
        ("issues-practitioners", _("Issues and all practitioners"), "issues", "practitioners"),
    ]
    return [Comparison(key, label, spearman(counts[a], counts[b])) for key, label, a, b in pairs]


# ---------------------------------------------------------------- shapes: JSON and CSV

CSV_COLUMNS = [
    "theme",
    "name",
    "issues",
    "issue_share",
    "users",
    "developers",
    "user_share",
    "developer_share",
    "issue_rank",
    "user_rank",
    "developer_rank",
    "practitioner_rank",
    "stressed_by_practitioners",
    "frequent_in_issues",
]


def triangulation_json(report: Triangulation) -> dict:
    return {
        "total_issues": report.total_issues,
        "users": report.users,
        "developers": report.developers,
        "rank_gap": report.gap,
        "themes": [asdict(r) for r in report.themes],
        "correlations": [{"between": c.key, **asdict(c.correlation)} for c in report.comparisons],
        "stressed_by_practitioners": [r.code for r in report.stressed_by_practitioners],
        "frequent_in_issues": [r.code for r in report.frequent_in_issues],
        "users_vs_developers": [r.code for r in report.users_vs_developers],
    }


def triangulation_csv(report: Triangulation) -> str:
    """One row per theme (CSV_COLUMNS); the correlations are the JSON's and the page's."""
    stressed = {r.code for r in report.stressed_by_practitioners}
    frequent = {r.code for r in report.frequent_in_issues}
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(CSV_COLUMNS)
    for r in report.themes:
        writer.writerow(
            [
                r.code,
                r.name,
                r.issues,
                f"{r.issue_share:.4f}",
                r.users,
                r.developers,
                f"{r.user_share:.4f}",
                f"{r.developer_share:.4f}",
                r.issue_rank,
                r.user_rank,
                r.developer_rank,
                r.practitioner_rank,
                int(r.code in stressed),
                int(r.code in frequent),
            ]
        )
    return out.getvalue()


# ---------------------------------------------------------------- the chart


@dataclass(frozen=True)
class ChartBar:
    y: int
    width: float
    value_text: str
    fill: str


@dataclass(frozen=True)
class ChartRow:
    label: str
    y: int
    bars: list[ChartBar]


@dataclass(frozen=True)
class TriangulationChart:
    width: int
    height: int
    left: int
    axis: int
    rows: list[ChartRow]
    legend: list[tuple[str, str]]  # (fill, what)


AXIS, BAR, ROW = 300, 9, 40
FILLS = ("#3b6ea8", "#b5651d", "#2e7d4f")  # issues, users, developers
LABEL_CHARS = 34


def triangulation_chart(report: Triangulation) -> TriangulationChart:
    """Per theme three bars on one scale: its share of the final labels, of the users and of
    the developers who raised it; each prints its percentage."""
    labels = [f"{r.code} {r.name}" for r in report.themes]
    left = label_room(labels, LABEL_CHARS)
    rows = []
    for i, r in enumerate(report.themes):
        y = 24 + i * ROW
        shares = (r.issue_share, r.user_share, r.developer_share)
        bars = [
            ChartBar(y + j * (BAR + 2), round(AXIS * share, 1), f"{100 * share:.0f}%", fill)
            for j, (share, fill) in enumerate(zip(shares, FILLS, strict=True))
        ]
        rows.append(ChartRow(labels[i], y, bars))
    legend = [
        (FILLS[0], _("share of final labels")),
        (FILLS[1], _("share of users who raised it")),
        (FILLS[2], _("share of developers who raised it")),
    ]
    return TriangulationChart(left + AXIS + 50, 30 + len(rows) * ROW, left, AXIS, rows, legend)
