"""Keyword matching: which issues are candidates, and which keywords made them so.

Rules (also in the README): matching is case-insensitive over title and body; a keyword matches
whole words only (`yi` does not match "yield", `opt` not "option"), but may be followed by digits,
a version or a plural `s` (`llama` matches "Llama2", "llama-3" and "llamas"; `gpt` matches
"GPT-4"); a phrase matches across any run of whitespace ("large  language\\nmodel").
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterable

from concord.errors import ConcordError, Where

KEYWORD_LIST_SUFFIX = "_keywords"


def unique_keywords(keywords: Iterable[str]) -> list[str]:
    """Trimmed, blank-free, first spelling kept when a list repeats a keyword in another case."""
    seen: dict[str, str] = {}
    for keyword in keywords:
        cleaned = " ".join(str(keyword).split())
        if cleaned and cleaned.lower() not in seen:
            seen[cleaned.lower()] = cleaned
    return list(seen.values())


def keyword_pattern(keywords: Iterable[str]) -> re.Pattern[str] | None:
    words = sorted(unique_keywords(keywords), key=len, reverse=True)  # longest first wins
    if not words:
        return None
    alternatives = "|".join(r"\s+".join(map(re.escape, w.split())) for w in words)
    return re.compile(rf"(?<![^\W_])(?:{alternatives})(?:s)?(?![^\W\d_])", re.IGNORECASE)


def keywords_found(
    pattern: re.Pattern[str] | None, keywords: Iterable[str], text: str
) -> list[str]:
    """The set's keywords (as the set spells them) that occur in `text`, in the set's order."""
    if pattern is None or not text:
        return []
    hits = {" ".join(m.group(0).split()).lower() for m in pattern.finditer(text)}
    found = []
    for keyword in unique_keywords(keywords):
        key = keyword.lower()
        if key in hits or f"{key}s" in hits:
            found.append(keyword)
    return found


def parse_filter_keywords(text: str, name: str = "filter_keywords") -> dict[str, list[str]]:
    """The study's `filter_keywords` file: Python-literal lists named `<framework>_keywords`.

    Parsed with `ast` (never executed). Returns framework name -> keywords without repeats;
    a ConcordError naming file `name` and line when the text is not such a file.
    """
    try:
        tree = ast.parse(text)
    except SyntaxError as exc:
        raise ConcordError(f"not Python list syntax: {exc.msg}", Where(name, exc.lineno)) from exc
    sets: dict[str, list[str]] = {}
    for node in tree.body:
        if not (isinstance(node, ast.Assign) and len(node.targets) == 1):
            continue
        target = node.targets[0]
        if isinstance(target, ast.Name) and target.id.endswith(KEYWORD_LIST_SUFFIX):
            try:
                values = ast.literal_eval(node.value)
            except ValueError as exc:
                raise ConcordError(
                    f"{target.id} may hold only quoted words and phrases",
                    Where(name, _first_non_literal(node.value).lineno),
                ) from exc
            if isinstance(values, list | tuple):
                sets[target.id.removesuffix(KEYWORD_LIST_SUFFIX)] = unique_keywords(values)
    if not sets:
        raise ConcordError("no `<framework>_keywords = [...]` lists found", Where(name))
    return sets


def _first_non_literal(node: ast.expr) -> ast.expr:
    """The element that made literal_eval refuse a list: where to point the user."""
    for child in ast.walk(node):
        literal = isinstance(child, ast.List | ast.Tuple | ast.Constant)
        if isinstance(child, ast.expr) and not literal:  # not an operator or a context
            return child
    return node
