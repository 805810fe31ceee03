"""A project's agreement (Fleiss' kappa, Krippendorff's alpha), overall and per group, from its
tallies (annotation.figures.tallies).

agreement_cell is the one place ratings become kappa and alpha: the agreement page, its
API, `manage.py agreement` (all through project_agreement) and the Reports dashboard
(annotation.reporting.reports) call it, so they give the same answer.

Fleiss' kappa needs the same number of ratings on every item. Where coverage is uneven,
agreement_cell computes Fleiss on the items that have the full number of ratings at that level
(the project's k if enough items have it, else the most common count), says how many items were
left out and why, and gives Krippendorff's alpha on every item with two ratings or more beside it.
"""

from __future__ import annotations

from dataclasses import dataclass

from django.utils.translation import gettext as _
from django.utils.translation import ngettext

from annotation.figures.tallies import project_figures
from annotation.models import Project
from taxonomy import agreement
from taxonomy.models import Level

GROUPINGS = ("none", "type", "repository")
ALL_ITEMS = "All items"


def level_label(level: str) -> str:
    return Level(level).label.lower()


@dataclass(frozen=True)
class Cell:
    """Agreement of one group of items at one level.

    `fleiss` is computed on the items with exactly `ratings` ratings at this level; `left_out`
    of the rated items are not among them, for the reason in `left_out_why`. `alpha` covers
    every item with at least two ratings. `problem` says why there is no Fleiss' kappa."""

    group: str
    level: str
    n_items: int  # items with at least one rating at this level
    fleiss: agreement.FleissResult | None
    alpha: agreement.AlphaResult | None
    ratings: int | None
    left_out: int
    left_out_why: str
    problem: str | None
    # not a finding: the type-level kappa of items that share their final type (see group_cell)
    omitted: bool = False

    @property
    def kappa(self) -> float | None:
        return self.fleiss.kappa if self.fleiss else None

    @property
    def ci_low(self) -> float | None:
        return self.fleiss.ci_low if self.fleiss else None

    @property
    def ci_high(self) -> float | None:
        return self.fleiss.ci_high if self.fleiss else None

    @property
    def se(self) -> float | None:
        return self.fleiss.se if self.fleiss else None

    @property
    def band(self) -> str | None:
        return self.fleiss.band if self.fleiss else None

    @property
    def fleiss_items(self) -> int:
        return self.fleiss.n_items if self.fleiss else 0

    @property
    def alpha_value(self) -> float | None:
        return self.alpha.alpha if self.alpha else None

    @property
    def alpha_band(self) -> str | None:
        return self.alpha.band if self.alpha else None

    @property
    def uneven(self) -> bool:
        """Items with different numbers of ratings: alpha is the figure that covers them all."""
        return self.left_out > 0


# The name the agreement page, API and command used for a group's row: it is a Cell.
GroupAgreement = Cell


@dataclass(frozen=True)
class AgreementReport:
    level: str
    by: str
    groups: list[Cell]


def _ratings_for_fleiss(tally: agreement.RatingTally, k: int) -> int:
    """How many ratings an item needs to count in Fleiss' kappa: the project's k when at least
    two items have exactly k ratings, otherwise the most common count (ties: the larger)."""
    if int(tally.items[tally.ratings == k].sum()) >= 2:
        return k
    best = tally.items.max()
    return int(tally.ratings[tally.items == best].max())


def agreement_cell(group: str, level: str, tally: agreement.RatingTally, *, k: int) -> Cell:
    """Fleiss' kappa on the items with the full number of ratings, alpha on all; both explained.
    The only function that turns ratings (a rating matrix's tally) into the kappa and alpha
    Concord shows."""
    n_items = tally.n_items
    if n_items == 0:
        no_rating = _("No labels reach %(level)s level; try a coarser level.") % {
            "level": level_label(level)
        }
        return Cell(group, level, 0, None, None, None, 0, "", no_rating)
    m = _ratings_for_fleiss(tally, k)
    fewer = int(tally.items[tally.ratings < m].sum())
    more = int(tally.items[tally.ratings > m].sum())
    why = []
    if fewer:
        why.append(
            ngettext(
                "%(n)d item has fewer than %(m)d labels at %(level)s level",
                "%(n)d items have fewer than %(m)d labels at %(level)s level",
                fewer,
            )
            % {"n": fewer, "m": m, "level": level_label(level)}
        )
    if more:
        why.append(
            ngettext(
                "%(n)d item has more than %(m)d labels",
                "%(n)d items have more than %(m)d labels",
                more,
            )
            % {"n": more, "m": m}
        )
    fleiss: agreement.FleissResult | None = None
    alpha: agreement.AlphaResult | None = None
    problem: str | None = None
    try:
        fleiss = agreement.fleiss_kappa_of(tally, m)
    except agreement.NotEnoughRatings as exc:
        counted = int(tally.items[tally.ratings == m].sum())
        problem = problem_words(exc, items=counted, ratings=m)
    try:
        alpha = agreement.krippendorff_alpha_of(tally)
    except agreement.NotEnoughRatings as exc:
        problem = problem or problem_words(exc, items=n_items, ratings=m)
    return Cell(
        group=group,
        level=level,
        n_items=n_items,
        fleiss=fleiss,
        alpha=alpha,
        ratings=m,
        left_out=fewer + more,
        left_out_why="; ".join(why),
        problem=problem,
    )


def problem_words(exc: agreement.NotEnoughRatings, *, items: int, ratings: int) -> str:
    """Why there is no kappa, in the reader's language (taxonomy.agreement, which knows no
    Django, says it in English)."""
    if isinstance(exc, agreement.NoVariation):
        return _(
            "Every rating is %(category)s: agreement is total but kappa and alpha are undefined "
            "(chance agreement is 1 too)."
        ) % {"category": exc.category}
    if items < 2:
        return _("Agreement needs at least two rated items; there are %(n)d.") % {"n": items}
    if ratings < 2:
        return _("Agreement needs at least two ratings per item; each has one.")
    return _("Krippendorff's alpha needs at least one item with two ratings.")


def group_cell(by: str, group: str, level: str, tally: agreement.RatingTally, *, k: int) -> Cell:
    """A group's agreement_cell, except the type-level cell of a group of items sharing their
    final type: there nearly every label is that type, chance agreement is nearly 1 and kappa
    nears 0 however well volunteers agree, so it is shown as not computed, with the reason,
    rather than as a finding."""
    if by == "type" and level == Level.TYPE and group != ALL_ITEMS:
        n_items = tally.n_items
        why = _(
            "Not computed: these items share their final type, so at type level kappa measures "
            "chance, not agreement."
        )
        return Cell(group, level, n_items, None, None, None, 0, "", why, omitted=True)
    return agreement_cell(group, level, tally, k=k)


def project_agreement(
    project: Project, *, level: str = Level.THEME, by: str = "type"
) -> AgreementReport:
    """Fleiss' kappa (and Krippendorff's alpha) at one level, overall and per group, each an
    agreement_cell (as on the Reports dashboard), from the project's tallies
    (annotation.figures.tallies: kept up to date label by label on PostgreSQL).

    Labels roll up to `level` (a sub-theme label counts as its theme and type); labels coarser
    than `level` are no rating there. Groups: `type` = the type of the final label (how the study
    reports kappa), `repository` = the issue's repository; a group without a rating at `level`
    is left out.
    """
    if by not in GROUPINGS:
        raise ValueError(f"unknown grouping {by!r}; use one of {GROUPINGS}")
    figures = project_figures(project)
    k = project.overlap_k
    groups = [agreement_cell(ALL_ITEMS, level, figures.tally(level), k=k)]
    if by != "none":
        names = group_names(project, by)
        for name, tally in sorted(figures.groups(level, by).items()):
            groups.append(group_cell(by, names(name), level, tally, k=k))
    return AgreementReport(level=level, by=by, groups=groups)


def group_names(project: Project, by: str):
    """A tally's group key as shown: a type's code with its name ("C Crash"); a repository as
    it is (owner/repo)."""
    if by != "type":
        return lambda key: key
    names = dict(project.taxonomy.nodes.filter(level=Level.TYPE).values_list("code", "name"))
    return lambda code: f"{code} {names.get(code, '')}".strip()
