"""Geometry for the server-rendered SVG charts: no JavaScript, no CDN, readable without colour
(every bar carries its value as text, the CI is drawn as a whisker, bands are named)."""

from __future__ import annotations

import math
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass

from django.utils.translation import gettext as _
from django.utils.translation import ngettext

from annotation.reporting.agreement import AgreementReport
from annotation.reporting.words import band_name, group_name, level_name
from taxonomy import agreement

LEFT = 190  # room for group names
WIDTH = 420  # the 0..1 axis
VALUE_ROOM = 190  # right of the axis: "0.944 (almost perfect)" in full, never cut
ROW = 34
TOP = 30


@dataclass(frozen=True)
class Bar:
    label: str
    y: int
    width: float
    value_text: str
    ci_from: float | None
    ci_to: float | None
    missing: str | None


@dataclass(frozen=True)
class KappaChart:
    bars: list[Bar]
    height: int
    width: int = LEFT + WIDTH + VALUE_ROOM
    left: int = LEFT
    axis: int = WIDTH
    ticks: tuple[tuple[float, str], ...] = tuple(
        (LEFT + WIDTH * t / 5, f"{t / 5:.1f}") for t in range(6)
    )


def text_px(text: str, size: int = 12) -> float:
    """A generous estimate of `text`'s width in a sans-serif font of `size` px: wide (CJK)
    characters take a full em, others 0.62 em (wider than the average Latin letter), so a label
    the estimate fits is never cut by the SVG's edge."""
    wide = sum(unicodedata.east_asian_width(ch) in "WF" for ch in text)
    return size * (wide + 0.62 * (len(text) - wide))


def label_room(labels: Sequence[str], chars: int, minimum: int = 60) -> int:
    """Pixels left of an axis for right-aligned labels the template truncates to `chars`
    characters (plus the 8 px gap the templates leave)."""
    longest = max([text_px(label[:chars]) for label in labels] + [0.0])
    return max(minimum, math.ceil(longest) + 16)


def _x(value: float) -> float:
    return LEFT + WIDTH * min(max(value, 0.0), 1.0)


def kappa_chart(report: AgreementReport) -> KappaChart:
    bars = []
    for i, group in enumerate(report.groups):
        y = TOP + i * ROW
        f = group.fleiss
        if f is None:
            alpha = group.alpha
            text = _("alpha %(alpha).3f") % {"alpha": alpha.alpha} if alpha else _("n/a")
            value = alpha.alpha if alpha else 0.0
            bars.append(
                Bar(
                    group_name(group.group),
                    y,
                    _x(value) - LEFT,
                    text,
                    None,
                    None,
                    _("no Fleiss' kappa"),
                )
            )
            continue
        bars.append(
            Bar(
                label=group_name(group.group),
                y=y,
                width=_x(f.kappa) - LEFT,
                value_text=f"{f.kappa:.3f} ({band_name(f.band)})",
                ci_from=_x(f.ci_low),
                ci_to=_x(f.ci_high),
                missing=None,
            )
        )
    return KappaChart(bars=bars, height=TOP + len(bars) * ROW + 20)


# ---------------------------------------------------------------- report charts (Reports section)
#
# Every report chart prints its values as text, draws Landis & Koch bands with their names where
# it shows agreement, and tells series apart by marker shape or fill pattern as well as colour,
# so it reads in greyscale and in print. Geometry is computed here; templates only place it.

KAPPA_BAND_FILLS = {
    "poor": "#f6e4e4",
    "slight": "#f8eedf",
    "fair": "#f6f3dc",
    "moderate": "#eaf2e2",
    "substantial": "#deefe7",
    "almost perfect": "#dbe8f4",
}
INK, MUTED, DARK = "#111111", "#555555", "#1d3d63"
# marker per level: shape tells the series apart without colour
MARKER_SHAPES = {"type": "circle", "theme": "square", "subtheme": "diamond"}


@dataclass(frozen=True)
class Scale:
    """Maps agreement values in [lo, hi] onto pixels from `start` over `length` (reversed for a
    vertical axis, where higher values sit higher)."""

    lo: float
    hi: float
    start: float
    length: float
    reverse: bool = False

    def __call__(self, value: float) -> float:
        t = (min(max(value, self.lo), self.hi) - self.lo) / (self.hi - self.lo)
        return round(self.start + self.length * ((1 - t) if self.reverse else t), 1)

    def ticks(self) -> list[tuple[float, str]]:
        steps = round((self.hi - self.lo) / 0.2)
        return [(self(self.lo + 0.2 * i), f"{self.lo + 0.2 * i:.1f}") for i in range(steps + 1)]


@dataclass(frozen=True)
class Band:
    start: float  # px along the value axis (left or top edge)
    size: float  # px
    name: str
    fill: str
    label_at: float  # px of the name's centre along the value axis


def _lower_bound(values: list[float]) -> float:
    """0, or lower in steps of 0.2 (down to -1) when a value or CI end is negative."""
    low = min([0.0, *values])
    return max(-1.0, math.floor(low / 0.2 - 1e-9) * 0.2) if low < 0 else 0.0


def kappa_bands(scale: Scale) -> list[Band]:
    bands, lower = [], -1.0
    for upper, name in agreement.LANDIS_KOCH_BANDS:
        a, b = max(lower, scale.lo), min(upper, scale.hi)
        lower = upper
        if b <= a:
            continue
        p, q = sorted((scale(a), scale(b)))
        fill = KAPPA_BAND_FILLS[name]
        bands.append(Band(p, round(q - p, 1), band_name(name), fill, round((p + q) / 2, 1)))
    return bands


def marker_path(shape: str, x: float, y: float, r: float = 5.0) -> str:
    if shape == "square":
        return f"M{x - r:.1f},{y - r:.1f}h{2 * r:.1f}v{2 * r:.1f}h{-2 * r:.1f}Z"
    if shape == "diamond":
        d = r + 1
        return f"M{x:.1f},{y - d:.1f}L{x + d:.1f},{y:.1f}L{x:.1f},{y + d:.1f}L{x - d:.1f},{y:.1f}Z"
    return f"M{x - r:.1f},{y:.1f}a{r},{r} 0 1,0 {2 * r:.1f},0a{r},{r} 0 1,0 {-2 * r:.1f},0Z"


def cell_text(cell) -> tuple[str, bool]:
    """What a chart prints for an agreement cell (annotation.reporting.agreement.Cell), and whether
    the mark is hollow (alpha in place of kappa)."""
    if cell.fleiss is not None:
        f = cell.fleiss
        text = f"{f.kappa:.3f} [{f.ci_low:.2f}, {f.ci_high:.2f}] {band_name(f.band)}"
        if cell.uneven and cell.alpha is not None:
            text += "; " + _("alpha %(alpha).3f") % {"alpha": cell.alpha.alpha}
        return text, False
    if cell.omitted:
        return _("not computed (one final type)"), False
    if cell.alpha is not None:
        alpha = {"alpha": cell.alpha.alpha, "band": band_name(cell.alpha.band)}
        return _("alpha %(alpha).3f %(band)s (no Fleiss)") % alpha, True
    return (_("no ratings") if cell.n_items == 0 else _("undefined")), False


@dataclass(frozen=True)
class Dot:
    series: str
    y: float  # centre line
    path: str  # marker outline, empty when nothing is drawn
    hollow: bool
    ci_from: float | None
    ci_to: float | None
    text: str
    title: str


@dataclass(frozen=True)
class DotGroup:
    label: str
    y: float  # baseline of the group's name
    dots: list[Dot]


@dataclass(frozen=True)
class DotChart:
    """Groups (final types, repositories) of dots, one per level, each with its 95% CI."""

    title: str
    width: int
    height: int
    left: int
    top: int
    plot_height: int
    text_x: int
    groups: list[DotGroup]
    bands: list[Band]
    ticks: list[tuple[float, str]]
    legend: list[tuple[float, str, str]]  # (x, marker path, level name)


DOT_LEFT, DOT_AXIS, DOT_ROW, DOT_TOP = 170, 360, 18, 46


def dot_chart(title: str, rows: list[tuple[str, list]]) -> DotChart:
    """`rows`: (group name, [Cell per level]) as annotation.reporting.reports.Dashboard.rows gives
    them."""
    values = [
        v for _, cells in rows for c in cells for v in (c.ci_low, c.alpha_value) if v is not None
    ]
    scale = Scale(_lower_bound(values), 1.0, DOT_LEFT, DOT_AXIS)
    groups, y = [], DOT_TOP
    for name, cells in rows:
        label_y = y + 13
        y += DOT_ROW
        dots = []
        for cell in cells:
            centre = y + DOT_ROW / 2
            text, hollow = cell_text(cell)
            value = cell.kappa if cell.kappa is not None else cell.alpha_value
            shape = MARKER_SHAPES.get(cell.level, "circle")
            dots.append(
                Dot(
                    series=level_name(cell.level),
                    y=centre,
                    path=marker_path(shape, scale(value), centre) if value is not None else "",
                    hollow=hollow,
                    ci_from=scale(cell.ci_low) if cell.ci_low is not None else None,
                    ci_to=scale(cell.ci_high) if cell.ci_high is not None else None,
                    text=text,
                    title=_("%(group)s, %(level)s level: %(text)s")
                    % {"group": group_name(name), "level": level_name(cell.level), "text": text},
                )
            )
            y += DOT_ROW
        groups.append(DotGroup(group_name(name), label_y, dots))
        y += 8
    legend: list[tuple[float, str, str]] = [
        (DOT_LEFT + 90 * i, marker_path(shape, DOT_LEFT + 90 * i, 12), level_name(level))
        for i, (level, shape) in enumerate(MARKER_SHAPES.items())
    ]
    return DotChart(
        title=title,
        width=DOT_LEFT + DOT_AXIS + 300,
        height=y + 24,
        left=DOT_LEFT,
        top=DOT_TOP,
        plot_height=y - DOT_TOP,
        text_x=DOT_LEFT + DOT_AXIS + 10,
        groups=groups,
        bands=kappa_bands(scale),
        ticks=scale.ticks(),
        legend=legend,
    )


@dataclass(frozen=True)
class WeekPoint:
    x: float
    y: float | None  # None: nothing to draw this week
    path: str
    hollow: bool
    ci_top: float | None
    ci_bottom: float | None
    value_text: str
    value_y: float
    week: str
    items: int
    title: str


@dataclass(frozen=True)
class WeekChart:
    title: str
    width: int
    height: int
    left: int
    top: int
    plot_width: int
    plot_height: int
    points: list[WeekPoint]
    line: str  # polyline points through the weeks with a kappa
    bands: list[Band]
    ticks: list[tuple[float, str]]
    axis_y: int


WEEK_LEFT, WEEK_STEP, WEEK_TOP, WEEK_PLOT_H = 50, 64, 20, 260


def week_chart(title: str, weeks: list, level: str) -> WeekChart:
    """One point per ISO week (annotation.reporting.reports.WeekCells) at `level`, with its 95%
    CI."""
    cells = [w.cells[level] for w in weeks]
    values = [v for c in cells for v in (c.ci_low, c.alpha_value) if v is not None]
    scale = Scale(_lower_bound(values), 1.0, WEEK_TOP, WEEK_PLOT_H, reverse=True)
    points, line = [], []
    for i, (week, cell) in enumerate(zip(weeks, cells, strict=True)):
        x = WEEK_LEFT + WEEK_STEP * i + WEEK_STEP / 2
        value = cell.kappa if cell.kappa is not None else cell.alpha_value
        text, hollow = cell_text(cell)
        y = scale(value) if value is not None else None
        if cell.kappa is not None:
            line.append(f"{x:.1f},{y:.1f}")
        top = scale(cell.ci_high) if cell.ci_high is not None else y
        points.append(
            WeekPoint(
                x=x,
                y=y,
                path=marker_path(MARKER_SHAPES.get(level, "circle"), x, y) if y is not None else "",
                hollow=hollow,
                ci_top=scale(cell.ci_high) if cell.ci_high is not None else None,
                ci_bottom=scale(cell.ci_low) if cell.ci_low is not None else None,
                value_text=(
                    f"{value:.2f}" + (" alpha" if hollow else "") if value is not None else _("n/a")
                ),
                value_y=(top - 8) if top is not None else WEEK_TOP + WEEK_PLOT_H - 6,
                week=week.week,
                items=week.n_items,
                title=_items_title(week.week, week.n_items, text),
            )
        )
    plot_width = WEEK_STEP * max(len(weeks), 1)
    return WeekChart(
        title=title,
        width=WEEK_LEFT + plot_width + 120,
        height=WEEK_TOP + WEEK_PLOT_H + 62,
        left=WEEK_LEFT,
        top=WEEK_TOP,
        plot_width=plot_width,
        plot_height=WEEK_PLOT_H,
        points=points,
        line=" ".join(line),
        bands=kappa_bands(scale),
        ticks=scale.ticks(),
        axis_y=WEEK_TOP + WEEK_PLOT_H,
    )


def _items_title(week: str, n: int, text: str) -> str:
    return ngettext("%(week)s (%(n)d item): %(text)s", "%(week)s (%(n)d items): %(text)s", n) % {
        "week": week,
        "n": n,
        "text": text,
    }


def shade(value: float) -> tuple[str, str]:
    """A light-to-dark blue for 0..1 (outside clamped), with ink that stays readable on it."""
    t = min(max(value, 0.0), 1.0)
    light, dark = (235, 242, 250), (29, 61, 99)
    rgb = (round(a + (b - a) * t) for a, b in zip(light, dark, strict=True))
    return "#{:02x}{:02x}{:02x}".format(*rgb), "#ffffff" if t > 0.55 else "#111111"


@dataclass(frozen=True)
class GridCell:
    x: int
    y: int
    fill: str
    ink: str
    text: str
    title: str
    href: str  # empty: not a link


@dataclass(frozen=True)
class HeatGrid:
    title: str
    width: int
    height: int
    cell: int
    label_x: int
    rows: list[tuple[int, str]]  # (text baseline, label)
    columns: list[tuple[int, int, str]]  # (x, y, label), drawn turned by -45 degrees
    cells: list[GridCell]

    @property
    def linked(self) -> bool:
        """Whether cells are links: then the grid is a group of named links, not an image (an
        image holds no controls a screen reader could reach)."""
        return any(c.href for c in self.cells)


def heat_grid(
    title: str,
    rows: list[str],
    columns: list[str],
    values: Sequence[Sequence[int | None]],
    *,
    titles: list[list[str]] | None = None,
    hrefs: list[list[str]] | None = None,
    cell: int = 40,
    head_room: int = 70,
) -> HeatGrid:
    """A grid of counts, shaded by size; every cell prints its count (a dot when None), so the
    shade is only a help. The row names get the room they need (the template cuts them at 34
    characters)."""
    row_room = label_room(rows, 34)
    top = max([v for row in values for v in row if v is not None] + [1])
    cells = []
    for i, row in enumerate(values):
        for j, value in enumerate(row):
            x, y = row_room + j * cell, head_room + i * cell
            if value is None:
                fill, ink, text = "#f4f4f4", MUTED, "·"
            else:
                fill, ink = shade(value / top) if value else ("#ffffff", MUTED)
                text = str(value)
            cells.append(
                GridCell(
                    x,
                    y,
                    fill,
                    ink,
                    text,
                    titles[i][j] if titles else f"{rows[i]} / {columns[j]}: {text}",
                    hrefs[i][j] if hrefs else "",
                )
            )
    return HeatGrid(
        title=title,
        width=row_room + len(columns) * cell + 40,
        height=head_room + len(rows) * cell + 10,
        cell=cell,
        label_x=row_room - 8,
        rows=[(head_room + i * cell + cell // 2 + 4, r) for i, r in enumerate(rows)],
        columns=[
            (row_room + j * cell + cell // 2, head_room - 6, c) for j, c in enumerate(columns)
        ],
        cells=cells,
    )


@dataclass(frozen=True)
class HBar:
    label: str
    y: int
    width: float
    value_text: str
    title: str


@dataclass(frozen=True)
class BarChart:
    title: str
    width: int
    height: int
    left: int
    axis: int
    bars: list[HBar]


BAR_AXIS, BAR_ROW = 380, 24
BAR_LABEL_CHARS = 40  # the templates truncate bar labels to this many characters


def bar_chart(title: str, rows: list[tuple[str, int]]) -> BarChart:
    """Horizontal bars of counts; each bar prints its count and its share of the total."""
    total = sum(n for _, n in rows) or 1
    top = max([n for _, n in rows] + [1])
    left = label_room([label for label, _ in rows], BAR_LABEL_CHARS)
    bars = [
        HBar(
            label=label,
            y=10 + i * BAR_ROW,
            width=round(BAR_AXIS * n / top, 1),
            value_text=f"{n} ({100 * n / total:.1f}%)",
            title=ngettext("%(label)s: %(n)d final label", "%(label)s: %(n)d final labels", n)
            % {"label": label, "n": n},
        )
        for i, (label, n) in enumerate(rows)
    ]
    return BarChart(
        title=title,
        width=left + BAR_AXIS + 120,
        height=20 + len(bars) * BAR_ROW,
        left=left,
        axis=BAR_AXIS,
        bars=bars,
    )


# fill patterns for stacked series: (kind, background, ink); a pattern tells series apart in
# greyscale, the legend names them
PATTERNS = (
    ("solid", "#2f5d8a", "#2f5d8a"),
    ("hatch", "#ffffff", "#b5651d"),
    ("dots", "#ffffff", "#2e7d4f"),
    ("cross", "#ffffff", "#6b4c9a"),
    ("vertical", "#ffffff", "#7a4b00"),
    ("solid", "#9aa7b4", "#9aa7b4"),
)


@dataclass(frozen=True)
class Pattern:
    id: str
    kind: str
    background: str
    ink: str


@dataclass(frozen=True)
class Segment:
    x: float
    width: float
    pattern: str
    text: str  # the count, when the segment is wide enough to hold it
    title: str


@dataclass(frozen=True)
class StackRow:
    label: str
    y: int
    segments: list[Segment]
    total_x: float
    total_text: str


@dataclass(frozen=True)
class StackedChart:
    title: str
    width: int
    height: int
    left: int
    rows: list[StackRow]
    patterns: list[Pattern]
    legend: list[tuple[int, str, str]]  # (x, pattern id, series name)


STACK_TOP = 34


def stacked_chart(
    title: str, chart_id: str, series: list[str], rows: list[tuple[str, list[int]]]
) -> StackedChart:
    """Horizontal stacked bars: one row per repository, one segment per series (type)."""
    patterns = [
        Pattern(f"{chart_id}-p{i}", *PATTERNS[i % len(PATTERNS)]) for i in range(len(series))
    ]
    top = max([sum(values) for _, values in rows] + [1])
    left = label_room([label for label, _ in rows], BAR_LABEL_CHARS)
    out = []
    for i, (label, values) in enumerate(rows):
        y, x, segments = STACK_TOP + i * BAR_ROW, float(left), []
        for name, pattern, n in zip(series, patterns, values, strict=True):
            width = round(BAR_AXIS * n / top, 1)
            if n:
                text = str(n) if width >= 8 * len(str(n)) + 6 else ""
                segments.append(Segment(x, width, pattern.id, text, f"{label}, {name}: {n}"))
            x += width
        out.append(StackRow(label, y, segments, x + 6, f"{sum(values)}"))
    legend = [
        (left + 160 * i, p.id, name)
        for i, (p, name) in enumerate(zip(patterns, series, strict=True))
    ]
    return StackedChart(
        title=title,
        width=max(left + BAR_AXIS + 80, left + 160 * len(series)),
        height=STACK_TOP + len(rows) * BAR_ROW + 10,
        left=left,
        rows=out,
        patterns=patterns,
        legend=legend,
    )
