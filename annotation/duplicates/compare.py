"""The side-by-side view of two near-duplicates: each text as escaped plain text, with the words
marked whose terms both reports have in their own lines (not the template, frames or logs)."""

from __future__ import annotations

from dataclasses import dataclass

from django.utils.html import escape
from django.utils.safestring import SafeString, mark_safe

from annotation.duplicates.text import Boilerplate, Report, own_lines, report_terms, spans
from annotation.models import DuplicateIndex, Item


@dataclass(frozen=True)
class Side:
    item: Item
    title: SafeString
    body: SafeString


def side_by_side(a: Item, b: Item, index: DuplicateIndex | None) -> tuple[Side, Side]:
    """Both items' titles and bodies with what they share marked, by the boilerplate `index`
    learned (none yet: only the common template headings are left out)."""
    reports = [_report(item) for item in (a, b)]
    kept = [_boilerplate(index, r.tracker) for r in reports]
    shared = set(report_terms(reports[0], kept[0])) & set(report_terms(reports[1], kept[1]))
    return tuple(  # type: ignore[return-value]  # two items in, two sides out
        Side(item, _marked(r.title, shared), _marked_body(r.body, bp, shared))
        for item, r, bp in zip((a, b), reports, kept, strict=True)
    )


def _report(item: Item) -> Report:
    issue = item.issue
    return Report(item.pk, f"{issue.host}/{issue.owner}/{issue.repo}", issue.title, issue.body)


def _boilerplate(index: DuplicateIndex | None, tracker: str) -> Boilerplate:
    learned = (index.boilerplate if index else {}).get(tracker, {})
    return Boilerplate(frozenset(learned.get("lines", ())), frozenset(learned.get("terms", ())))


def _marked_body(body: str, boilerplate: Boilerplate, shared: set[str]) -> SafeString:
    own = set(own_lines(body, boilerplate))
    lines = (
        _marked(line, shared) if line.strip() in own else escape(line)
        for line in (body or "").splitlines()
    )
    return mark_safe("\n".join(lines))  # noqa: S308 - every piece escaped by escape()


def _marked(text: str, shared: set[str]) -> SafeString:
    """`text` escaped, with <mark> around the words whose terms are in `shared`."""
    out: list[str] = []
    at = 0
    for start, end, terms in spans(text or ""):
        if any(t in shared for t in terms):
            out.append(escape(text[at:start]))
            out.append(f'<mark class="dup-shared">{escape(text[start:end])}</mark>')
            at = end
    out.append(escape((text or "")[at:]))
    return mark_safe("".join(out))  # noqa: S308 - every piece escaped by escape()
