"""concord.db: helpers every feature's bulk writes share."""

from __future__ import annotations

import pytest
from django.db import connection, transaction

from annotation.models import Item
from concord.db import refresh_planner_statistics_on_commit
from ingest.models import Issue

pytestmark = pytest.mark.django_db


def test_a_table_is_analyzed_once_per_transaction_however_often_asked(
    django_capture_on_commit_callbacks,
):
    """An item import adds its items a chunk at a time in one transaction: one ANALYZE after
    the commit, not one per chunk."""
    with django_capture_on_commit_callbacks() as queued:
        for _ in range(3):
            refresh_planner_statistics_on_commit(Item)
        refresh_planner_statistics_on_commit(Issue)
    assert sorted(c.once_key[1].__name__ for c in queued) == ["Issue", "Item"]


def test_a_rolled_back_request_does_not_stop_the_next_from_being_queued(
    django_capture_on_commit_callbacks,
):
    with transaction.atomic():
        refresh_planner_statistics_on_commit(Item)
        transaction.set_rollback(True)
    assert not [e for e in connection.run_on_commit if getattr(e[1], "once_key", None)]
    with django_capture_on_commit_callbacks() as queued:
        refresh_planner_statistics_on_commit(Item)
    assert len(queued) == 1
