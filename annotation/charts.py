"""Geometry for the server-rendered SVG charts: no JavaScript, no CDN, readable without colour
(every bar carries its value as text, the CI is drawn as a whisker, bands are named)."""

from __future__ import annotations

from dataclasses import dataclass

from annotation.selectors import AgreementReport

LEFT = 190  # room for group names
WIDTH = 420  # the 0..1 axis
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
    width: int = LEFT + WIDTH + 90
    left: int = LEFT
    axis: int = WIDTH
    ticks: tuple[tuple[float, str], ...] = tuple(
        (LEFT + WIDTH * t / 5, f"{t / 5:.1f}") for t in range(6)
    )


def _x(value: float) -> float:
    return LEFT + WIDTH * min(max(value, 0.0), 1.0)


def kappa_chart(report: AgreementReport) -> KappaChart:
    bars = []
    for i, group in enumerate(report.groups):
        y = TOP + i * ROW
        f = group.fleiss
        if f is None:
            alpha = group.alpha
            text = f"alpha {alpha.alpha:.3f}" if alpha else "n/a"
            value = alpha.alpha if alpha else 0.0
            bars.append(Bar(group.group, y, _x(value) - LEFT, text, None, None, "no Fleiss' kappa"))
            continue
        bars.append(
            Bar(
                label=group.group,
                y=y,
                width=_x(f.kappa) - LEFT,
                value_text=f"{f.kappa:.3f} ({f.band})",
                ci_from=_x(f.ci_low),
                ci_to=_x(f.ci_high),
                missing=None,
            )
        )
    return KappaChart(bars=bars, height=TOP + len(bars) * ROW + 20)
