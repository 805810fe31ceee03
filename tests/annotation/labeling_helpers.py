"""Small builders shared by the labeling, assignment and screening tests."""

from __future__ import annotations

from datetime import timedelta

from django.utils import timezone

from annotation.labeling.services import annotation_submit
from annotation.models import Annotation, Item, Reservation, Stage
from taxonomy.models import Node
from tests.factories import IssueFactory, MembershipFactory, UserFactory


def items(project, n: int, *, stage: str = Stage.OPEN, **extra) -> list[Item]:
    return [
        Item.objects.create(project=project, issue=IssueFactory(), stage=stage, **extra)
        for _ in range(n)
    ]


def node(project, code: str) -> Node:
    return Node.objects.get(taxonomy=project.taxonomy, code=code)


def volunteers(project, n: int, prefix: str = "v") -> list:
    people = []
    for i in range(n):
        user = UserFactory(username=f"{prefix}{i}")
        MembershipFactory(project=project, user=user)
        people.append(user)
    return people


def hand_out(item: Item, volunteer) -> Reservation:
    """Reserve `item` for `volunteer` as "next item" does, for tests that pick their own item."""
    expires_at = timezone.now() + timedelta(minutes=item.project.reservation_minutes)
    reservation, _ = Reservation.objects.update_or_create(
        item=item, volunteer=volunteer, defaults={"expires_at": expires_at}
    )
    return reservation


def label(item: Item, volunteer, code: str = "C.1", summary: str = "loss is NaN", version=None):
    """`volunteer` labels `item` the way the pages do: handed out first (unless it is an edit of
    their own label), then submitted."""
    if not Annotation.objects.filter(item=item, volunteer=volunteer).exists():
        hand_out(item, volunteer)
    return annotation_submit(
        item=item,
        volunteer=volunteer,
        node=node(item.project, code),
        summary=summary,
        version=version,
    )
