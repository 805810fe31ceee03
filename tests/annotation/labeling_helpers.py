"""Small builders shared by the labeling, assignment and screening tests."""

from __future__ import annotations

from annotation.models import Item, Stage
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
