"""The agreement maths, against published worked examples and against statsmodels."""

import math

import numpy as np
import pytest
from statsmodels.stats.inter_rater import aggregate_raters
from statsmodels.stats.inter_rater import fleiss_kappa as statsmodels_fleiss_kappa

from taxonomy import agreement

# Fleiss' kappa worked example: 10 subjects, 14 raters, 5 categories. Published in the Wikipedia
# article "Fleiss' kappa" (section "Worked example"), which gives P-bar = 0.378, P-bar_e = 0.213,
# kappa = 0.210 and category shares p_j = 0.143, 0.200, 0.279, 0.150, 0.229.
WIKIPEDIA_TABLE = [
    [0, 0, 0, 0, 14],
    [0, 2, 6, 4, 2],
    [0, 0, 3, 5, 6],
    [0, 3, 9, 2, 0],
    [2, 2, 8, 1, 1],
    [7, 7, 0, 0, 0],
    [3, 2, 6, 3, 0],
    [2, 5, 3, 2, 2],
    [6, 5, 2, 1, 0],
    [0, 2, 2, 3, 7],
]

# Krippendorff (2011), "Computing Krippendorff's Alpha-Reliability", example C: 4 observers,
# 12 units, values 1..5, missing ratings; nominal alpha = 0.743. Unit 12 has a single rating.
KRIPPENDORFF_2011 = [
    [1, 2, 3, 3, 2, 1, 4, 1, 2, None, None, None],
    [1, 2, 3, 3, 2, 2, 4, 1, 2, 5, None, 3],
    [None, 3, 3, 3, 2, 3, 4, 2, 2, 5, 1, None],
    [1, 2, 3, 3, 2, 4, 4, 1, 2, 5, 1, None],
]


def matrix_from_table(table):
    rows = [(i, f"c{j}", n) for i, counts in enumerate(table) for j, n in enumerate(counts)]
    return agreement.rating_matrix(rows, categories=[f"c{j}" for j in range(len(table[0]))])


def matrix_from_raters(by_rater):
    rows = [
        (unit, str(value), 1)
        for ratings in by_rater
        for unit, value in enumerate(ratings)
        if value is not None
    ]
    return agreement.rating_matrix(rows)


def test_fleiss_matches_the_published_worked_example():
    result = agreement.fleiss_kappa(matrix_from_table(WIKIPEDIA_TABLE))
    assert result.kappa == pytest.approx(0.210, abs=5e-4)
    assert result.observed == pytest.approx(0.378, abs=5e-4)
    assert result.expected == pytest.approx(0.213, abs=5e-4)
    assert (result.n_items, result.n_raters) == (10, 14)
    assert result.band == "fair"


def test_fleiss_confidence_interval_is_symmetric_and_covers_kappa():
    result = agreement.fleiss_kappa(matrix_from_table(WIKIPEDIA_TABLE))
    assert result.se > 0
    assert result.ci_low < result.kappa < result.ci_high
    assert result.kappa - result.ci_low == pytest.approx(result.ci_high - result.kappa)
    assert result.ci_high - result.ci_low == pytest.approx(2 * 1.96 * result.se, rel=1e-3)


def test_per_category_kappa_follows_fleiss_definition():
    table = np.array(WIKIPEDIA_TABLE)
    n, m = table.shape[0], table[0].sum()
    result = agreement.fleiss_kappa(matrix_from_table(WIKIPEDIA_TABLE))
    for j in range(table.shape[1]):
        p = table[:, j].sum() / (n * m)
        expected = 1 - (table[:, j] * (m - table[:, j])).sum() / (n * m * (m - 1) * p * (1 - p))
        assert result.per_category[f"c{j}"] == pytest.approx(expected)


@pytest.mark.parametrize("seed", range(3))
def test_tallies_of_a_sparse_matrix_are_the_sums_of_its_groups_rows(seed):
    rng = np.random.default_rng(seed)
    counts = rng.integers(0, 4, size=(301, 5))  # uneven ratings per item, some items unrated
    group = rng.integers(-1, 3, size=301)  # three groups, some items in none
    rows, columns = np.nonzero(counts)
    categories = list("abcde")
    tallies = agreement.tallies_of_pairs(rows, columns, counts[rows, columns], group, 3, categories)
    per_item = counts.sum(axis=1)
    for g, tally in enumerate(tallies):
        mine = (group == g) & (per_item > 0)
        assert tally.ratings.tolist() == sorted(set(per_item[mine].tolist()))
        for r, m in enumerate(tally.ratings.tolist()):
            block = counts[mine & (per_item == m)]
            assert tally.items[r] == len(block)
            assert tally.totals[r].tolist() == block.sum(axis=0).tolist()
            assert tally.squares[r].tolist() == (block**2).sum(axis=0).tolist()


@pytest.mark.parametrize("seed", range(5))
def test_fleiss_agrees_with_statsmodels_on_random_ratings(seed):
    rng = np.random.default_rng(seed)
    ratings = rng.integers(0, 6, size=(200, 7))  # 200 items, 7 raters, 6 categories
    table, _ = aggregate_raters(ratings, n_cat=6)
    ours = agreement.fleiss_kappa(matrix_from_table(table.tolist()))
    assert ours.kappa == pytest.approx(statsmodels_fleiss_kappa(table, method="fleiss"))
    assert 1 - (1 - ours.observed) / (1 - ours.expected) == pytest.approx(ours.kappa)


def test_perfect_agreement_is_kappa_one():
    result = agreement.fleiss_kappa(matrix_from_table([[3, 0], [0, 3], [3, 0]]))
    assert result.kappa == pytest.approx(1.0)
    assert result.band == "almost perfect"


def test_unequal_ratings_is_a_clear_error_that_offers_alpha():
    m = matrix_from_table([[3, 0], [1, 1], [0, 3]])
    with pytest.raises(agreement.UnequalRatings) as caught:
        agreement.fleiss_kappa(m)
    message = str(caught.value)
    assert "2 items have 3" in message
    assert "1 items have 2" in message
    assert "Krippendorff's alpha" in message


def test_single_item_or_single_rater_is_not_enough():
    with pytest.raises(agreement.NotEnoughRatings):
        agreement.fleiss_kappa(matrix_from_table([[2, 1]]))
    with pytest.raises(agreement.NotEnoughRatings):
        agreement.fleiss_kappa(matrix_from_table([[1, 0], [0, 1]]))


def test_krippendorff_alpha_matches_the_published_example():
    result = agreement.krippendorff_alpha(matrix_from_raters(KRIPPENDORFF_2011))
    assert result.alpha == pytest.approx(0.743, abs=5e-4)
    assert result.items_left_out == 1  # unit 12 was rated once
    assert result.n_items == 11


def test_roll_up_maps_labels_to_coarser_levels_and_drops_coarser_labels():
    lineage = {"C.1.iii": ("C", "C.1", "C.1.iii"), "C.1": ("C", "C.1"), "B": ("B",)}
    assert agreement.roll_up("C.1.iii", lineage, 1) == "C"
    assert agreement.roll_up("C.1.iii", lineage, 2) == "C.1"
    assert agreement.roll_up("C.1", lineage, 3) is None
    assert agreement.roll_up(None, lineage, 1) is None


def test_rating_matrix_pivots_long_rows_and_ignores_missing():
    m = agreement.rating_matrix(
        [(1, "A", 2), (1, "B", 1), (2, "B", 3), (3, None, 3)], categories=["A", "B", "C"]
    )
    assert m.items == (1, 2)
    assert m.counts.tolist() == [[2, 1, 0], [0, 3, 0]]


def test_rating_matrix_rejects_unknown_categories():
    with pytest.raises(ValueError, match="outside the list"):
        agreement.rating_matrix([(1, "Z", 1)], categories=["A"])


def test_split_by_group_keeps_each_items_row():
    m = agreement.rating_matrix([(1, "A", 3), (2, "B", 3), (3, "A", 3)])
    groups = agreement.split_by_group(m, {1: "x", 2: "y", 3: "x"})
    assert groups["x"].items == (1, 3)
    assert groups["y"].counts.tolist() == [[0, 3]]


@pytest.mark.parametrize(
    ("value", "band"),
    [
        (-0.1, "poor"),
        (0.1, "slight"),
        (0.3, "fair"),
        (0.5, "moderate"),
        (0.7, "substantial"),
        (0.9, "almost perfect"),
        (math.nan, "undefined"),
    ],
)
def test_landis_koch_bands(value, band):
    assert agreement.landis_koch_band(value) == band


def test_agreement_module_does_not_import_django():
    import ast
    import inspect

    tree = ast.parse(inspect.getsource(agreement))
    imported = {
        alias.name.split(".")[0]
        for node in ast.walk(tree)
        if isinstance(node, ast.Import | ast.ImportFrom)
        for alias in (
            node.names if isinstance(node, ast.Import) else [ast.alias(node.module or "")]
        )
    }
    assert "django" not in imported


def test_one_category_everywhere_is_undefined_not_nan():
    m = matrix_from_table([[3, 0], [3, 0], [3, 0]])
    with pytest.raises(agreement.NoVariation, match="Every rating is 'c0'"):
        agreement.fleiss_kappa(m)
    with pytest.raises(agreement.NoVariation):
        agreement.krippendorff_alpha(m)
