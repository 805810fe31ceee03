"""Writes on taxonomies: adding a node under the study's code scheme.

Codes follow the study (`taxonomy.csv`): types are letters (`A`, `B`, `C`), themes the type's code
and a number (`C.7`), sub-themes the theme's code and a lower-case roman numeral (`C.1.iv`). A new
node takes the next code after the highest one used under its parent, counting retired nodes too,
so an existing code is never reused, renumbered or deleted: labels given before keep their meaning.
"""

from __future__ import annotations

import re
import string

from django.db import transaction
from django.db.models import Max

from concord.errors import ConcordError
from concord.input_checks import ascii_digits
from taxonomy.models import Level, Node, Taxonomy

CHILD_LEVEL: dict[str | None, str] = {
    None: Level.TYPE,
    Level.TYPE: Level.THEME,
    Level.THEME: Level.SUBTHEME,
}

ROMAN = (
    (1000, "m"), (900, "cm"), (500, "d"), (400, "cd"), (100, "c"), (90, "xc"),
    (50, "l"), (40, "xl"), (10, "x"), (9, "ix"), (5, "v"), (4, "iv"), (1, "i"),
)  # fmt: skip
ROMAN_RE = re.compile(r"^m{0,3}(cm|cd|d?c{0,3})(xc|xl|l?x{0,3})(ix|iv|v?i{0,3})$")


def roman_from_int(n: int) -> str:
    if n < 1:
        raise ValueError("roman numerals start at 1")
    out = []
    for value, letters in ROMAN:
        count, n = divmod(n, value)
        out.append(letters * count)
    return "".join(out)


def roman_to_int(text: str) -> int | None:
    """The value of a lower-case roman numeral; None if `text` is not one."""
    text = text.lower()
    if not text or not ROMAN_RE.match(text):
        return None
    total, i = 0, 0
    for value, letters in ROMAN:
        while text.startswith(letters, i):
            total += value
            i += len(letters)
    return total


def letters_from_int(n: int) -> str:
    """1 -> A, 26 -> Z, 27 -> AA (spreadsheet columns: there is always a next type code)."""
    out = ""
    while n > 0:
        n, rest = divmod(n - 1, 26)
        out = string.ascii_uppercase[rest] + out
    return out


def letters_to_int(text: str) -> int | None:
    if not text or not all(c in string.ascii_uppercase for c in text):
        return None
    n = 0
    for c in text:
        n = n * 26 + string.ascii_uppercase.index(c) + 1
    return n


def _ordinal(level: str, last_part: str) -> int | None:
    if level == Level.TYPE:
        return letters_to_int(last_part)
    if level == Level.THEME:
        return int(last_part) if ascii_digits(last_part) else None
    return roman_to_int(last_part)


def _code(level: str, parent: Node | None, ordinal: int) -> str:
    if level == Level.TYPE:
        return letters_from_int(ordinal)
    if parent is None:
        raise ValueError(f"a {level} node needs a parent")
    part = str(ordinal) if level == Level.THEME else roman_from_int(ordinal)
    return f"{parent.code}.{part}"


def next_child_code(taxonomy: Taxonomy, parent: Node | None) -> str:
    """The code a new child of `parent` (None: a new type) gets: one past the highest in use."""
    level = CHILD_LEVEL.get(parent.level if parent else None)
    if level is None:
        raise ConcordError("A sub-theme is the deepest level; a new category goes under a theme.")
    siblings = taxonomy.nodes.filter(parent=parent, level=level).values_list("code", flat=True)
    ordinals = [_ordinal(level, code.rsplit(".", 1)[-1]) for code in siblings]
    ordinal = max((o for o in ordinals if o is not None), default=0) + 1
    taken = set(taxonomy.nodes.values_list("code", flat=True))
    code = _code(level, parent, ordinal)
    while code in taken:  # a hand-made code outside the scheme took the slot
        ordinal += 1
        code = _code(level, parent, ordinal)
    return code


@transaction.atomic
def node_add(*, taxonomy: Taxonomy, parent: Node | None, name: str, definition: str = "") -> Node:
    """Add a live node under `parent` (None: a new type) with the next free code; existing nodes
    are left exactly as they are. The taxonomy row is locked so two additions never pick the same
    code."""
    name = name.strip()
    if not name:
        raise ConcordError("A new category needs a name.")
    Taxonomy.objects.select_for_update().filter(pk=taxonomy.pk).first()
    if parent is not None:
        if parent.taxonomy_id != taxonomy.pk:
            raise ConcordError(f"{parent.code} belongs to another taxonomy.")
        if parent.is_retired:
            raise ConcordError(f"{parent.code} is retired; it takes no new categories.")
    code = next_child_code(taxonomy, parent)
    position = (taxonomy.nodes.aggregate(top=Max("position"))["top"] or 0) + 1
    return Node.objects.create(
        taxonomy=taxonomy,
        level=CHILD_LEVEL[parent.level if parent else None],
        code=code,
        name=name,
        definition=definition.strip(),
        parent=parent,
        position=position,
    )
