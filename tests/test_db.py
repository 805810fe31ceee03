"""concord.db: helpers every feature's bulk writes share."""

from __future__ import annotations

import pytest
from django.db import connection, transaction

from annotation.models import Item
from concord.db import (
    refresh_planner_statistics,
    refresh_planner_statistics_as_it_grows,
    refresh_planner_statistics_on_commit,
)
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


def _pages(model) -> tuple[int, int]:
    """The table's pages on disk now, and as its statistics last counted them."""
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT pg_relation_size(oid) / current_setting('block_size')::int, relpages"
            " FROM pg_class WHERE oid = %s::regclass",
            [model._meta.db_table],
        )
        return cursor.fetchone()


def _grow(start: int, count: int) -> int:
    Issue.objects.bulk_create(
        Issue(host="github", owner="grow", repo="r", number=str(n), url=f"https://x/{n}")
        for n in range(start, start + count)
    )
    return start + count


@pytest.mark.skipif(connection.vendor != "postgresql", reason="ANALYZE is PostgreSQL's")
def test_a_table_is_analyzed_as_it_grows_once_it_has_doubled_since_its_statistics():
    """A file written a chunk at a time in one transaction: the tables are analyzed when they
    have doubled on disk since their statistics, not after every file's first chunk."""
    # Earlier tests' rolled-back rows stay on disk (autovacuum is off on the test machines):
    # from an empty table (rolled back with the test), doubling it takes thousands of rows, not
    # as many as those (45 s in one suite run).
    with connection.cursor() as cursor:
        cursor.execute(f"TRUNCATE {Issue._meta.db_table} CASCADE")
    refresh_planner_statistics(Issue)
    refresh_planner_statistics(Item)
    assert refresh_planner_statistics_as_it_grows(Issue, Item) == []  # nothing grew since

    n = _grow(0, 2000)
    while _pages(Issue)[0] < 2 * max(_pages(Issue)[1], 1):
        n = _grow(n, 2000)
    assert refresh_planner_statistics_as_it_grows(Issue, Item) == ["ingest_issue"]
    now, counted = _pages(Issue)
    assert counted == now  # the statistics count the transaction's own rows

    _grow(n, 200)  # far less than doubling it again
    assert refresh_planner_statistics_as_it_grows(Issue) == []


def test_any_of_finds_exactly_the_values_given_across_relations_and_none_for_none(project):
    _grow(0, 5)
    issues = list(Issue.objects.filter(owner="grow").order_by("pk"))
    items = Item.objects.bulk_create(Item(project=project, issue=issue) for issue in issues)
    wanted = [issue.pk for issue in issues[1:4]]
    assert sorted(Issue.objects.filter(pk__any_of=wanted).values_list("pk", flat=True)) == wanted
    by_key = Item.objects.filter(issue_id__any_of=wanted)  # a foreign key's own column
    assert sorted(by_key.values_list("pk", flat=True)) == [item.pk for item in items[1:4]]
    urls = {"https://x/0", "https://x/4", "https://x/nowhere"}  # a set, one value unknown
    across = Item.objects.filter(issue__url__any_of=urls)  # through the relation
    assert sorted(across.values_list("issue__number", flat=True)) == ["0", "4"]
    assert list(Issue.objects.filter(pk__any_of=[])) == []


@pytest.mark.skipif(connection.vendor != "postgresql", reason="the plan is PostgreSQL's")
def test_any_of_is_planned_as_one_scan_however_stale_the_statistics():
    """An import looks up each chunk's rows by id after its statistics were taken without them:
    the lookup must not become a join that compares every row with every value (IN (SELECT
    unnest(...)) did, 15 s for a 15,000-id chunk)."""
    _grow(0, 300)
    refresh_planner_statistics(Issue)  # the statistics know "grow" only
    Issue.objects.bulk_create(
        Issue(host="github", owner="new", repo="r", number=str(n), url=f"https://y/{n}")
        for n in range(3000)
    )
    ids = list(Issue.objects.filter(owner="new").values_list("pk", flat=True))
    chunk = Issue.objects.filter(owner="new", pk__any_of=ids).values_list("pk", flat=True)
    plan = chunk.explain()
    assert "Loop" not in plan
    assert "ANY" in plan
    assert sorted(chunk) == sorted(ids)


@pytest.mark.skipif(connection.vendor != "postgresql", reason="the array's type is PostgreSQL's")
def test_any_of_sends_the_array_as_the_columns_type_and_compares_whole_values():
    """`bigint = ANY(integer[])` is read value by value for each row, not hashed (1.4 s against
    48 ms for 15,000 ids): the ids go as a bigint[]. Text goes as text[], not as the column's
    varchar(300)[], whose cast would cut a longer value down to one that matches."""
    assert "::bigint[]" in Item.objects.filter(issue_id__any_of=[1, 2]).explain(verbose=True)
    stored = Issue.objects.create(
        host="github", owner="o", repo="r", number="1", url="https://x/" + "a" * 290
    )
    longer = stored.url + "tail"
    assert len(stored.url) == 300
    assert list(Issue.objects.filter(url__any_of=[longer])) == []
    assert list(Issue.objects.filter(url__any_of=[stored.url])) == [stored]
