"""What a volunteer may see of an item before it is complete: the blindness rule, in one place.

Before an item has all its k labels nothing a volunteer can reach may depend on other
volunteers' work on it: not their labels or summaries, and not the item's stage, its counts, the
order it is handed out in, or their proposals about it. Labeling pages and API, the discussion,
proposals and project pages all ask here (tests/test_blindness.py walks every page and API answer
a volunteer can reach, before and after others work on the item, and compares them byte by byte).
"""

from __future__ import annotations

from django.db.models import Exists, OuterRef, Q, QuerySet

from annotation.access import has_role, role_reaches
from annotation.models import REVEALED_STAGES, Annotation, Item, Project, Role, Stage

BLIND = "blind"  # the stage a volunteer is shown before an item has all its labels


def is_revealed(item: Item, project: Project) -> bool:
    """Whether volunteers may see an item's labels, summaries and stage: once it has all its k
    labels (disputed or final) and the project reveals them then."""
    return project.reveal_after_cross_check and item.stage in REVEALED_STAGES


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
