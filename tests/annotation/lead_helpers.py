"""Builders shared by the lead tests: items with blind labels, pushed through cross-check."""

from __future__ import annotations

from collections.abc import Sequence

import pytest

from annotation.lifecycle import item_settle
from annotation.models import Annotation, Item, Role, Stage
from taxonomy.models import Node
from tests.factories import IssueFactory, MembershipFactory, UserFactory


def node(project, code: str) -> Node:
    return project.taxonomy.nodes.get(code=code)


def labeled_item(
    project,
    volunteers: Sequence,
    codes: Sequence[str],
    *,
    cross_check: bool = True,
    owner: str = "NVIDIA",
    repo: str = "Megatron-LM",
    seconds: Sequence[int | None] | None = None,
    title: str = "Loss spikes with bf16",
) -> Item:
    """An item labelled `codes[i]` by `volunteers[i]`; with `cross_check` it then goes through
    lifecycle.item_settle (unanimous -> final, else disputed), as the k-th label does."""
    issue = IssueFactory(owner=owner, repo=repo, title=title)
    item = Item.objects.create(
        project=project, issue=issue, stage=Stage.LABELING, label_count=len(codes)
    )
    for i, (volunteer, code) in enumerate(zip(volunteers, codes, strict=True)):
        Annotation.objects.create(
            item=item,
            volunteer=volunteer,
            node=node(project, code),
            summary=f"summary by {volunteer.username}",
            seconds_spent=seconds[i] if seconds else None,
        )
    if cross_check:
        item_settle(item=item)
    item.refresh_from_db()
    return item


def open_item(project, **issue) -> Item:
    return Item.objects.create(project=project, issue=IssueFactory(**issue), stage=Stage.OPEN)


@pytest.fixture(name="trio")
def trio_fixture(personas, project):
    """Three volunteers of `project` (volunteer_a, volunteer_b and a new volunteer_c)."""
    volunteer_c = UserFactory(username="volunteer_c")
    MembershipFactory(project=project, user=volunteer_c, role=Role.VOLUNTEER)
    return [personas["volunteer_a"], personas["volunteer_b"], volunteer_c]
