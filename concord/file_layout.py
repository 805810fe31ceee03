"""How a text file is laid out, beyond its records: byte-order mark, line ending, whether the last
line ends with one; and its records with their text as written. The replication package records
this on import and writes it back on export, so a file comes out byte for byte as it went in
(annotation.package). UTF-8 only: anything else is refused by utf8_text, naming the line.
"""

from __future__ import annotations

import codecs
import csv
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass

from concord.errors import utf8_text

# A physical line with its ending (\r\n, \r or \n), or the last line without one.
_LINE = re.compile(r"[^\r\n]*(?:\r\n|\r|\n)|[^\r\n]+\Z")
_ENDINGS = ("\r\n", "\n", "\r")
UTF8_BOM = "\ufeff"


@dataclass(frozen=True)
class Layout:
    bom: bool = False
    newline: str = "\n"  # the study's own files end their lines with \n
    final_newline: bool = True


def decoded(data: bytes, name: str) -> tuple[Layout, str]:
    """The file's layout and its text (without the byte-order mark); a RowError if not UTF-8."""
    text = utf8_text(data, name)
    bom = data.startswith(codecs.BOM_UTF8)
    lines = physical_lines(text)
    counts = {ending: sum(1 for line in lines if _ending(line) == ending) for ending in _ENDINGS}
    newline = max(_ENDINGS, key=lambda ending: counts[ending]) if any(counts.values()) else "\n"
    final = not lines or _ending(lines[-1]) != ""
    return Layout(bom=bom, newline=newline, final_newline=final), text


def physical_lines(text: str) -> list[str]:
    """The lines of `text`, each with its line ending (the last may have none)."""
    return _LINE.findall(text)


def _ending(line: str) -> str:
    return next((ending for ending in _ENDINGS if line.endswith(ending)), "")


def csv_records(text: str) -> Iterator[tuple[str, list[str]]]:
    """Each CSV record of `text` as written (a quoted cell may span lines) and its cells.
    Raises csv.Error on a record the csv module cannot read."""
    taken: list[str] = []

    def feed() -> Iterator[str]:
        for line in physical_lines(text):
            taken.append(line)
            yield line

    for cells in csv.reader(feed()):
        yield "".join(taken), cells
        taken.clear()
    if taken:  # trailing lines the reader consumed without a record (cannot happen in practice)
        yield "".join(taken), []


class _Echo:
    def write(self, text: str) -> str:
        return text


def csv_record(cells: list[str], newline: str) -> str:
    """`cells` as the csv module writes them (quoted only where needed), ending in `newline`."""
    return csv.writer(_Echo(), lineterminator=newline).writerow(cells)


def laid_out(records: Iterable[str], layout: Layout) -> Iterator[str]:
    """`records` (each with its line ending) as the file's text: the byte-order mark first, and
    the last record's line ending dropped when the file had none."""
    held: str | None = None
    for record in records:
        if held is not None:
            yield held
        else:
            record = (UTF8_BOM if layout.bom else "") + record
        held = record
    if held is None:
        if layout.bom:
            yield UTF8_BOM
        return
    if not layout.final_newline:
        held = held[: len(held) - len(_ending(held))]
    yield held
