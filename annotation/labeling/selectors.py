"""What a volunteer may see of an item and of their own work: the item page's contents, the labels
they may open, their progress.

Blind labeling: nothing here returns another volunteer's label, summary or the counts that would
reveal them, unless the item is in REVEALED_STAGES and the project reveals labels after
cross-check (`revealed_labels`).
"""

from __future__ import annotations

from dataclasses import dataclass

from django.db.models import Count, Exists, OuterRef, Q
from django.utils import timezone
from django.utils.html import format_html
from django.utils.translation import gettext as _

from annotation.blindness import is_revealed
from annotation.highlight import highlight_keywords
from annotation.labeling.assignment import live_reservations
from annotation.labeling.eligibility import labelable_for
from annotation.models import (
    LABELABLE_STAGES,
    REVEALED_STAGES,
    Annotation,
    Item,
    Project,
    Reservation,
    ScreeningVote,
    Skip,
    Stage,
)
from annotation.rendering import markdown_to_html, title_to_html
from concord.prepared import PreparedQuery
from concord.text_language import in_its_language
from ingest.models import Comment, KeywordMatch


def revealed_labels(*, item: Item, project: Project, viewer) -> list[Annotation]:
    """The other volunteers' labels on `item`, only once the project lets volunteers see them."""
    if not is_revealed(item, project):
        return []
    return list(
        item.annotations.exclude(volunteer=viewer)
        .select_related("node", "volunteer")
        .order_by("created_at", "pk")
    )


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
    annotation = own_annotation(item=item, volunteer=viewer)
    reservation = live_reservations().filter(item=item, volunteer=viewer).first()
    if annotation is None and reservation is None:
        return None
    return ItemAccess(item=item, annotation=annotation, reservation=reservation)


MY_SKIPS_SHOWN = 20


def my_skips(*, project: Project, volunteer) -> list[Skip]:
    """My latest skips of items still open for labeling (a skip may be taken back while the
    item is; whether the rule then lets me label it is decided by the take-back)."""
    return list(
        Skip.objects.filter(
            item__project=project, volunteer=volunteer, item__stage__in=LABELABLE_STAGES
        )
        .select_related("item__issue")
        .order_by("-created_at", "-pk")[:MY_SKIPS_SHOWN]
    )


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


# What every item shown to a volunteer reads, compiled once (issue #16).
_KEYWORDS = PreparedQuery(
    lambda issue: KeywordMatch.objects.filter(issue_id=issue).values_list("keywords", flat=True)
)
_COMMENTS = PreparedQuery(
    lambda issue: Comment.objects.filter(issue_id=issue).order_by("created_at", "comment_id")
)
_OWN_ANNOTATION = PreparedQuery(
    lambda item, volunteer: Annotation.objects.select_related("node").filter(
        item_id=item, volunteer_id=volunteer
    )
)


def own_annotation(*, item: Item, volunteer) -> Annotation | None:
    """`volunteer`'s label on `item` (with its node), or None: every page, payload and submit
    asks it this way (compiled once)."""
    return _OWN_ANNOTATION.first(item=item.pk, volunteer=volunteer.pk)


def item_keywords(item: Item) -> list[str]:
    found: dict[str, None] = {}
    for keywords in _KEYWORDS.run(issue=item.issue_id):
        found.update(dict.fromkeys(keywords))
    return list(found)


def missing_text_html(issue) -> str:
    """What the page says in place of a body Concord does not hold: an issue that came as a bare
    URL waits for its text from the tracker (or failed to get it), which is not the same as an
    issue its author left without a description (empty: the page says "(no description)")."""
    if issue.title or issue.fetched_at is not None:
        return ""
    if issue.fetch_error:
        words = _(
            "Concord could not fetch this issue's text (%(error)s): read it with “open the "
            "original”."
        )
        return format_html(
            '<p class="hint missing-text">{}</p>', words % {"error": issue.fetch_error}
        )
    words = _(
        "Concord holds only this issue's address: its text has not been fetched from the "
        "tracker (yet). Read it with “open the original”."
    )
    return format_html('<p class="hint missing-text">{}</p>', words)


def item_view(*, item: Item, project: Project, viewer, claimed: bool = False) -> ItemView:
    """`claimed`: the item was just handed to `viewer` by a claim, which never hands out an item
    they labeled, so there is no label of theirs to look up."""
    issue = item.issue
    keywords = item_keywords(item)
    # Each text carries its own language (lang), for a screen reader's voice: the page's
    # template and its script (the next items, from the API) show this HTML as it is.
    comments = [
        CommentView(
            c.author,
            c.created_at,
            in_its_language(
                highlight_keywords(markdown_to_html(c.body), keywords), c.body, tag="div"
            ),
        )
        for c in _COMMENTS.run(issue=issue.pk)
    ]
    mine = None if claimed else own_annotation(item=item, volunteer=viewer)
    return ItemView(
        item=item,
        keywords=keywords,
        title_html=in_its_language(
            highlight_keywords(title_to_html(issue.title or str(issue)), keywords), issue.title
        ),
        body_html=in_its_language(
            highlight_keywords(markdown_to_html(issue.body), keywords), issue.body, tag="div"
        )
        or missing_text_html(issue),
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
    waiting_to_label = labelable_for(
        project=project, volunteer=volunteer, now=timezone.now(), room=False
    ).count()
    mine_q = Q(item=OuterRef("pk"), volunteer=volunteer)
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
