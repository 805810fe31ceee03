"""concord.prepared: a query compiled once answers every later call as the QuerySet would."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.db import DatabaseError, connection
from django.db.models import Count, IntegerField, Value
from django.utils import timezone

from annotation.models import Item, Membership, Project
from concord.prepared import PreparedQuery
from tests.annotation.labeling_helpers import items as make_items
from tests.conftest import needs_postgres
from tests.factories import ProjectFactory

pytestmark = pytest.mark.django_db


def projects_with(slug: str, floor: int):
    return (
        Project.objects.select_related("taxonomy")
        .filter(slug=slug, overlap_k__gte=floor)
        .annotate(members=Count("memberships"), asked=Value(floor, output_field=IntegerField()))
    )


def test_instances_carry_fields_related_objects_and_annotations(study_taxonomy, personas):
    needs_postgres(connection)
    query = PreparedQuery(projects_with)
    ProjectFactory(taxonomy=study_taxonomy, slug="second", overlap_k=5)
    for slug, floor in [("demo", 1), ("second", 2), ("second", 9), ("nowhere", 1)]:
        expected = list(projects_with(slug, floor))
        got = query.run(slug=slug, floor=floor)
        assert [p.pk for p in got] == [p.pk for p in expected]
        for mine, theirs in zip(got, expected, strict=True):
            assert mine.name == theirs.name
            assert mine.members == theirs.members
            assert mine.asked == floor
            with django_queries() as seen:
                assert mine.taxonomy.name == theirs.taxonomy.name  # came with the row
            assert seen == []


def test_one_statement_bound_anew_for_each_call(project, personas):
    needs_postgres(connection)
    query = PreparedQuery(
        lambda project, since: Item.objects.filter(project_id=project, created_at__gte=since)
    )
    now = timezone.now()
    first_sql, first_params = query.statement(project=project.pk, since=now)
    later_sql, later_params = query.statement(project=project.pk + 1, since=now - timedelta(1))
    assert first_sql == later_sql
    assert first_params != later_params
    assert {project.pk, now} <= set(first_params)
    assert {project.pk + 1, now - timedelta(1)} <= set(later_params)


def test_values_lists_and_flat_values(project):
    needs_postgres(connection)
    items = make_items(project, 3)
    pairs = PreparedQuery(
        lambda project: Item.objects.filter(project_id=project)
        .order_by("pk")
        .values_list("pk", "stage")
    )
    flat = PreparedQuery(
        lambda project: Item.objects.filter(project_id=project)
        .order_by("pk")
        .values_list("pk", flat=True)
    )
    assert pairs.run(project=project.pk) == [(i.pk, i.stage) for i in items]
    assert flat.run(project=project.pk) == [i.pk for i in items]
    assert flat.first(project=-1) is None


def test_a_value_of_another_type_is_answered_the_ordinary_way(project, personas):
    """None where an int was compiles to IS NULL: binding it into the int's statement would
    answer wrongly, so that call builds its QuerySet."""
    needs_postgres(connection)
    query = PreparedQuery(
        lambda user: Membership.objects.filter(user_id=user).values_list("role", flat=True)
    )
    assert query.run(user=personas["volunteer_a"].pk) == ["volunteer"]
    assert query.run(user=None) == []


def test_values_a_lookup_transforms_or_a_slice_swallows_are_refused():
    needs_postgres(connection)
    contains = PreparedQuery(lambda name: Project.objects.filter(name__icontains=name))
    with pytest.raises(TypeError, match="transformed"):
        contains.run(name="demo")
    sliced = PreparedQuery(lambda n: Project.objects.order_by("pk")[:n])
    with pytest.raises(TypeError, match="not among the statement's parameters"):
        sliced.run(n=3)
    with pytest.raises(TypeError, match="make a date part of the query's key"):
        PreparedQuery(lambda day: Project.objects.filter(created_at__date=day)).run(
            day=timezone.now().date()
        )


class django_queries:
    """The SQL run inside the block."""

    def __enter__(self) -> list[str]:
        self.seen: list[str] = []
        self.wrapper = connection.execute_wrapper(self._log)
        self.wrapper.__enter__()
        return self.seen

    def __exit__(self, *exc) -> None:
        self.wrapper.__exit__(*exc)

    def _log(self, execute, sql, params, many, context):
        self.seen.append(sql)
        return execute(sql, params, many, context)


def test_saved_writes_what_save_writes(project, personas):
    """An audit row and an item written by `saved` read back as Model.save would leave them:
    JSON values, auto_now times, ids; an update writes the fields named and only those."""
    from annotation.models import Action, AuditEvent
    from concord.prepared import saved

    needs_postgres(connection)
    (item,) = make_items(project, 1)
    event = AuditEvent(
        project=project, item=item, actor=personas["volunteer_a"], action=Action.LABEL,
        after={"node": "C.1", "summary": "训练卡住"},
    )  # fmt: skip
    saved(event)
    stored = AuditEvent.objects.get(pk=event.pk)
    assert stored.after == {"node": "C.1", "summary": "训练卡住"}
    assert stored.before is None
    assert stored.created_at == event.created_at
    assert stored.created_at is not None
    item.label_count, item.agreement = 2, 0.5  # only label_count is saved
    saved(item, update_fields=["label_count"])
    item.refresh_from_db()
    assert (item.label_count, item.agreement) == (2, None)
    gone = type(item)(pk=-1, project=project)
    with pytest.raises(DatabaseError, match="did not affect any rows"):
        saved(gone, update_fields=["label_count"])


def test_ids_beyond_bigint_find_nothing_rather_than_fail(project):
    """A URL may carry any digits: beyond bigint the statement compares and finds nothing, as
    the ORM would, and the connection's transaction stays sound."""
    needs_postgres(connection)
    (item,) = make_items(project, 1)
    query = PreparedQuery(lambda item: Item.objects.filter(pk=item))
    assert query.run(item=item.pk) == [item]
    for huge in (2**63, 10**21, -(2**63) - 1):
        assert query.run(item=huge) == []
    assert query.run(item=item.pk) == [item]  # the connection's transaction is still sound


def test_postgresql_is_sent_the_sql_itself_and_keeps_no_statement(project, personas):
    """No statement is PREPAREd on the server (issue #25): a migration that changes a column's
    type cannot leave kept connections failing, a pooler sharing connections per transaction
    works, and logs and pg_stat_statements show the SQL. The labeling path's own writes and
    reads run as the SQL they are."""
    from concord.prepared import saved

    needs_postgres(connection)
    query = PreparedQuery(
        lambda project, stage: Item.objects.filter(project_id=project, stage=stage).values_list(
            "pk", flat=True
        )
    )
    make_items(project, 2)
    with django_queries() as seen:
        assert len(query.run(project=project.pk, stage="open")) == 2
        (item,) = make_items(project, 1)
        saved(item, update_fields=["label_count"])
    assert len(seen) >= 3  # the read, the item's INSERT, the UPDATE
    assert not [sql for sql in seen if sql.lstrip().upper().startswith(("PREPARE", "EXECUTE"))]
    with connection.cursor() as cursor:
        cursor.execute("SELECT count(*) FROM pg_prepared_statements")
        assert cursor.fetchone()[0] == 0
