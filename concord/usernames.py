"""What a username looks like, one rule for every place that makes accounts (the invitation's
sign-up, an admin's list of people): a name that looks like an existing account's is refused
like a taken one, so nobody can pass for somebody else (`demo-lead` spelled with a Cyrillic
letter for its `e`)."""

from __future__ import annotations

import functools
import unicodedata

from confusable_homoglyphs.confusables import confusables_data  # type: ignore[import-untyped]
from django.contrib.auth import get_user_model

# The marks confusable_homoglyphs keeps around right-to-left letters (from confusables.txt's
# comments, where they keep the arrows readable); they are no part of the letters.
_DIRECTION_MARKS = "\u200e\u200f"


@functools.cache
def _prototypes() -> dict[str, str]:
    """Each confusable character's prototype: Unicode's confusables.txt (UTS #39), as
    confusable_homoglyphs lists it, both ways round. A prototype is listed with its sources
    (most have several) and a source with its prototype alone: a character listed with one other
    is a source, unless that other is listed with it alone too. Such a pair is one source and its
    prototype, either way round; the smaller of the two stands for both."""
    links = {
        char.strip(_DIRECTION_MARKS): [other["c"].strip(_DIRECTION_MARKS) for other in others]
        for char, others in confusables_data.items()
    }
    table = {}
    for char, others in links.items():
        if len(char) != 1 or len(others) != 1:
            continue  # a prototype of several characters, or with several sources
        (other,) = others
        if len(other) == 1 and len(links.get(other, ())) == 1:
            table[char] = min(char, other)
        else:
            table[char] = other
    return table


def _skeleton(text: str) -> str:
    """UTS #39's skeleton: NFD, each character by its prototype, NFD again."""
    decomposed = unicodedata.normalize("NFD", text)
    return unicodedata.normalize("NFD", "".join(_prototypes().get(c, c) for c in decomposed))


def username_look(username: str) -> str:
    """What a name looks like, case and width aside: names with the same look are confusable
    (`demo-lead` with a Cyrillic letter for its `e`, and `Demo-Lead`, both look like
    `demo-lead`; `I`, `1` and `l` look alike)."""
    return _skeleton(unicodedata.normalize("NFKC", _skeleton(username).casefold()))


def username_looks_taken(username: str) -> bool:
    """Whether an account's name looks like `username`. Every name is compared: there is no
    stored look to index, and accounts are made by the hundred, not the million."""
    look = username_look(username)
    names = get_user_model().objects.values_list("username", flat=True)
    return any(username_look(name) == look for name in names.iterator())
