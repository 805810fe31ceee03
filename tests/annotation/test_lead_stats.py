"""Per-volunteer statistics on a small example worked out by hand: items done, median seconds,
agreement with the final label, and Cohen's kappa per pair (checked against statsmodels)."""

import numpy as np
import pytest
from statsmodels.stats.inter_rater import cohens_kappa as statsmodels_cohens_kappa

from annotation.models import Method, Resolution, Stage
from annotation.reporting.stats import pairwise_kappa, volunteer_stats
from taxonomy import agreement
from tests.annotation.lead_helpers import labeled_item, node, trio_fixture  # noqa: F401

# Ten items labelled by a and b; c labels the first five. Codes per item:
A = ["C.1"] * 5 + ["C.2"] * 5
B = ["C.1"] * 4 + ["C.2"] + ["C.2"] * 4 + ["C.1"]
C = ["C.1"] * 5
# Finals on items 1-4 and 6-9; item 1 was decided against a, b and c.
FINAL = ["C.2", "C.1", "C.1", "C.1", None, "C.2", "C.2", "C.2", "C.2", None]
A_SECONDS = [10, 20, 30, 40, 50, 60, 70, 80, 90, 100]
B_SECONDS = [5, 7, 9] + [None] * 7


@pytest.fixture
def example(project, personas, trio):
    a, b, c = trio
    for i in range(10):
        people, codes, seconds = [a, b], [A[i], B[i]], [A_SECONDS[i], B_SECONDS[i]]
        if i < 5:
            people, codes, seconds = [*people, c], [*codes, C[i]], [*seconds, None]
        item = labeled_item(project, people, codes, cross_check=False, seconds=seconds)
        if FINAL[i]:
            Resolution.objects.create(item=item, node=node(project, FINAL[i]), method=Method.LEAD)
            project.items.filter(pk=item.pk).update(stage=Stage.FINAL)
    return trio


def test_numbers_per_volunteer(project, example):
    rows = {s.name: s for s in volunteer_stats(project)}
    assert [(s.items_done, s.median_seconds, s.on_final, s.agree_final) for s in rows.values()] == [
        (10, 55.0, 8, 7),  # volunteer_a: 7 of 8 finals (item 1 went the other way)
        (10, 7.0, 8, 7),  # volunteer_b: item 1 wrong, items 2-4 and 6-9 right
        (5, None, 4, 3),  # volunteer_c: items 1-4 are final, 2-4 agree
    ]
    assert rows["volunteer_a"].agreement_with_final == pytest.approx(7 / 8)
    assert rows["volunteer_c"].agreement_with_final == pytest.approx(3 / 4)


def test_a_volunteer_gets_only_their_row(project, example):
    a = example[0]
    assert [s.name for s in volunteer_stats(project, user=a)] == ["volunteer_a"]


def test_pairwise_kappa_by_hand_and_statsmodels(project, example):
    rows = volunteer_stats(project)
    matrix = pairwise_kappa(project, rows)
    # a x b: table [[4, 1], [1, 4]]: observed 0.8, chance 0.5, kappa 0.6
    assert matrix.kappa[0][1] == pytest.approx(0.6)
    assert matrix.kappa[0][1] == pytest.approx(
        statsmodels_cohens_kappa(np.array([[4, 1], [1, 4]]), return_results=False)
    )
    assert matrix.kappa[1][0] == matrix.kappa[0][1]
    # c shares only 5 items with each: below the minimum, no kappa
    assert matrix.shared[0][2] == 5
    assert matrix.kappa[0][2] is None
    assert matrix.kappa[0][0] is None
    assert matrix.shared[0][0] == 10
    # with a lower minimum: a and c always agree on C.1, so chance agreement is 1 and kappa is
    # undefined; b x c has table [[4, 0], [1, 0]]: observed 0.8 = chance 0.8, kappa 0
    low = pairwise_kappa(project, rows, min_shared=2)
    assert low.kappa[0][2] is None
    assert low.kappa[1][2] == pytest.approx(0.0)
    assert low.kappa[1][2] == pytest.approx(agreement.cohens_kappa(B[:5], C))


def test_cohens_kappa_helper_matches_statsmodels():
    rng = np.random.default_rng(7)
    a = rng.integers(0, 4, 200)
    b = np.where(rng.random(200) < 0.6, a, rng.integers(0, 4, 200))
    table = np.zeros((4, 4), dtype=int)
    np.add.at(table, (a, b), 1)
    expected = statsmodels_cohens_kappa(table, return_results=False)
    assert agreement.cohens_kappa(a, b) == pytest.approx(expected)
    with pytest.raises(agreement.NoVariation):
        agreement.cohens_kappa(["C.1"] * 3, ["C.1"] * 3)
    with pytest.raises(agreement.NotEnoughRatings):
        agreement.cohens_kappa(["C.1"], ["C.2"])


def test_stats_page_per_role(client, project, personas, example, django_assert_max_num_queries):
    url = f"/projects/{project.slug}/stats/"
    client.force_login(personas["lead"])
    with django_assert_max_num_queries(12):
        page = client.get(url).content.decode()
    assert 'class="kappa-heatmap"' in page
    assert ">0.60<" in page  # the value printed in the cell
    assert "volunteer_b" in page
    client.force_login(example[2])
    own = client.get(url).content.decode()
    assert "Your statistics" in own
    assert "volunteer_c" in own
    assert "volunteer_a" not in own
    assert "kappa-heatmap" not in own


def test_stats_api_per_role(client, project, personas, example):
    url = f"/api/projects/{project.slug}/stats/"
    client.force_login(personas["admin"])
    body = client.get(url).json()
    assert [v["name"] for v in body["volunteers"]] == ["volunteer_a", "volunteer_b", "volunteer_c"]
    assert body["kappa"]["kappa"][0][1] == pytest.approx(0.6)
    client.force_login(example[1])
    mine = client.get(url).json()
    assert [v["name"] for v in mine["volunteers"]] == ["volunteer_b"]
    assert mine["kappa"] is None
