"""The pilot: before volunteers start, the lead labels a random sample of open items; once
closed, those labels and summaries serve every member as worked examples (final items, never
handed out to label). An example the lead re-opens leaves the pilot (lifecycle.BACK_MOVES)."""

from __future__ import annotations

from django.db import transaction
from django.db.models import Q, QuerySet
from django.utils.translation import gettext as _

from annotation.access import role_reaches, roles_reaching
from annotation.audit import audit_record
from annotation.gate import Write, gate
from annotation.lifecycle import Move, items_move
from annotation.models import (
    Action,
    Annotation,
    Item,
    Membership,
    Method,
    PilotStatus,
    Project,
    Resolution,
    Role,
    Stage,
)
from concord.errors import ConcordError, Conflict

PILOT_MAX = 1000
EXAMPLE = "The lead's worked example from the pilot."


@transaction.atomic
def pilot_start(*, project: Project, lead, n: int) -> int:
    """Flag a random sample of `n` open, unlabelled items as the pilot and stop handing items to
    volunteers until it closes (annotation.labeling.assignment enforces that). Returns the sample
    size, which is smaller than `n` when fewer items are open."""
    gate(lead, project, Write.PILOT)
    if not 1 <= n <= PILOT_MAX:
        raise ConcordError(_("A pilot takes between 1 and %(max)d items.") % {"max": PILOT_MAX})
    locked = Project.objects.select_for_update().get(pk=project.pk)
    if locked.pilot_status == PilotStatus.RUNNING:
        raise Conflict(_("A pilot is already running; close it first."))
    open_items = locked.items.filter(
        stage__in=[Stage.OPEN, Stage.LABELING], label_count=0, in_pilot=False
    )
    # ORDER BY random() over the open items only: at study scale a few ms, and one statement
    sample = list(open_items.order_by("?").values_list("pk", flat=True)[:n])
    if not sample:
        raise ConcordError(_("No open, unlabelled items to sample; add items first."))
    Item.objects.filter(pk__in=sample).update(in_pilot=True)
    before = locked.pilot_status
    locked.pilot_status = PilotStatus.RUNNING
    locked.save(update_fields=["pilot_status"])
    project.pilot_status = PilotStatus.RUNNING
    audit_record(
        project=locked,
        actor=lead,
        action=Action.PILOT,
        before={"status": before},
        after={"status": PilotStatus.RUNNING, "asked": n, "items": len(sample)},
    )
    return len(sample)


@transaction.atomic
def pilot_close(*, project: Project, lead) -> None:
    """End the pilot: volunteers get items again, and the pilot page opens to every member.
    Closing a closed pilot changes nothing."""
    gate(lead, project, Write.PILOT)
    locked = Project.objects.select_for_update().get(pk=project.pk)
    if locked.pilot_status == PilotStatus.CLOSED:
        return
    if locked.pilot_status != PilotStatus.RUNNING:
        raise Conflict(_("No pilot is running."))
    locked.pilot_status = PilotStatus.CLOSED
    locked.save(update_fields=["pilot_status"])
    project.pilot_status = PilotStatus.CLOSED
    labeled = _finalise_worked_examples(locked, lead)
    audit_record(
        project=locked,
        actor=lead,
        action=Action.PILOT,
        before={"status": PilotStatus.RUNNING},
        after={"status": PilotStatus.CLOSED, "labeled": labeled},
    )


def _finalise_worked_examples(project: Project, lead) -> int:
    """Pilot items the lead labelled become final on that label: they are the worked examples
    every member may now read, so sending them to volunteers would no longer be blind. Their
    single pilot label stays out of agreement (annotation.reporting.agreement). Unlabelled pilot
    items go back to the pool. Returns how many became examples."""
    pilot = project.items.filter(in_pilot=True)
    pilot.filter(label_count=0).update(in_pilot=False)
    labels = list(
        Annotation.objects.filter(item__in=pilot, is_pilot=True).values_list(
            "item_id", "node_id", "item__stage"
        )
    )
    Resolution.objects.bulk_create(
        [
            Resolution(
                item_id=item_id,
                node_id=node_id,
                method=Method.LEAD,
                resolver=lead,
                reason=EXAMPLE,
            )
            for item_id, node_id, _ in labels
        ],
        ignore_conflicts=True,
    )
    moves = [Move(item_id, stage, Stage.FINAL, {"method": Method.LEAD, "reason": EXAMPLE})
             for item_id, _, stage in labels]  # fmt: skip
    items_move(project=project, moves=moves, action=Action.RESOLVE, actor=lead)
    return len(labels)


def _shown(project: Project, role: str | None) -> dict | None:
    """Which pilot items `role` may see on the pilot page (field lookups on items), None for none.
    A lead: every item of the sample, running or closed. Any other member: only the worked
    examples of a closed pilot, final items; never one that could still be handed out to label
    (an example re-opened leaves the pilot, lifecycle.BACK_MOVES; this holds even if some path
    forgot that)."""
    if role_reaches(role, Role.LEAD):
        return {"in_pilot": True}
    if role is None or project.pilot_status != PilotStatus.CLOSED:
        return None
    return {"in_pilot": True, "stage": Stage.FINAL}


def pilot_items(project: Project, role: str | None) -> QuerySet[Item]:
    """The pilot items `role` may see on the pilot page, by id."""
    shown = _shown(project, role)
    if shown is None:
        return Item.objects.none()
    return project.items.filter(**shown).select_related("issue").order_by("pk")


def pilot_examples(project: Project, role: str | None) -> QuerySet[Annotation]:
    """The lead's labels on the pilot items `role` may see: given in the pilot, or by a lead or
    admin of the project."""
    shown = _shown(project, role)
    if shown is None:
        return Annotation.objects.none()
    leads = Membership.objects.filter(project=project, role__in=roles_reaching(Role.LEAD))
    on_shown = {f"item__{lookup}": value for lookup, value in shown.items()}
    return (
        Annotation.objects.filter(item__project=project, **on_shown)
        .filter(Q(is_pilot=True) | Q(volunteer__in=leads.values("user")))
        .select_related("item__issue", "node", "node__parent", "volunteer")
        .order_by("item_id", "pk")
    )
