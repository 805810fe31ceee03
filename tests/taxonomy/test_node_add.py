"""node_add: the next free code under a parent in the study's scheme (types A, B, C...; themes
C.7; sub-themes C.1.iv), at every level, never reusing, renumbering or deleting a code."""

import pytest
from django.utils import timezone

from concord.errors import ConcordError
from taxonomy.models import Level, Taxonomy
from taxonomy.services import (
    letters_from_int,
    letters_to_int,
    node_add,
    roman_from_int,
    roman_to_int,
)


def codes(taxonomy):
    return dict(taxonomy.nodes.values_list("code", "name"))


def test_a_new_type_takes_the_next_letter(study_taxonomy):
    before = codes(study_taxonomy)
    new = node_add(taxonomy=study_taxonomy, parent=None, name="Security", definition="Threats")
    assert (new.code, new.level, new.parent, new.definition) == ("D", Level.TYPE, None, "Threats")
    after = codes(study_taxonomy)
    del after["D"]
    assert after == before  # nothing else renamed, renumbered or deleted


def test_a_new_theme_takes_the_next_number(study_taxonomy):
    bug = study_taxonomy.nodes.get(code="C")
    themes = sorted(int(c.split(".")[1]) for c in bug.children.values_list("code", flat=True))
    new = node_add(taxonomy=study_taxonomy, parent=bug, name="Tokenizer faults")
    assert new.code == f"C.{themes[-1] + 1}"
    assert new.level == Level.THEME


def test_a_new_subtheme_takes_the_next_roman_numeral(study_taxonomy):
    theme = study_taxonomy.nodes.get(code="A.3")  # has i, ii, iii
    new = node_add(taxonomy=study_taxonomy, parent=theme, name="Silent fallbacks")
    assert new.code == "A.3.iv"
    assert new.level == Level.SUBTHEME
    again = node_add(taxonomy=study_taxonomy, parent=theme, name="Another")
    assert again.code == "A.3.v"


def test_a_retired_code_is_never_reused(study_taxonomy):
    theme = study_taxonomy.nodes.get(code="A.1")  # i, ii
    last = study_taxonomy.nodes.get(code="A.1.ii")
    last.retired_at = timezone.now()
    last.save()
    assert node_add(taxonomy=study_taxonomy, parent=theme, name="x").code == "A.1.iii"
    assert study_taxonomy.nodes.get(code="A.1.ii").name == last.name


def test_a_new_node_sits_after_its_siblings_in_the_tree(study_taxonomy):
    from taxonomy.selectors import taxonomy_tree

    theme = study_taxonomy.nodes.get(code="A.1")
    node_add(taxonomy=study_taxonomy, parent=theme, name="Late addition")
    tree = {t.node.code: t for t in taxonomy_tree(study_taxonomy)}
    a1 = next(c for c in tree["A"].children if c.node.code == "A.1")
    assert [c.node.code for c in a1.children] == ["A.1.i", "A.1.ii", "A.1.iii"]


def test_first_children_and_an_empty_taxonomy(db):
    taxonomy = Taxonomy.objects.create(name="Fresh", version="1")
    a = node_add(taxonomy=taxonomy, parent=None, name="Question")
    a1 = node_add(taxonomy=taxonomy, parent=a, name="Install")
    a1i = node_add(taxonomy=taxonomy, parent=a1, name="Drivers")
    assert [a.code, a1.code, a1i.code] == ["A", "A.1", "A.1.i"]


def test_refusals(study_taxonomy):
    subtheme = study_taxonomy.nodes.get(code="C.1.i")
    with pytest.raises(ConcordError, match="deepest level"):
        node_add(taxonomy=study_taxonomy, parent=subtheme, name="too deep")
    with pytest.raises(ConcordError, match="needs a name"):
        node_add(taxonomy=study_taxonomy, parent=None, name="  ")
    other = Taxonomy.objects.create(name="Other", version="1")
    with pytest.raises(ConcordError, match="another taxonomy"):
        node_add(taxonomy=other, parent=study_taxonomy.nodes.get(code="C"), name="x")


@pytest.mark.parametrize(
    ("n", "roman"), [(1, "i"), (4, "iv"), (9, "ix"), (14, "xiv"), (40, "xl"), (1994, "mcmxciv")]
)
def test_roman_numerals_round_trip(n, roman):
    assert roman_from_int(n) == roman
    assert roman_to_int(roman) == n


def test_type_letters_go_on_past_z():
    assert [letters_from_int(n) for n in (1, 3, 26, 27, 28)] == ["A", "C", "Z", "AA", "AB"]
    assert letters_to_int("AB") == 28
    assert roman_to_int("iiii") is None
    assert letters_to_int("a") is None
