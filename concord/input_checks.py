"""Checks on raw request input shared by the pages (concord.middleware) and the API
(concord.parsers): text PostgreSQL cannot store, ids that are not ids, JSON nested too deeply.

Issue 12: a NUL in a form field or query parameter reached PostgreSQL (which refuses NUL in text)
and the view failed halfway with a 500; `'²'.isdigit()` is true but `int('²')` fails. Each of these
is now a 400 that names the field, before any view or service runs.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping

from django.utils.translation import gettext as _

from concord.errors import BadInput, TooLarge

# A NUL, or a surrogate code point: in a Python str every one of those is a lone half (a valid
# pair is one code point), and it cannot be encoded as UTF-8 for the database.
_UNSTORABLE = re.compile("[\x00\ud800-\udfff]")
ID_MAX = 2**63 - 1  # PostgreSQL bigint, the type of every primary key


def text_problem(text: str, *, before: int = 0) -> str | None:
    """Why `text` cannot be stored as text, or None; `before` characters of its line come before
    it (a file read in blocks)."""
    match = _UNSTORABLE.search(text)
    if match is None:
        return None
    at = before + match.start() + 1
    if match.group() == "\x00":
        return _("contains a NUL character (U+0000) at character %(at)s; remove it") % {"at": at}
    return _("contains a lone surrogate (%(code)s) at character %(at)s; send UTF-8") % {
        "code": f"U+{ord(match.group()):04X}",
        "at": at,
    }


def shown(text: str, limit: int = 40) -> str:
    """`text` for a message: quoted, unprintable characters escaped, cut at `limit`."""
    cut = text if len(text) <= limit else text[:limit] + "…"
    return ascii(cut) if not cut.isprintable() else repr(cut)


def field_name(name: str) -> str:
    """A field's name for a message: as is when short and printable, else `shown`."""
    return name if len(name) <= 60 and name.isprintable() else shown(name)


def first_bad_field(fields: Iterable[tuple[str, list]]) -> BadInput | None:
    """The first field (name, values) whose name or a text value cannot be stored, as a BadInput
    naming it; None when all can. Values that are not text (uploaded files) are not looked at."""
    for name, values in fields:
        problem = text_problem(name)
        if problem is not None:
            return BadInput(field_name(name), f"the field name {problem}")
        for value in values:
            problem = text_problem(value) if isinstance(value, str) else None
            if problem is not None:
                return BadInput(field_name(name), problem)
    return None


def ascii_digits(text: str) -> bool:
    """Only 0-9: str.isdigit() alone also takes '²' (which int() refuses) and '٣' (which it reads
    as 3)."""
    return text.isascii() and text.isdigit()


def id_param(value: str | None, name: str) -> int | None:
    """An object id from a query parameter or form field: None when absent or empty, else a whole
    number from 1 to ID_MAX, or BadInput naming `name`."""
    if value is None or value == "":
        return None
    if ascii_digits(value) and len(value) <= len(str(ID_MAX)) and 1 <= int(value) <= ID_MAX:
        return int(value)
    raise BadInput(name, f"must be an id, a whole number from 1 to {ID_MAX}; not {shown(value)}")


def json_problem(data: object, max_depth: int) -> BadInput | None:
    """The first place in parsed JSON `data` nested deeper than `max_depth` arrays and objects,
    or holding a string (or key) that cannot be stored, as a BadInput naming its path
    (`options.columns[2]`); None when there is none. Iterative: depth alone cannot overflow it."""
    stack: list[tuple[object, str, int]] = [(data, "", 0)]
    while stack:
        value, path, depth = stack.pop()
        if isinstance(value, dict | list):
            if depth >= max_depth:
                return BadInput(field_name(path or "body"), f"nests deeper than {max_depth} levels")
            if isinstance(value, dict):
                for key, item in reversed(value.items()):
                    member = f"{path}.{key}" if path else str(key)
                    problem = text_problem(key) if isinstance(key, str) else None
                    if problem is not None:
                        return BadInput(field_name(member), f"the member name {problem}")
                    stack.append((item, member, depth + 1))
            else:
                items = reversed(list(enumerate(value)))
                stack.extend((item, f"{path}[{i}]", depth + 1) for i, item in items)
        elif isinstance(value, str):
            problem = text_problem(value)
            if problem is not None:
                return BadInput(field_name(path or "body"), problem)
    return None


def body_size_check(meta: Mapping, cap: int) -> None:
    """TooLarge when the request says (Content-Length) that its body is over `cap` bytes."""
    try:
        size = int(meta.get("CONTENT_LENGTH") or 0)
    except ValueError:
        size = 0  # Django reads such a body as empty
    if size > cap:
        raise TooLarge(f"The request body is {size:,} bytes; this endpoint takes at most {cap:,}.")
