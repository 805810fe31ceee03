"""Labels: a volunteer submits or edits their label on an item; what a volunteer may see of it.

Blind labeling: nothing here returns another volunteer's label, summary or the counts that would
reveal them, unless the item is in REVEALED_STAGES and the project reveals labels after
cross-check (`revealed_labels`).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from django.core.cache import cache
from django.db import transaction
from django.db.models import Count, Exists, Max, OuterRef, Prefetch, Q
from django.utils import timezone

from annotation.access import has_role
from annotation.assignment import live_reservations
from annotation.audit import audit_record
from annotation.consensus import item_cross_check
from annotation.highlight import highlight_keywords, highlight_text
from annotation.models import (
    LABELABLE_STAGES,
    REVEALED_STAGES,
    Action,
    Annotation,
    Item,
    PilotStatus,
    Project,
    Reservation,
    Role,
    ScreeningVote,
    Skip,
    Stage,
)
from annotation.rendering import markdown_to_html
from concord.errors import ConcordError, Conflict
from ingest.models import KeywordMatch
from taxonomy.models import Example, ExampleKind, Level, Node

SUMMARY_MAX = 500
PICKER_CACHE_SECONDS = 3600


def label_node(*, project: Project, code: str) -> Node:
    """The node `code` of the project's taxonomy, if a label may go there (see node_check)."""
    code = (code or "").strip()
    if not code:
        raise ConcordError("Choose a category.")
    node = Node.objects.filter(taxonomy_id=project.taxonomy_id, code=code).first()
    if node is None:
        raise ConcordError(f"{code} is not a category of the taxonomy {project.taxonomy}.")
    node_check(project=project, node=node)
    return node


def node_check(*, project: Project, node: Node) -> None:
    """A label is a node of the project's taxonomy, at exactly the project's depth, not retired."""
    if node.taxonomy_id != project.taxonomy_id:
        raise ConcordError(f"{node.code} belongs to another taxonomy than {project.taxonomy}.")
    if node.level != project.label_depth:
        raise ConcordError(
            f"{node.code} is a {Level(node.level).label.lower()}; this project labels at "
            f"{Level(project.label_depth).label.lower()} depth."
        )
    if node.retired_at is not None:
        raise ConcordError(
            f"{node.code} {node.name} was retired on {node.retired_at:%Y-%m-%d}; "
            "choose a current category."
        )


def _stale(annotation: Annotation) -> Conflict:
    when = timezone.localtime(annotation.updated_at).strftime("%H:%M")
    return Conflict(
        f"This label was changed in another tab or by a retry at {when}; reload to see it."
    )


def annotation_submit(
    *,
    item: Item,
    volunteer,
    node: Node,
    summary: str,
    version: int | None = None,
) -> tuple[Annotation, bool]:
    """Store `volunteer`'s label on `item`, or edit it. Returns (annotation, created).

    Idempotent: the same node and summary again (double click, retry, a second tab) returns the
    stored annotation and changes nothing. A different label on an item already labeled is an
    edit, which needs the `version` the form was built from: a stale one is a Conflict, never a
    silent overwrite. The item row is locked for the whole transaction, so two submits for the
    same item (by anyone) run one after the other and label_count never passes k."""
    summary = " ".join((summary or "").split())
    if len(summary) > SUMMARY_MAX:
        raise ConcordError(f"The summary is {len(summary)} characters; keep it to {SUMMARY_MAX}.")
    with transaction.atomic():
        item = Item.objects.select_for_update().select_related("project").get(pk=item.pk)
        project = item.project
        node_check(project=project, node=node)
        mine = Annotation.objects.filter(item=item, volunteer=volunteer).first()
        if mine is not None:
            if mine.node_id == node.pk and mine.summary == summary:
                return mine, False
            return _annotation_edit(item=item, annotation=mine, node=node, summary=summary,
                                    version=version), False  # fmt: skip
        return _annotation_create(item=item, volunteer=volunteer, node=node, summary=summary), True


def _annotation_create(*, item: Item, volunteer, node: Node, summary: str) -> Annotation:
    project = item.project
    if item.label_count >= project.overlap_k:
        raise Conflict(
            f"This item already has its {project.overlap_k} labels; ask for the next item."
        )
    if item.stage not in LABELABLE_STAGES:
        raise Conflict(
            f"This item is {Stage(item.stage).label.lower()}, not open for labeling; "
            "ask for the next item."
        )
    pilot = project.pilot_status == PilotStatus.RUNNING
    lead = pilot and has_role(volunteer, project, Role.LEAD)  # only matters during a pilot
    if pilot and not (lead and item.in_pilot):
        raise Conflict("The lead is running a pilot; labeling opens when it closes.")
    now = timezone.now()
    reservation = Reservation.objects.filter(item=item, volunteer=volunteer).first()
    seconds = None
    if reservation is not None:
        seconds = max(0, int((now - reservation.created_at).total_seconds()))
        reservation.delete()
    annotation = Annotation.objects.create(
        item=item,
        volunteer=volunteer,
        node=node,
        summary=summary,
        seconds_spent=seconds,
        is_pilot=bool(pilot and lead and item.in_pilot),
    )
    item.label_count += 1
    item.stage = Stage.LABELING
    item.save(update_fields=["label_count", "stage"])
    audit_record(
        project=project,
        item=item,
        actor=volunteer,
        action=Action.LABEL,
        after={"node": node.code, "summary": summary},
    )
    if item.label_count >= project.overlap_k:
        item_cross_check(item=item)
    return annotation


def _annotation_edit(
    *, item: Item, annotation: Annotation, node: Node, summary: str, version: int | None
) -> Annotation:
    if item.stage not in LABELABLE_STAGES:
        raise Conflict(
            f"This item is already {Stage(item.stage).label.lower()}; "
            "its labels can no longer be changed."
        )
    if version is None or int(version) != annotation.version:
        raise _stale(annotation)
    before = {"node": annotation.node.code, "summary": annotation.summary}
    annotation.node = node
    annotation.summary = summary
    annotation.version += 1
    annotation.save(update_fields=["node", "summary", "version", "updated_at"])
    audit_record(
        project=item.project,
        item=item,
        actor=annotation.volunteer,
        action=Action.EDIT,
        before=before,
        after={"node": node.code, "summary": summary},
    )
    return annotation


# ---------------------------------------------------------------- what a volunteer may see


def is_revealed(item: Item, project: Project) -> bool:
    return project.reveal_after_cross_check and item.stage in REVEALED_STAGES


def revealed_labels(*, item: Item, project: Project, viewer) -> list[Annotation]:
    """The other volunteers' labels on `item`, only once the project lets volunteers see them."""
    if not is_revealed(item, project):
        return []
    return list(
        item.annotations.exclude(volunteer=viewer)
        .select_related("node", "volunteer")
        .order_by("created_at", "pk")
    )


def is_editable(item: Item) -> bool:
    return item.stage in LABELABLE_STAGES


@dataclass(frozen=True)
class ItemAccess:
    """Why `viewer` may open an item's labeling page: they hold it, or labeled it."""

    item: Item
    annotation: Annotation | None
    reservation: Reservation | None


def access_item_for_labeling(*, project: Project, item_id: int, viewer) -> ItemAccess | None:
    """The item if it is in `project` and handed to `viewer` (a live reservation) or labeled by
    them; None otherwise (the page answers 404, so ids reveal nothing)."""
    item = (
        Item.objects.select_related("issue", "project").filter(project=project, pk=item_id).first()
    )
    if item is None:
        return None
    annotation = (
        Annotation.objects.select_related("node").filter(item=item, volunteer=viewer).first()
    )
    reservation = live_reservations().filter(item=item, volunteer=viewer).first()
    if annotation is None and reservation is None:
        return None
    return ItemAccess(item=item, annotation=annotation, reservation=reservation)


def my_annotations(*, project: Project, volunteer):
    return (
        Annotation.objects.filter(item__project=project, volunteer=volunteer)
        .select_related("item__issue", "node")
        .order_by("-updated_at", "-pk")
    )


# ---------------------------------------------------------------- pages and API payloads


@dataclass(frozen=True)
class CommentView:
    author: str
    created_at: object
    html: str


@dataclass(frozen=True)
class ItemView:
    """An item as a volunteer sees it: sanitized HTML with the matched keywords marked, their
    own label, and the others' labels only once revealed."""

    item: Item
    keywords: list[str]
    title_html: str
    body_html: str
    comments: list[CommentView]
    mine: Annotation | None
    others: list[Annotation]
    revealed: bool


def item_keywords(item: Item) -> list[str]:
    found: dict[str, None] = {}
    for keywords in KeywordMatch.objects.filter(issue_id=item.issue_id).values_list(
        "keywords", flat=True
    ):
        found.update(dict.fromkeys(keywords))
    return list(found)


def item_view(*, item: Item, project: Project, viewer) -> ItemView:
    issue = item.issue
    keywords = item_keywords(item)
    comments = [
        CommentView(c.author, c.created_at, highlight_keywords(markdown_to_html(c.body), keywords))
        for c in issue.comments.order_by("created_at", "comment_id")
    ]
    mine = Annotation.objects.select_related("node").filter(item=item, volunteer=viewer).first()
    return ItemView(
        item=item,
        keywords=keywords,
        title_html=highlight_text(issue.title or str(issue), keywords),
        body_html=highlight_keywords(markdown_to_html(issue.body), keywords),
        comments=comments,
        mine=mine,
        others=revealed_labels(item=item, project=project, viewer=viewer),
        revealed=is_revealed(item, project),
    )


@dataclass(frozen=True)
class Progress:
    mine: int
    mine_target: int
    waiting_to_label: int
    waiting_to_screen: int
    project_done: int
    project_total: int

    @staticmethod
    def percent(part: int, whole: int) -> int:
        return round(100 * part / whole) if whole else 0

    @property
    def mine_percent(self) -> int:
        return self.percent(self.mine, self.mine_target)

    @property
    def project_percent(self) -> int:
        return self.percent(self.project_done, self.project_total)


def volunteer_progress(*, project: Project, volunteer, waiting: bool = True) -> Progress:
    """My labels against my quota (or against mine plus what still waits for me), what waits
    for me, and how far the project is (items with k labels among those past screening). No
    per-item counts of labels are shown to volunteers, so nothing here reveals other volunteers'
    answers. `waiting=False` skips counting the candidates left to screen."""
    stages = dict(project.items.values_list("stage").annotate(n=Count("pk")).order_by())
    past_screening = sum(
        n for stage, n in stages.items()
        if stage not in (Stage.CANDIDATE, Stage.SCREENING_DISPUTE, Stage.EXCLUDED)
    )  # fmt: skip
    done = sum(stages.get(stage, 0) for stage in REVEALED_STAGES)
    mine = Annotation.objects.filter(item__project=project, volunteer=volunteer).count()
    labelable = Item.objects.filter(
        project=project, stage__in=LABELABLE_STAGES, label_count__lt=project.overlap_k
    )
    if project.pilot_status == PilotStatus.RUNNING:
        lead = has_role(volunteer, project, Role.LEAD)
        labelable = labelable.filter(in_pilot=True) if lead else labelable.none()
    if project.quota_per_volunteer is not None and mine >= project.quota_per_volunteer:
        labelable = labelable.none()
    mine_q = Q(item=OuterRef("pk"), volunteer=volunteer)
    waiting_to_label = (
        labelable.exclude(Exists(Annotation.objects.filter(mine_q)))
        .exclude(Exists(Skip.objects.filter(mine_q)))
        .count()
    )
    waiting_to_screen = 0
    if project.screening_enabled and waiting:
        waiting_to_screen = (
            Item.objects.filter(project=project, stage=Stage.CANDIDATE)
            .exclude(Exists(ScreeningVote.objects.filter(mine_q)))
            .count()
        )
    return Progress(
        mine=mine,
        mine_target=max(project.quota_per_volunteer or mine + waiting_to_label, mine),
        waiting_to_label=waiting_to_label,
        waiting_to_screen=waiting_to_screen,
        project_done=done,
        project_total=past_screening,
    )


# ---------------------------------------------------------------- the taxonomy picker

# Which kind of one-line summary each type asks for, by the kind of the study's examples under it
# (bugs: symptoms, questions: intents, requirements: expectations; see taxonomy.loaders).
SUMMARY_HINTS = {
    ExampleKind.SYMPTOM: "Symptom: what goes wrong, in one line (e.g. “OOM when saving a "
    "sharded checkpoint”).",
    ExampleKind.INTENT: "Intent: what the asker wants to know or do, in one line.",
    ExampleKind.EXPECTATION: "Expectation: what the requester expects the framework to offer, "
    "in one line.",
}
DEFAULT_HINT = "One line: the symptom, intent or expectation behind the issue."


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
    below_names: list[str] = field(default_factory=list)


def label_picker(project: Project) -> list[PickerNode]:
    """label_picker_build, cached until the taxonomy's nodes or examples change (a node added,
    retired or restored, an example added): the tree is the same for every page of a project."""
    nodes = project.taxonomy.nodes.aggregate(
        n=Count("pk"), retired=Count("retired_at"), last=Max("pk")
    )
    examples = Example.objects.filter(node__taxonomy_id=project.taxonomy_id).aggregate(
        n=Count("pk"), last=Max("pk")
    )
    key = "label-picker:{}:{}:{}:{}:{}:{}:{}".format(
        project.taxonomy_id, project.label_depth, nodes["n"], nodes["retired"], nodes["last"],
        examples["n"], examples["last"],
    )  # fmt: skip
    picker = cache.get(key)
    if picker is None:
        picker = label_picker_build(project)
        cache.set(key, picker, PICKER_CACHE_SECONDS)
    return picker


def label_picker_build(project: Project) -> list[PickerNode]:
    """The current (not retired) tree down to the project's depth, numbered among siblings, with
    the study's examples and the summary hint of each type. Categories below the depth are kept
    as `below` of their ancestor at the depth (names and examples), so that searching for a
    sub-theme's words finds its theme. Two queries."""
    depth = Level.depth_of(project.label_depth)
    nodes = sorted(
        project.taxonomy.nodes.filter(retired_at__isnull=True).prefetch_related(
            Prefetch("examples", queryset=Example.objects.order_by("position"))
        ),
        key=lambda n: (Level.depth_of(n.level), n.position, n.pk),
    )
    kinds = {}
    wrapped: dict[int, PickerNode] = {}
    roots: list[PickerNode] = []
    for n in nodes:
        examples = list(n.examples.all())
        parent = wrapped.get(n.parent_id) if n.parent_id else None
        if n.parent_id and parent is None:  # under a retired node
            continue
        if n.depth > depth:
            wrapped[n.pk] = parent  # stand in for the ancestor at the depth
            parent.below.append(n.name)
            parent.below_names.append(n.name)
            parent.below.extend(e.text for e in examples)
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
        pn.hint = SUMMARY_HINTS.get(kinds.get(pn.node.code), "") or _hint_by_name(pn.node.name)
    return roots


def picker_levels(roots: list[PickerNode]) -> list[list[PickerNode]]:
    """The picker as one list per level, type first (the page shows one level at a time)."""
    levels = []
    frontier = roots
    while frontier:
        levels.append(frontier)
        frontier = [child for pn in frontier for child in pn.children]
    return levels


def _hint_by_name(name: str) -> str:
    lowered = name.lower()
    for word, kind in (("bug", ExampleKind.SYMPTOM), ("question", ExampleKind.INTENT),
                       ("requirement", ExampleKind.EXPECTATION)):  # fmt: skip
        if word in lowered:
            return SUMMARY_HINTS[kind]
    return DEFAULT_HINT


def node_path(node: Node) -> list[Node]:
    """The node and its ancestors, type first."""
    path = [node]
    while path[0].parent_id is not None:
        path.insert(0, Node.objects.get(pk=path[0].parent_id))
    return path
