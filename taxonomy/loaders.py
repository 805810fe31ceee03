"""Load a taxonomy from CSV: the generic `code,level,parent,name,description` shape (the study's
`taxonomy.csv` is one), with optional `name_zh,definition_zh` columns for the Chinese beside the
English; a translations file `code,name_zh,definition_zh` that adds the Chinese to a taxonomy file
that has none (the study's own file stays as published; ours is concord/data/taxonomy_zh.csv);
and the study's detail files (`rootcause,subcategory,symptoms`).

Each loader validates the whole file before writing, names file/line/column for every problem,
writes in one transaction, and is idempotent: loading the same file again changes nothing.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from django.db import models, transaction
from django.utils.translation import gettext as _

from concord.errors import RowError, utf8_text
from taxonomy.models import Example, ExampleKind, Level, Node, Taxonomy

TAXONOMY_COLUMNS = ("code", "level", "parent", "name")
TRANSLATION_COLUMNS = ("code", "name_zh")
CHINESE_COLUMNS = ("name_zh", "definition_zh")
DETAIL_COLUMNS = ("rootcause", "subcategory", "symptoms")

# The study files put ASCII commas between items; inside an item, the CJK comma `、` stands in.
DETAIL_ITEM_SEPARATOR = ","


@dataclass(frozen=True)
class LoadReport:
    created: int
    updated: int
    unchanged: int


def read_csv_rows(
    path: Path, required: tuple[str, ...], *, spill_into: str | None = None
) -> Iterator[tuple[int, dict[str, str]]]:
    """Yield `(line number, row)`; a missing column or undecodable byte is a RowError.

    Extra cells beyond the header are an error, unless `spill_into` names the last column they
    belong to (the study's detail files sometimes close a quoted list early).
    """
    name = str(path)
    text = utf8_text(path.read_bytes(), name)
    try:
        with io.StringIO(text, newline="") as handle:
            reader = csv.DictReader(handle)
            header = reader.fieldnames or []
            missing = [c for c in required if c not in header]
            if missing:
                message = _("missing column(s) %(columns)s") % {"columns": ", ".join(missing)}
                raise RowError(name, 1, missing[0], message)
            for row in reader:
                extra = row.pop(None, None)
                if extra and spill_into is None:
                    message = _("more cells than header columns")
                    raise RowError(name, reader.line_num, None, message)
                if extra:
                    row[spill_into] = ",".join([row[spill_into], *extra])
                yield reader.line_num, {k: (v or "").strip() for k, v in row.items()}
    except csv.Error as exc:
        message = _("not a readable CSV file: %(reason)s") % {"reason": exc}
        raise RowError(name, 0, None, message) from exc


def taxonomy_load(
    *, path: Path, name: str, version: str = "1", translations: Path | None = None
) -> LoadReport:
    """Load `path` into the taxonomy `name` version `version`; with `translations`, the Chinese
    names and definitions from that file, by code. A Chinese column neither file has leaves the
    stored Chinese as it is (loading the study's file again does not erase a translation)."""
    rows = list(read_csv_rows(path, TAXONOMY_COLUMNS))
    _check_tree(path, rows)
    if translations is not None:
        _add_translations(rows, translations)
    created = updated = unchanged = 0
    with transaction.atomic():
        taxonomy, _created = Taxonomy.objects.get_or_create(name=name, version=version)
        by_code = {n.code: n for n in taxonomy.nodes.all()}
        for position, (_, row) in enumerate(rows):
            wanted = {
                "level": row["level"],
                "name": row["name"],
                "study_name": row.get("study_name", "")
                if row.get("study_name") != row["name"]
                else "",
                "definition": row.get("description", "") or row.get("definition", ""),
                "parent": by_code[row["parent"]] if row["parent"] else None,
                "position": position,
                **{column: row[column] for column in CHINESE_COLUMNS if column in row},
            }
            node = by_code.get(row["code"])
            if node is None:
                by_code[row["code"]] = Node.objects.create(
                    taxonomy=taxonomy, code=row["code"], **wanted
                )
                created += 1
            elif any(getattr(node, k) != v for k, v in wanted.items()):
                for k, v in wanted.items():
                    setattr(node, k, v)
                node.save()
                updated += 1
            else:
                unchanged += 1
    return LoadReport(created, updated, unchanged)


def _add_translations(rows: list[tuple[int, dict[str, str]]], path: Path) -> None:
    """Put each translated code's `name_zh` and `definition_zh` into its row of the taxonomy
    file; a code the taxonomy does not have, or one translated twice, is a RowError."""
    by_code = {row["code"]: row for _, row in rows}
    seen: set[str] = set()
    for line, translated in read_csv_rows(path, TRANSLATION_COLUMNS):
        code = translated["code"]
        if code not in by_code:
            message = _("no node %(code)s in the taxonomy file") % {"code": repr(code)}
            raise RowError(str(path), line, "code", message)
        if code in seen:
            message = _("%(code)s is translated twice") % {"code": code}
            raise RowError(str(path), line, "code", message)
        seen.add(code)
        if len(translated["name_zh"]) > COLUMN_LIMITS["name_zh"]:
            message = _("longer than %(most)s characters") % {"most": COLUMN_LIMITS["name_zh"]}
            raise RowError(str(path), line, "name_zh", message)
        for column in CHINESE_COLUMNS:
            by_code[code][column] = translated.get(column, "")


def _column_limit(name: str) -> int:
    field = Node._meta.get_field(name)
    return field.max_length or 0 if isinstance(field, models.CharField) else 0


# What the node's columns hold: a longer cell is a RowError naming it, not a database error.
COLUMN_LIMITS = {name: _column_limit(name) for name in ("code", "name", "study_name", "name_zh")}


def _check_tree(path: Path, rows: list[tuple[int, dict[str, str]]]) -> None:
    """Parents come before children, levels step down by one, codes are unique."""
    levels = [c.value for c in Level]
    seen: dict[str, str] = {}
    for line, row in rows:
        code, level, parent = row["code"], row["level"], row["parent"]
        if not code:
            raise RowError(str(path), line, "code", _("empty code"))
        if code in seen:
            message = _("duplicate code %(code)s") % {"code": repr(code)}
            raise RowError(str(path), line, "code", message)
        if level not in levels:
            message = _("unknown level %(level)s; use %(levels)s")
            raise RowError(
                str(path), line, "level", message % {"level": repr(level), "levels": levels}
            )
        if not row["name"]:
            message = _("node %(code)s has no name") % {"code": code}
            raise RowError(str(path), line, "name", message)
        for column, limit in COLUMN_LIMITS.items():
            if len(row.get(column) or "") > limit:
                message = _("longer than %(most)s characters") % {"most": limit}
                raise RowError(str(path), line, column, message)
        if level == Level.TYPE:
            if parent:
                message = _("type %(code)s cannot have a parent") % {"code": code}
                raise RowError(str(path), line, "parent", message)
        elif parent not in seen:
            message = _("parent %(parent)s of %(code)s not defined above")
            raise RowError(
                str(path), line, "parent", message % {"parent": repr(parent), "code": code}
            )
        elif levels.index(seen[parent]) != levels.index(level) - 1:
            message = _("%(code)s is a %(level)s but its parent %(parent)s is a %(parent_level)s")
            place = {"code": code, "level": level, "parent": parent, "parent_level": seen[parent]}
            raise RowError(str(path), line, "level", message % place)
        seen[code] = level


def examples_load(*, path: Path, taxonomy: Taxonomy) -> LoadReport:
    """Attach each detail item to its sub-theme, matched by the study's spelling (or the name)."""
    subthemes = _subthemes_by_spelling(taxonomy)
    planned: list[tuple[Node, str, str, int]] = []
    for line, row in read_csv_rows(path, DETAIL_COLUMNS, spill_into="symptoms"):
        node = subthemes.get((row["rootcause"], row["subcategory"])) or subthemes.get(
            ("", row["subcategory"])
        )
        if node is None:
            message = _("no sub-theme named %(subtheme)s under %(theme)s")
            names = {"subtheme": repr(row["subcategory"]), "theme": repr(row["rootcause"])}
            raise RowError(str(path), line, "subcategory", message % names)
        kind = _example_kind(path, node)
        items = [t.strip() for t in row["symptoms"].split(DETAIL_ITEM_SEPARATOR)]
        planned.extend((node, kind, text, i) for i, text in enumerate(t for t in items if t))
    existing = set(
        Example.objects.filter(node__taxonomy=taxonomy).values_list("node_id", "kind", "text")
    )
    missing = {
        (node.pk, kind, text): Example(node=node, kind=kind, text=text, position=position)
        for node, kind, text, position in planned
        if (node.pk, kind, text) not in existing
    }
    with transaction.atomic():
        Example.objects.bulk_create(missing.values(), ignore_conflicts=True)
    created, unchanged = len(missing), len(planned) - len(missing)
    return LoadReport(created, 0, unchanged)


def _subthemes_by_spelling(taxonomy: Taxonomy) -> dict[tuple[str, str], Node]:
    found: dict[tuple[str, str], Node] = {}
    for node in taxonomy.nodes.filter(level=Level.SUBTHEME).select_related("parent__parent"):
        parent = node.parent  # a sub-theme's theme: always there
        themes = {parent.name, parent.study_name} - {""} if parent else set()
        for sub in {node.name, node.study_name} - {""}:
            found[("", sub)] = node
            for theme in themes:
                found[(theme, sub)] = node
    return found


_KIND_BY_WORD = {
    "symptom": ExampleKind.SYMPTOM,
    "bug": ExampleKind.SYMPTOM,
    "intent": ExampleKind.INTENT,
    "question": ExampleKind.INTENT,
    "expect": ExampleKind.EXPECTATION,
    "requirement": ExampleKind.EXPECTATION,
}


def _example_kind(path: Path, node: Node) -> str:
    """Bug sub-themes collect symptoms, questions intents, requirements expectations."""
    type_node = node.parent.parent if node.parent else None  # a sub-theme's theme's type
    type_name = type_node.name.lower() if type_node else ""
    for word, kind in _KIND_BY_WORD.items():
        if word in type_name:
            return kind
    for word, kind in _KIND_BY_WORD.items():
        if word in path.name.lower():
            return kind
    message = _("cannot tell whether %(file)s holds symptoms, intents or expectations")
    raise RowError(str(path), 0, None, message % {"file": path.name})
