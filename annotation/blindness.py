"""What a volunteer may see of an item before it is complete: the blindness rule, in one place.

Before an item has all its k labels nothing a volunteer can reach may depend on other
volunteers' work on it: not their labels or summaries, and not the item's stage, its counts, the
order it is handed out in, or their proposals about it. Labeling pages and API, the discussion,
proposals and project pages all ask here, and so does every refusal that an item's stage gives a
volunteer (BlindRefusal: skips, screening votes, edits). tests/test_blindness.py walks every page
and API answer a volunteer can reach, before and after others work on the item, and compares them
byte by byte; tests/test_blind_refusals.py asks for those refusals on items in every stage.

The same holds for an interview transcript coded by several coders (issue 27): until every coder
is done, each sees only their own codes (coding_revealed, passages_seen_by).
"""

from __future__ import annotations

from django.db import models
from django.db.models import Exists, OuterRef, Q, QuerySet
from django.utils.translation import gettext_lazy as _

from annotation.access import has_role, role_reaches
from annotation.models import REVEALED_STAGES, Annotation, Item, Project, Role, Stage
from taxonomy.interviews.models import CodedPassage, Transcript

BLIND = "blind"  # the stage a volunteer is shown before an item has all its labels


def is_revealed(item: Item, project: Project) -> bool:
    """Whether volunteers may see an item's labels, summaries and stage: once it has all its k
    labels (disputed or final) and the project reveals them then."""
    return project.reveal_after_cross_check and item.stage in REVEALED_STAGES


def revealed(items: QuerySet[Item], project: Project) -> QuerySet[Item]:
    """`items` (of `project`) that is_revealed: the same rule, as a query."""
    if not project.reveal_after_cross_check:
        return items.none()
    return items.filter(stage__in=REVEALED_STAGES)


def items_seen_by(viewer, project: Project) -> QuerySet[Item]:
    """The items whose stage, labels and proposals `viewer` may see in `project` (is_revealed,
    as a query): leads all; a volunteer the revealed ones, those they labeled themselves and
    those attached to their own proposals."""
    items = Item.objects.filter(project=project)
    if has_role(viewer, project, Role.LEAD):
        return items
    mine = Q(Exists(Annotation.objects.filter(item=OuterRef("pk"), volunteer=viewer))) | Q(
        proposals__proposer=viewer
    )
    if project.reveal_after_cross_check:
        mine |= Q(stage__in=REVEALED_STAGES)
    return items.filter(mine).distinct()


def stage_seen(item: Item, project: Project, role: str | None) -> str:
    """The stage `role` is shown. Before an item is revealed its stage would tell a volunteer
    whether others labeled it (open or labeling) or agreed (final or disputed): they see BLIND."""
    if role_reaches(role, Role.LEAD) or is_revealed(item, project):
        return item.stage
    return BLIND


class BlindRefusal(models.TextChoices):
    """What someone who may not see an item's stage (stage_seen) is told when the item's stage
    refuses what they asked: the same words whatever the stage, naming no stage, no count, no
    agreement and nobody's work, so that trying item ids (skip, undo a skip, a screening vote, a
    label or an edit) tells a volunteer nothing of what others did with an item. Where they may
    see the stage (leads; volunteers once an item is revealed) the precise words go instead
    (refusal_seen)."""

    CLOSED = "closed", _("This item is not open for labeling; ask for the next item.")
    LABEL_KEPT = (
        "label_kept",
        _("This item has left labeling, so your label can no longer be changed."),
    )
    NOT_SCREENING = (
        "not_screening",
        _("This item is not open for screening; ask for the next candidate."),
    )


def refusal_seen(
    item: Item, project: Project, role: str | None, precise: str, blind: BlindRefusal
) -> str:
    """The refusal `role` reads when `item`'s stage refuses them: `precise` (which may name the
    stage or its labels) where stage_seen shows them the stage, else `blind`'s fixed words."""
    if stage_seen(item, project, role) == BLIND:
        return str(blind.label)
    return precise


# What a volunteer's stage counts fold together: open vs labeling would tell them whether others
# have labeled, a screening dispute how others voted, disputed vs final (where labels are never
# revealed) whether others agreed.
FOLDED_FOR_VOLUNTEERS: dict[str, str] = {
    Stage.OPEN: Stage.LABELING,
    Stage.SCREENING_DISPUTE: Stage.CANDIDATE,
}


def stage_counts_seen(counts: dict[str, int], project: Project, role: str | None) -> dict:
    """Items per stage as `role` may see them (stage_seen, for a whole project's counts)."""
    if role_reaches(role, Role.LEAD):
        return counts
    folded: dict[str, str] = dict(FOLDED_FOR_VOLUNTEERS)
    if not project.reveal_after_cross_check:
        folded[Stage.DISPUTED] = Stage.FINAL
    seen: dict[str, int] = {}
    for stage, n in counts.items():
        shown = folded.get(stage, stage)
        seen[shown] = seen.get(shown, 0) + n
    return seen


# ---------------------------------------------------------------- coding interview transcripts


def coding_revealed(transcript: Transcript) -> bool:
    """Whether a transcript's coders may see each other's codes: once at least two coders code
    it and every one of them is done (then no one's coding can still follow another's)."""
    done = [coder.done_at is not None for coder in transcript.coders.all()]
    return len(done) >= 2 and all(done)


def sees_all_codes(viewer, transcript: Transcript, project: Project) -> bool:
    """Whether `viewer` may see every coder's codes on `transcript` (and so the agreement): once
    it is revealed; before, a lead who is not one of its coders. A coder sees their own only."""
    if coding_revealed(transcript):
        return True
    is_coder = any(coder.coder_id == viewer.pk for coder in transcript.coders.all())
    return not is_coder and has_role(viewer, project, Role.LEAD)


def passages_seen_by(viewer, transcript: Transcript, project: Project) -> QuerySet[CodedPassage]:
    """The coded passages of `transcript` that `viewer` may see (sees_all_codes, or their own)."""
    passages = CodedPassage.objects.filter(transcript=transcript)
    if sees_all_codes(viewer, transcript, project):
        return passages
    return passages.filter(coder=viewer)


def project_passages_seen_by(viewer, project: Project) -> QuerySet[CodedPassage]:
    """The coded passages of all `project`'s transcripts that `viewer` may see (passages_seen_by
    for each transcript, as one query): a lead's exports leave out the other coders' passages
    of a transcript the lead codes and not everyone is done with."""
    transcripts = Transcript.objects.filter(project=project).prefetch_related("coders")
    hidden = [t.pk for t in transcripts if not sees_all_codes(viewer, t, project)]
    passages = CodedPassage.objects.filter(transcript__project=project)
    return passages.exclude(Q(transcript_id__in=hidden) & ~Q(coder_id=viewer.pk))
