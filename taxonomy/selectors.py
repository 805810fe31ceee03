"""Reads on taxonomies."""

from __future__ import annotations

import functools
import hashlib
from dataclasses import dataclass, field

from django.core.cache import cache
from django.db import connection
from django.db.models import Prefetch
from django.utils import translation

from taxonomy.models import Example, ExampleKind, Level, Node, Taxonomy

PICKER_CACHE_SECONDS = 3600


def taxonomy_lineage(taxonomy: Taxonomy) -> dict[int, tuple[str, ...]]:
    """node id -> codes from its type down to itself, e.g. (`C`, `C.1`, `C.1.iii`). One query."""
    nodes = {
        pk: (code, parent)
        for pk, code, parent in taxonomy.nodes.values_list("pk", "code", "parent_id")
    }

    def path(pk: int) -> tuple[str, ...]:
        code, parent = nodes[pk]
        return (*path(parent), code) if parent else (code,)

    return {pk: path(pk) for pk in nodes}


def taxonomy_codes_at(taxonomy: Taxonomy, level: str) -> list[str]:
    return list(taxonomy.nodes.filter(level=level).values_list("code", flat=True))


@dataclass
class TreeNode:
    node: Node
    children: list[TreeNode] = field(default_factory=list)


def taxonomy_tree(taxonomy: Taxonomy) -> list[TreeNode]:
    """The whole tree with examples, in two queries."""
    nodes = list(
        taxonomy.nodes.prefetch_related(
            Prefetch("examples", queryset=Example.objects.order_by("position"))
        ).order_by("position")
    )
    wrapped = {n.pk: TreeNode(n) for n in nodes}
    roots = []
    for n in nodes:
        if n.parent_id is None:
            roots.append(wrapped[n.pk])
        else:
            wrapped[n.parent_id].children.append(wrapped[n.pk])
    return roots


def taxonomy_counts(taxonomy: Taxonomy) -> dict[str, int]:
    counts = {level.value: 0 for level in Level}
    for level in taxonomy.nodes.values_list("level", flat=True):
        counts[level] += 1
    counts["examples"] = Example.objects.filter(node__taxonomy=taxonomy).count()
    return counts


# ---------------------------------------------------------------- the labeling picker

# Which kind of one-line summary each type asks for, by the kind of the study's examples under it
# (bugs: symptoms, questions: intents, requirements: expectations; see taxonomy.loaders).
SUMMARY_HINTS: dict[str, str] = {
    ExampleKind.SYMPTOM: "Symptom: what goes wrong, in one line (e.g. “OOM when saving a "
    "sharded checkpoint”).",
    ExampleKind.INTENT: "Intent: what the asker wants to know or do, in one line.",
    ExampleKind.EXPECTATION: "Expectation: what the requester expects the framework to offer, "
    "in one line.",
}
DEFAULT_HINT = "One line: the symptom, intent or expectation behind the issue."


# The key of each option among its siblings (or among search results), in order: digits, then
# letters. `s` and `u` are left out: the labeling page's skip and undo keys.
OPTION_KEYS = "123456789abcdefghijklmnopqrtvwxyz"


@dataclass
class PickerNode:
    node: Node
    number: int
    children: list[PickerNode] = field(default_factory=list)
    examples: list[Example] = field(default_factory=list)
    hint: str = ""
    path: str = ""  # names from the type down, for the search results and the no-JS list
    parent_code: str = ""
    codes: str = ""  # codes from the type down, space-separated (the JS picker's path)
    below: list[str] = field(default_factory=list)  # names and examples under a leaf
    below_nodes: list[Node] = field(default_factory=list)
    below_examples: list[Example] = field(default_factory=list)

    @property
    def key(self) -> str:
        """The key that picks this option among its siblings ("" past the last key)."""
        return OPTION_KEYS[self.number - 1] if self.number <= len(OPTION_KEYS) else ""


def label_picker(taxonomy: Taxonomy, depth: str, *, exclude: frozenset[int]) -> list[PickerNode]:
    """label_picker_build, cached until the taxonomy's nodes or examples change (a node added,
    retired or restored, an example added): the tree is the same for every page of a project.
    `depth` is the Level labels are given at (a project's label_depth); `exclude` the ids of
    nodes the caller's project may not use (the taxonomy app knows no projects), part of the
    cache key."""
    return label_picker_versioned(taxonomy, depth, exclude=exclude)[1]


def label_picker_versioned(
    taxonomy: Taxonomy, depth: str, *, exclude: frozenset[int]
) -> tuple[str, list[PickerNode]]:
    """(version, label_picker): the version is a digest of what the picker is made of (the
    taxonomy's content, the depth, the nodes left out), so it changes with every edit of a name,
    definition or example, a node added, retired or restored, and an asset built from the picker
    (the labeling page's category details) can be cached under it for good."""
    excluded = ",".join(str(pk) for pk in sorted(exclude))
    digest = hashlib.sha256(excluded.encode()).hexdigest()[:16] if excluded else "-"
    content = taxonomy_fingerprint(taxonomy)
    key = f"label-picker:v4:{taxonomy.pk}:{depth}:{content}:{digest}"
    picker = _picker_under(key, taxonomy, depth, exclude)
    # the details built from the picker are in the reader's language (names, definitions)
    shown_as = f"{key}:{translation.get_language()}"
    return hashlib.sha256(shown_as.encode()).hexdigest()[:16], picker


@functools.lru_cache(maxsize=32)
def _picker_under(key: str, taxonomy: Taxonomy, depth: str, exclude: frozenset[int]):
    """The picker stored under `key`, kept in this process too: unpickling the study's (416 kB)
    from the shared cache took 21 of a labeling page's 25 ms for it. The key names the taxonomy's
    content, so a kept picker is never stale (an edit gives another key); the pages only read it,
    so requests of other threads may share it."""
    picker = cache.get(key)
    if picker is None:
        picker = label_picker_build(taxonomy, depth, exclude=exclude)
        cache.set(key, picker, PICKER_CACHE_SECONDS)
    return picker


# What the picker is made of: every column of a node or example it shows or orders by.
_NODE_COLUMNS = (
    "id", "code", "level", "name", "definition", "name_zh", "definition_zh", "parent_id",
    "position", "retired_at",
)  # fmt: skip
_EXAMPLE_COLUMNS = ("id", "node_id", "kind", "text", "position")


def taxonomy_fingerprint(taxonomy: Taxonomy) -> str:
    """A digest of the taxonomy's nodes and examples, as the picker shows them: any edit, by any
    path (the curation pages, the admin, a loader, SQL), gives another. One query; on PostgreSQL
    the database digests the rows (about 150 kB of text for the study's taxonomy) and sends back
    32 characters."""
    if connection.vendor != "postgresql":
        nodes = taxonomy.nodes.order_by("pk").values_list(*_NODE_COLUMNS)
        examples = (
            Example.objects.filter(node__taxonomy_id=taxonomy.pk)
            .order_by("pk")
            .values_list(*_EXAMPLE_COLUMNS)
        )
        return hashlib.md5(repr((list(nodes), list(examples))).encode()).hexdigest()  # noqa: S324 - a fingerprint, not a secret
    quote = connection.ops.quote_name
    node_table, example_table = quote(Node._meta.db_table), quote(Example._meta.db_table)
    node_row = ", ".join(f"n.{quote(c)}" for c in _NODE_COLUMNS)
    example_row = ", ".join(f"e.{quote(c)}" for c in _EXAMPLE_COLUMNS)
    # A row's text form quotes its fields, so no two contents read alike.
    sql = (
        f"SELECT md5(concat("  # noqa: S608 - names from the models
        f"(SELECT string_agg(ROW({node_row})::text, ',' ORDER BY n.id) "
        f"FROM {node_table} n WHERE n.taxonomy_id = %s), ';', "
        f"(SELECT string_agg(ROW({example_row})::text, ',' ORDER BY e.id) "
        f"FROM {example_table} e JOIN {node_table} n ON n.id = e.node_id "
        f"WHERE n.taxonomy_id = %s)))"
    )
    with connection.cursor() as cursor:
        cursor.execute(sql, [taxonomy.pk, taxonomy.pk])
        return cursor.fetchone()[0]


def label_picker_build(
    taxonomy: Taxonomy, depth: str, *, exclude: frozenset[int]
) -> list[PickerNode]:
    """The current (not retired, not in `exclude`) tree down to `depth` (a Level), numbered among
    siblings, with the study's examples and the summary hint of each type. Categories below the
    depth are kept as `below` of their ancestor at the depth (names and examples), so that
    searching for a sub-theme's words finds its theme; nodes under a retired or excluded one are
    left out. Two queries."""
    limit = Level.depth_of(depth)
    nodes = sorted(
        taxonomy.nodes.filter(retired_at__isnull=True)
        .exclude(pk__in=exclude)
        .prefetch_related(Prefetch("examples", queryset=Example.objects.order_by("position"))),
        key=lambda n: (Level.depth_of(n.level), n.position, n.pk),
    )
    kinds: dict[str, str] = {}  # a type's code -> the kind of its sub-themes' examples
    wrapped: dict[int, PickerNode] = {}
    roots: list[PickerNode] = []
    for n in nodes:
        examples = list(n.examples.all())
        parent = wrapped.get(n.parent_id) if n.parent_id else None
        if n.parent_id and parent is None:  # under a retired or excluded node
            continue
        if n.depth > limit and parent is not None:  # a root is never below the depth
            wrapped[n.pk] = parent  # stand in for the ancestor at the depth
            parent.below.append(n.name)
            parent.below_nodes.append(n)
            parent.below.extend(e.text for e in examples)
            parent.below_examples.extend(examples)
            if examples and n.depth == Level.depth_of(Level.SUBTHEME):
                kinds.setdefault(parent.codes.split()[0], examples[0].kind)
            continue
        siblings = parent.children if parent else roots
        pn = PickerNode(n, len(siblings) + 1, examples=examples)
        if parent:
            pn.path = f"{parent.path} \u203a {n.name}"
            pn.parent_code = parent.node.code
            pn.codes = f"{parent.codes} {n.code}"
        else:
            pn.path, pn.codes = n.name, n.code
        if examples:
            kinds.setdefault(pn.codes.split()[0], examples[0].kind)
        siblings.append(pn)
        wrapped[n.pk] = pn
    for pn in roots:
        pn.hint = SUMMARY_HINTS.get(kinds.get(pn.node.code, ""), "") or _hint_by_name(pn.node.name)
    return roots


def picker_levels(roots: list[PickerNode]) -> list[list[PickerNode]]:
    """The picker as one list per level, type first (the page shows one level at a time)."""
    levels = []
    frontier = roots
    while frontier:
        levels.append(frontier)
        frontier = [child for pn in frontier for child in pn.children]
    return levels


def picker_details(roots: list[PickerNode]) -> dict[str, dict]:
    """Per option code: its definition, the names of the categories under it and its examples
    (its own, or those of the categories under it), as the labeling page shows the option that
    has focus and searches them, in the reader's language; `other`: the names and definitions
    in the other language, which the search looks in too."""
    details: dict[str, dict] = {}
    for level in picker_levels(roots):
        for pn in level:
            details[pn.node.code] = {
                "definition": pn.node.shown_definition,
                "below": [n.shown_name for n in pn.below_nodes],
                "other": " ".join(
                    n.other_language_text for n in [pn.node, *pn.below_nodes]
                ).strip(),
                "examples": [
                    [str(e.get_kind_display()), e.text] for e in pn.examples + pn.below_examples
                ],
            }
    return details


def _hint_by_name(name: str) -> str:
    lowered = name.lower()
    for word, kind in (("bug", ExampleKind.SYMPTOM), ("question", ExampleKind.INTENT),
                       ("requirement", ExampleKind.EXPECTATION)):  # fmt: skip
        if word in lowered:
            return SUMMARY_HINTS[kind]
    return DEFAULT_HINT
