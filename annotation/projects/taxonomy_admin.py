"""The taxonomy, curated in the app by leads and admins: upload a new version (a taxonomy CSV and
its detail files, loaded by taxonomy.loaders as `manage.py load_taxonomy` does, all in one
transaction), edit a node's definition and examples, retire a node (or bring it back). Nodes are
never deleted: labels keep pointing at them. A taxonomy serves every project that uses it, so
each change is one audit row in each of those projects."""

from __future__ import annotations

import tempfile
from dataclasses import replace
from pathlib import Path

from django.core.exceptions import PermissionDenied
from django.db import transaction
from django.utils import timezone

from annotation.access import roles_reaching
from annotation.audit import audit_record
from annotation.gate import gate_node
from annotation.models import Action, Membership, Project, Role
from annotation.projects.label_imports import Upload
from concord.errors import ConcordError, Conflict
from taxonomy.loaders import examples_load, taxonomy_load
from taxonomy.models import Example, ExampleKind, Node, Taxonomy
from taxonomy.qdc import qdc_csv

EXAMPLES_MAX = 200


def may_curate(user, taxonomy: Taxonomy | None = None) -> bool:
    """Site staff; or a lead or admin of a project (using `taxonomy`, when given)."""
    if not user.is_authenticated:
        return False
    if user.is_staff or user.is_superuser:
        return True
    memberships = Membership.objects.filter(user=user, role__in=roles_reaching(Role.LEAD))
    if taxonomy is not None:
        memberships = memberships.filter(project__taxonomy=taxonomy)
    return memberships.exists()


def require_curator(user, taxonomy: Taxonomy | None = None) -> None:
    if not may_curate(user, taxonomy):
        where = f" of a project using {taxonomy}" if taxonomy is not None else " of a project"
        raise PermissionDenied(f"Curating the taxonomy needs the lead or admin role{where}.")


def _audit(
    taxonomy: Taxonomy, actor, before: dict | None, after: dict, owner: Project | None = None
) -> None:
    """One audit row in each project the change reaches: the owner of a project's own node, or
    every project using the taxonomy for a shared one."""
    projects = [owner] if owner is not None else Project.objects.filter(taxonomy=taxonomy)
    for project in projects:
        audit_record(
            project=project, action=Action.TAXONOMY, actor=actor, before=before, after=after
        )


@transaction.atomic
def taxonomy_upload(
    *, user, name: str, version: str, tree: Upload, details: list[Upload]
) -> Taxonomy:
    """A new taxonomy version from a `code,level,parent,name[,study_name,description]` CSV (or a
    REFI-QDA codebook, .qdc: taxonomy.qdc) and detail files (`rootcause,subcategory,symptoms`).
    An existing name and version is refused: versions are never overwritten. Any bad row changes
    nothing."""
    if Taxonomy.objects.filter(name=name, version=version).exists():
        raise Conflict(
            f"{name} version {version} exists already; give the new one its own version."
        )
    if tree.name.lower().endswith(".qdc"):  # a REFI-QDA codebook, read as the tree's CSV
        tree = Upload(tree.name, qdc_csv(tree.data, Path(tree.name).name))
    with tempfile.TemporaryDirectory() as folder:
        paths = [_saved(Path(folder), upload) for upload in [tree, *details]]
        try:
            taxonomy_load(path=paths[0], name=name, version=version)
            taxonomy = Taxonomy.objects.get(name=name, version=version)
            for path in paths[1:]:
                examples_load(path=path, taxonomy=taxonomy)
        except ConcordError as exc:  # name the uploaded file, not where it was saved
            where = exc.where
            if where is not None:
                where = replace(where, path=Path(where.path).name)
            raise ConcordError(exc.message.replace(folder + "/", ""), where) from exc
    return taxonomy


def _saved(folder: Path, upload: Upload) -> Path:
    path = folder / (Path(upload.name).name or "upload.csv")
    if path.exists():
        raise ConcordError(f"Two files are named {path.name}.")
    path.write_bytes(upload.data)
    return path


def _example_kind(node: Node) -> str:
    """The kind a node's examples already have, else by its type's code letter (the study's: A
    questions have intents, B requirements expectations, C bugs symptoms)."""
    kind = node.examples.values_list("kind", flat=True).first()
    if kind:
        return kind
    letter = node.code[:1].upper()
    return {"A": ExampleKind.INTENT, "B": ExampleKind.EXPECTATION}.get(letter, ExampleKind.SYMPTOM)


@transaction.atomic
def node_edit(
    *,
    user,
    node: Node,
    definition: str,
    examples: list[str],
    chinese: tuple[str, str] | None = None,
) -> Node:
    """Set the node's definition and its examples (in this order; blank lines dropped), and with
    `chinese` its Chinese name and definition."""
    examples = [e.strip() for e in examples if e.strip()]
    if len(examples) > EXAMPLES_MAX:
        raise ConcordError(f"{len(examples)} examples; keep it to {EXAMPLES_MAX}.")
    owner = gate_node(user, node)
    node = Node.objects.select_for_update().get(pk=node.pk)
    before: dict[str, object] = {"code": node.code, "definition": node.definition}
    name_zh, definition_zh = (s.strip() for s in chinese or (node.name_zh, node.definition_zh))
    if (name_zh, definition_zh) != (node.name_zh, node.definition_zh):
        before |= {"name_zh": node.name_zh, "definition_zh": node.definition_zh}
    before["examples"] = list(node.examples.values_list("text", flat=True))
    kind = _example_kind(node)
    node.definition, node.name_zh, node.definition_zh = definition, name_zh, definition_zh
    node.save(update_fields=["definition", "name_zh", "definition_zh"])
    node.examples.all().delete()
    Example.objects.bulk_create(
        [
            Example(node=node, kind=kind, text=t, position=i)
            for i, t in enumerate(dict.fromkeys(examples))
        ]
    )
    after: dict[str, object] = {"code": node.code, "definition": definition}
    if "name_zh" in before:
        after |= {"name_zh": name_zh, "definition_zh": definition_zh}
    after["examples"] = list(dict.fromkeys(examples))
    if after != before:
        _audit(node.taxonomy, user, before, after, owner)
    return node


@transaction.atomic
def node_retire(*, user, node: Node, retired: bool) -> Node:
    """Retire the node (it takes no new labels; its labels stay) or bring it back."""
    owner = gate_node(user, node)
    node = Node.objects.select_for_update().get(pk=node.pk)
    if (node.retired_at is not None) == retired:
        return node
    node.retired_at = timezone.now() if retired else None
    node.save(update_fields=["retired_at"])
    _audit(
        node.taxonomy,
        user,
        {"code": node.code, "retired": not retired},
        {"code": node.code, "retired": retired},
        owner,
    )
    return node
