"""Keyword matching: which issues are candidates, which keywords made them so, and why.

Rules (also in the README and on the preview page):
- Text and keywords are compared after NFKC normalisation and case folding: full-width letters
  typed with a Chinese input method (U+FF2C… for `LLaMA`) are `llama`, and case never matters.
- A keyword with a Chinese (CJK) character in it is matched as a substring: Chinese has no spaces
  between words (`微调` in `基于llama的微调`).
- Any other keyword matches whole words only (`yi` not in "yield", `opt` not in "option"),
  where a word also ends at a change of script (`使用deepspeed训练`), at an underscore or a dot
  (identifiers: `deepseek_v3`, `lora_A`, `use_deepspeed`, `model.gpt_neox`) and at a CamelCase
  hump, after a digit too (`LlamaForCausalLM`, `LoraConfig`, `MindFormers接口`,
  `T5Tokenizer`). It may be followed by digits, a version or a plural `s` (`Llama2`,
  `llama-3`, `llamas`, `GPT-4`; not `t5x`).
- A phrase matches across any run of whitespace, hyphens and underscores, however the set
  writes it (`few shot` in "few-shot" and "few_shot", `large language model` in
  "large-language-model", `gpt-neox` in `gpt_neox`).
- A keyword that is also an everyday word (EVERYDAY_WORDS: zero, opt, bloom, …) and that the
  set writes with capitals past its first letter (`ZeRO`, `OPT`, `BLOOM`) keeps its case: it
  names the model or the method, not the word ("zero division", `opt-einsum`,
  `fp16_opt_level`). Written in lowercase in the set, it matches in any case.
- Every keyword that matches is recorded, overlapping ones too (`vLLM engine` and `vLLM`).
"""

from __future__ import annotations

import ast
import functools
import html
import re
import unicodedata
from collections.abc import Iterable
from dataclasses import dataclass

from django.utils.translation import gettext as _

from concord.errors import ConcordError, Where

KEYWORD_LIST_SUFFIX = "_keywords"


def fold(text: str) -> str:
    """The form keywords and text are compared in: NFKC, then case folded."""
    return unicodedata.normalize("NFKC", text).casefold()


def unique_keywords(keywords: Iterable[str]) -> list[str]:
    """Trimmed, blank-free, first spelling kept when a list repeats a keyword in another case
    (or in full-width letters)."""
    seen: dict[str, str] = {}
    for keyword in keywords:
        cleaned = " ".join(str(keyword).split())
        if cleaned and fold(cleaned) not in seen:
            seen[fold(cleaned)] = cleaned
    return list(seen.values())


def is_cjk(char: str) -> bool:
    """Han, kana and hangul: scripts written without spaces between words."""
    code = ord(char)
    return (
        0x3040 <= code <= 0x30FF  # hiragana, katakana
        or 0x3400 <= code <= 0x4DBF  # Han extension A
        or 0x4E00 <= code <= 0x9FFF  # Han
        or 0xAC00 <= code <= 0xD7AF  # hangul
        or 0xF900 <= code <= 0xFAFF  # Han compatibility
        or 0x20000 <= code <= 0x3134F  # Han extensions B-G
    )


# Everyday words that are also names of models or methods: written with capitals in a set,
# the keyword keeps its case (see the rules above).
EVERYDAY_WORDS = frozenset({"zero", "opt", "bloom", "falcon", "phi", "grok"})
# What may stand between the words of a phrase, in a keyword and in the text.
PHRASE_GAP = r"[\s_\-\u2010-\u2015]+"


@functools.lru_cache(maxsize=4096)
def _kind(char: str) -> str:
    """What a character is for word boundaries: cjk, digit, letter or space (which an
    underscore and a dot are too: identifiers are words joined by them)."""
    if is_cjk(char):
        return "cjk"
    if char.isdigit():
        return "digit"
    if char.isalpha() or unicodedata.category(char).startswith("M"):
        return "letter"
    return "space"


@dataclass(frozen=True)
class Hit:
    """One occurrence of a keyword: where in the text as given, and why it counts."""

    keyword: str  # as the set spells it
    start: int
    end: int
    why: str


@dataclass(frozen=True)
class _Text:
    """A text prepared for matching: `shape` (NFKC, case kept, for humps) and `folded`, aligned
    character for character, with `origin` mapping each position back into the text given."""

    shape: str
    folded: str
    origin: list[int] | None  # None: positions are the same as the text's

    @classmethod
    def of(cls, text: str) -> _Text:
        shape = unicodedata.normalize("NFKC", text)
        folded = shape.casefold()
        if len(shape) == len(text) == len(folded):
            return cls(shape, folded, None)
        shapes, folds, origin = [], [], []
        for i, char in enumerate(text):  # rare: a character that normalises to several
            one = unicodedata.normalize("NFKC", char)
            for j, folded_char in enumerate(one.casefold()):
                folds.append(folded_char)
                shapes.append(one[min(j, len(one) - 1)] if one else char)
                origin.append(i)
        return cls("".join(shapes), "".join(folds), origin)

    def at(self, position: int, text_length: int) -> int:
        if self.origin is None:
            return position
        return self.origin[position] if position < len(self.origin) else text_length

    def boundary(self, i: int) -> bool:
        """Whether a word may begin or end between characters i-1 and i."""
        shape = self.shape
        if i <= 0 or i >= len(shape):
            return True
        before, after = shape[i - 1], shape[i]
        kinds = (_kind(before), _kind(after))
        if "space" in kinds:
            return True
        if "cjk" in kinds:
            return True  # a change of script, or between two Chinese characters
        following = shape[i + 1] if i + 1 < len(shape) else ""
        if kinds == ("digit", "letter"):  # T5|Tokenizer, but Qwen2, 910B, t5x run together
            return after.isupper() and following.islower()
        if kinds != ("letter", "letter"):
            return False  # letters and digits run together: Qwen2, 910B
        if before.islower() and after.isupper():
            return True  # a CamelCase hump: Llama|For
        return before.isupper() and after.isupper() and following.islower()  # LLM|Engine


class KeywordMatcher:
    """The rules above for one keyword set. Build once, match many texts."""

    def __init__(self, keywords: Iterable[str]) -> None:
        self.keywords = unique_keywords(keywords)
        # (keyword, its pattern, its first word folded, whether it is a Chinese term): most
        # texts lack most keywords, and `in` on the first word says so far faster than a regex.
        self._patterns = [
            (k, _keyword_regex(k), _words(fold(k))[0], _has_cjk(k), _keeps_case(k))
            for k in self.keywords
        ]

    def hits(self, text: str) -> list[Hit]:
        """Every occurrence of every keyword (overlapping ones too), in text order."""
        if not self._patterns or not text:
            return []
        prepared = _Text.of(text)
        folded, size = prepared.folded, len(text)
        found = []
        for keyword, pattern, first_word, substring, cased in self._patterns:
            if first_word not in folded:
                continue
            searched = prepared.shape if cased else folded  # aligned: the same positions
            position = 0
            while (match := pattern.search(searched, position)) is not None:
                start, end = match.span()
                position = start + 1
                why = "a Chinese term: matched anywhere" if substring else None
                if why is None:
                    end, why = _whole_word(prepared, start, end)
                if why is not None:
                    where = prepared.at(start, size), prepared.at(end, size)
                    found.append(Hit(keyword, *where, why))
        return sorted(found, key=lambda h: (h.start, -h.end, h.keyword))

    def found(self, text: str) -> list[str]:
        """The keywords (as the set spells them) that occur in `text`, in the set's order."""
        matched = {hit.keyword for hit in self.hits(text)}
        return [k for k in self.keywords if k in matched]

    def spans(self, text: str) -> list[tuple[int, int]]:
        """Where to mark keywords in `text`: overlapping hits merged."""
        merged: list[tuple[int, int]] = []
        for hit in self.hits(text):
            if merged and hit.start <= merged[-1][1]:
                merged[-1] = (merged[-1][0], max(merged[-1][1], hit.end))
            else:
                merged.append((hit.start, hit.end))
        return merged


def marked_html(text: str, spans: list[tuple[int, int]]) -> str:
    """Plain text to safe HTML (escaped) with each [start, end) span in a `<mark class="kw">`."""
    out, pos = [], 0
    for start, end in spans:
        out.append(html.escape(text[pos:start], quote=False))
        out.append(f'<mark class="kw">{html.escape(text[start:end], quote=False)}</mark>')
        pos = end
    out.append(html.escape(text[pos:], quote=False))
    return "".join(out)


def _has_cjk(keyword: str) -> bool:
    return any(is_cjk(char) for char in unicodedata.normalize("NFKC", keyword))


def _words(keyword: str) -> list[str]:
    """A keyword's words: split at whitespace, hyphens and underscores (`few-shot`, `gpt_neox`)."""
    return [word for word in re.split(PHRASE_GAP, keyword) if word] or [keyword]


def _keeps_case(keyword: str) -> bool:
    """An everyday word written with capitals past its first letter: `ZeRO`, `OPT`, `BLOOM`."""
    shaped = unicodedata.normalize("NFKC", keyword)
    return fold(shaped) in EVERYDAY_WORDS and any(char.isupper() for char in shaped[1:])


def _keyword_regex(keyword: str) -> re.Pattern[str]:
    """The keyword (folded, unless it keeps its case), any run of PHRASE_GAP between its
    words."""
    shaped = unicodedata.normalize("NFKC", keyword)
    written = shaped if _keeps_case(keyword) else fold(shaped)
    return re.compile(PHRASE_GAP.join(map(re.escape, _words(written))))


def _whole_word(text: _Text, start: int, end: int) -> tuple[int, str | None]:
    """(end of the hit, why it counts) for a non-Chinese keyword found at [start, end); why is
    None when it is part of a longer word."""
    if not text.boundary(start):
        return end, None
    folded = text.folded
    if text.boundary(end):
        return end, "a whole word"
    if folded[end].isdigit():
        return end, "a word followed by a number or version"
    if folded[end] == "s" and (text.boundary(end + 1) or folded[end + 1 : end + 2].isdigit()):
        return end + 1, "a word in the plural"
    return end, None


def parse_filter_keywords(text: str, name: str = "filter_keywords") -> dict[str, list[str]]:
    """The study's `filter_keywords` file: Python-literal lists named `<framework>_keywords`.

    Parsed with `ast` (never executed). Returns framework name -> keywords without repeats;
    a ConcordError naming file `name` and line when the text is not such a file.
    """
    try:
        tree = ast.parse(text)
    except SyntaxError as exc:
        message = _("not Python list syntax: %(reason)s") % {"reason": exc.msg}
        raise ConcordError(message, Where(name, exc.lineno)) from exc
    sets: dict[str, list[str]] = {}
    for node in tree.body:
        if not (isinstance(node, ast.Assign) and len(node.targets) == 1):
            continue
        target = node.targets[0]
        if isinstance(target, ast.Name) and target.id.endswith(KEYWORD_LIST_SUFFIX):
            try:
                values = ast.literal_eval(node.value)
            except ValueError as exc:
                message = _("%(list)s may hold only quoted words and phrases")
                raise ConcordError(
                    message % {"list": target.id},
                    Where(name, _first_non_literal(node.value).lineno),
                ) from exc
            if isinstance(values, list | tuple):
                sets[target.id.removesuffix(KEYWORD_LIST_SUFFIX)] = unique_keywords(values)
    if not sets:
        message = _("no `<framework>_keywords = [...]` lists found")
        raise ConcordError(message, Where(name))
    return sets


def _first_non_literal(node: ast.expr) -> ast.expr:
    """The element that made literal_eval refuse a list: where to point the user."""
    for child in ast.walk(node):
        literal = isinstance(child, ast.List | ast.Tuple | ast.Constant)
        if isinstance(child, ast.expr) and not literal:  # not an operator or a context
            return child
    return node
