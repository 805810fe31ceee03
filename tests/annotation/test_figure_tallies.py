"""The agreement figures' tallies (annotation.figures.tallies) on PostgreSQL: labels and final
labels given through the services keep them up to date without a rebuild, any other write of
labels marks them stale, and in every case the figures read equal those computed from the
labels at that moment."""

from __future__ import annotations

import random

import numpy as np
import pytest
from django.db import connection

from annotation.figures.tallies import computed_tallies, project_figures
from annotation.models import Annotation, FigureState, FigureTally, Item, Stage
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
