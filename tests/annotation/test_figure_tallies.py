"""The agreement figures' tallies (annotation.figures.tallies) on PostgreSQL: labels and final
labels given through the services keep them up to date without a rebuild, any other write of
labels marks them stale, and in every case the figures read equal those computed from the
labels at that moment."""

from __future__ import annotations

import random
import threading

import numpy as np
import pytest
from django.db import connection

from annotation.figures import tallies
from annotation.figures.tallies import computed_tallies, project_figures
from annotation.models import Annotation, FigureState, FigureTally, Item, Stage
from annotation.projects.importers import study_labels_import_bytes
from annotation.reporting.agreement import project_agreement
from annotation.review.services import item_reopen, item_resolve
from taxonomy.selectors import taxonomy_lineage
from tests.annotation.labeling_helpers import label
from tests.annotation.lead_helpers import node, open_item, trio_fixture  # noqa: F401
from tests.conftest import needs_postgres


@pytest.fixture(autouse=True)
def _postgres():
    needs_postgres(connection)  # the tallies are kept on PostgreSQL only


CODES = ["C.1", "C.2", "A.3", "B.1", "B.2", "A.1"]


def assert_figures_are_the_labels(project):
    """What a read gives equals the tallies computed from the labels now, key by key."""
    kept = project_figures(project).tallies
    fresh = computed_tallies(project, taxonomy_lineage(project.taxonomy))
    assert kept.keys() == fresh.keys()
    for key, tally in fresh.items():
        got = kept[key]
        order = np.argsort(got.ratings)
        assert got.ratings[order].tolist() == tally.ratings.tolist(), key
        assert got.items[order].tolist() == tally.items.tolist(), key
        assert got.totals[order].tolist() == tally.totals.tolist(), key
        assert got.squares[order].tolist() == tally.squares.tolist(), key


def state(project) -> tuple[int, int | None]:
    row = FigureState.objects.get(project=project)
    return row.generation, row.built


def test_labels_and_final_labels_keep_the_tallies_without_a_rebuild(project, personas, trio):
    lead = personas["lead"]
    items = [open_item(project, owner="vllm-project", repo=f"vllm{i % 2}") for i in range(8)]
    project_figures(project)  # the first read builds them
    built = state(project)
    rng = random.Random(31)
    for item in items:
        for volunteer in trio:
            label(item, volunteer, rng.choice(CODES))
    disputed = Item.objects.filter(project=project, stage=Stage.DISPUTED).order_by("pk")
    assert disputed.exists(), "the random labels should leave some items disputed"
    for item in disputed[:3]:
        item_resolve(item=item, lead=lead, node=node(project, "B.2"), reason="a lead's call")
    final = Item.objects.filter(project=project, stage=Stage.FINAL).order_by("pk").first()
    item_reopen(item=final, lead=lead, reason="look again")

    assert state(project) == built, "no write went around the tallies"
    assert FigureTally.objects.filter(project=project).count() > 1  # rows added, not rebuilt
    assert_figures_are_the_labels(project)
    assert state(project) == built


def test_an_edit_moves_the_item_between_categories(project, personas, trio):
    first, second = open_item(project), open_item(project)
    for item in (first, second):  # two labels of k: still open to edits
        for volunteer, code in zip(trio, ["C.1", "C.2"], strict=False):
            label(item, volunteer, code)
    before = project_agreement(project, level="theme", by="none").groups[0]
    mine = Annotation.objects.get(item=first, volunteer=trio[1])
    label(first, trio[1], "C.1", version=mine.version)
    after = project_agreement(project, level="theme", by="none").groups[0]
    assert (before.alpha_value, after.alpha_value) == (pytest.approx(-0.5), pytest.approx(0.0))
    assert_figures_are_the_labels(project)


def test_a_write_around_the_services_marks_them_stale_and_the_next_read_is_right(
    project, personas, trio
):
    item = open_item(project)
    for volunteer, code in zip(trio, ["C.1", "C.2", "C.2"], strict=True):
        label(item, volunteer, code)
    project_figures(project)
    generation, built = state(project)
    assert generation == built

    Annotation.objects.filter(item=item).update(node=node(project, "A.3"))  # a bulk update

    assert state(project)[0] == generation + 1  # the trigger marked them stale
    assert_figures_are_the_labels(project)
    assert state(project) == (generation + 1, generation + 1)  # rebuilt by the read


def test_an_import_marks_them_stale_once_and_the_next_read_counts_it(project, personas, trio):
    item = open_item(project, owner="vllm-project", repo="vllm")
    for volunteer, code in zip(trio, ["C.1", "C.2", "C.2"], strict=True):
        label(item, volunteer, code)
    project_figures(project)
    generation, _built = state(project)
    rows = "\n".join(
        f"https://github.com/pytorch/pytorch/issues/{n},C.1,{code},C.1,"
        for n, code in ((1, "C.1"), (2, "A.3"), (3, "B.1"))
    )
    study_labels_import_bytes(
        project=project,
        actor=personas["admin"],
        data=f"Issue_URL,Label1,Label2,Label3,Final_Label\n{rows}\n".encode(),
        name="week1.csv",
    )

    assert state(project)[0] == generation + 1  # once, for the whole file
    assert_figures_are_the_labels(project)
    # the trigger's pass is the import's only: a write after it, in the same transaction,
    # marks them stale again
    Annotation.objects.filter(item=item).update(node=node(project, "A.3"))
    assert state(project)[0] == generation + 2


def test_a_changed_tree_rebuilds_them(project, personas, trio):
    item = open_item(project)
    for volunteer, code in zip(trio, ["C.1", "C.1", "C.2"], strict=True):
        label(item, volunteer, code)
    project_figures(project)
    rows = FigureTally.objects.filter(project=project).count()
    theme = node(project, "C.1")
    theme.parent = node(project, "B")  # the tree changes under the labels
    theme.save(update_fields=["parent"])

    assert_figures_are_the_labels(project)  # rolled up by today's tree
    assert FigureTally.objects.filter(project=project).count() <= rows


def test_rows_are_summed_into_one_and_the_figures_stay(project, personas, trio, monkeypatch):
    monkeypatch.setattr(tallies, "COMPACT_AFTER_ROWS", 3)
    project_figures(project)
    for item in (open_item(project), open_item(project)):
        for volunteer, code in zip(trio, ["C.1", "C.2", "C.2"], strict=True):
            label(item, volunteer, code)
    assert FigureTally.objects.filter(project=project).count() == 7  # the build, six labels

    assert tallies.figures_compact() == [project.pk]

    assert FigureTally.objects.filter(project=project).count() == 1
    assert_figures_are_the_labels(project)


@pytest.mark.django_db(transaction=True)
def test_labels_given_at_once_while_reads_rebuild_all_count(study_taxonomy):
    """Three volunteers label the same items at once, each in a thread of their own (their own
    connection), while a fourth keeps throwing the tallies away and reading (a rebuild in its
    own snapshot, beside the labels' rows): at the end the figures are the labels."""
    from tests.conftest import make_personas, make_project
    from tests.factories import MembershipFactory, UserFactory

    project = make_project(study_taxonomy)
    make_personas(project)
    people = [UserFactory(username=f"v{i}") for i in range(3)]
    for person in people:
        MembershipFactory(project=project, user=person)
    items = [open_item(project, repo=f"r{i % 3}") for i in range(12)]
    project_figures(project)
    done = threading.Event()
    failures: list[BaseException] = []
    rebuilds = []

    def volunteer(person, seed):
        try:
            rng = random.Random(seed)
            for item in items:
                label(item, person, rng.choice(CODES))
        except BaseException as exc:
            failures.append(exc)
        finally:
            connection.close()

    def reader():
        try:
            while not done.is_set():
                FigureState.objects.filter(project=project).delete()
                project_figures(project)
                rebuilds.append(1)
        except BaseException as exc:
            failures.append(exc)
        finally:
            connection.close()

    threads = [threading.Thread(target=volunteer, args=(p, i)) for i, p in enumerate(people)]
    rebuilding = threading.Thread(target=reader)
    rebuilding.start()
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    done.set()
    rebuilding.join()
    assert failures == []
    assert len(rebuilds) >= 2, "the reads should have rebuilt while the labels came in"
    assert Annotation.objects.filter(item__project=project).count() == 36
    assert_figures_are_the_labels(project)
