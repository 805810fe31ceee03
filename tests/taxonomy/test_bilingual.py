"""The taxonomy in both languages (issue #26): Chinese names and definitions beside the English,
loaded from a translations file by code, shown in the Chinese interface with the English name
beside, searched in both languages, and never in the exports."""

from __future__ import annotations

import csv

import pytest
from django.conf import settings
from django.utils import translation

from concord.errors import RowError
from taxonomy.loaders import taxonomy_load
from taxonomy.models import Node

pytestmark = pytest.mark.django_db
STUDY_TAXONOMY = settings.STUDY_DATA_DIR / "taxonomy.csv"


def test_every_node_of_the_study_taxonomy_has_a_chinese_name_and_definition(study_taxonomy):
    nodes = list(study_taxonomy.nodes.all())
    assert len(nodes) == 91  # 3 types, 18 themes, 70 sub-themes
    assert [n.code for n in nodes if not (n.name_zh and n.definition_zh)] == []
    # the study's English stays as published
    with STUDY_TAXONOMY.open(encoding="utf-8", newline="") as handle:
        english = {row["code"]: row["name"] for row in csv.DictReader(handle)}
    assert {n.code: n.name for n in nodes} == english


def test_the_chinese_interface_shows_the_chinese_name_with_the_english_beside(study_taxonomy):
    memory = study_taxonomy.nodes.get(code="C.2")
    with translation.override("zh-hans"):
        assert memory.shown_name == f"{memory.name_zh} · Resource Efficiency and Memory Management"
        assert memory.shown_definition == memory.definition_zh
        assert "Memory" not in memory.other_language_text  # the name is shown already
    with translation.override("en"):
        assert memory.shown_name == "Resource Efficiency and Memory Management"
        assert "显存" in memory.other_language_text  # searchable from the English interface


def test_a_translation_of_a_code_the_taxonomy_lacks_names_file_line_and_column(tmp_path):
    translations = tmp_path / "zh.csv"
    translations.write_text(
        "code,name_zh,definition_zh\nA,问题,提问\nC.11,不存在,没有这个节点\n", encoding="utf-8"
    )
    with pytest.raises(RowError) as refused:
        taxonomy_load(path=STUDY_TAXONOMY, name="t", version="9", translations=translations)
    assert (refused.value.where.line, refused.value.where.column) == (3, "code")
    assert "C.11" in str(refused.value)
    assert not Node.objects.filter(taxonomy__name="t").exists()  # nothing half-loaded


def test_loading_the_study_file_again_keeps_the_translations(study_taxonomy):
    report = taxonomy_load(path=STUDY_TAXONOMY, name="LLM challenges", version="1")
    assert report.updated == 0
    assert study_taxonomy.nodes.get(code="A").name_zh == "问题"


def test_the_taxonomy_file_may_carry_its_own_chinese_columns(tmp_path):
    tree = tmp_path / "tree.csv"
    tree.write_text(
        "code,level,parent,name,name_zh,definition_zh\n"
        "A,type,,Question,问题,用户的提问\nA.1,theme,A,Timeouts,超时,请求超时\n",
        encoding="utf-8",
    )
    taxonomy_load(path=tree, name="own", version="1")
    assert Node.objects.get(taxonomy__name="own", code="A.1").name_zh == "超时"


# What a Chinese-speaking volunteer would type, and the categories each must find.
CHINESE_QUERIES = {
    "显存": {"C.2", "C.2.i", "C.2.iii", "A.3.ii", "B.2.iii"},
    "超时": {"C.3.i", "C.3.iii", "C.5.v", "B.3.iv"},
    "量化": {"B.2.vii", "C.2.iii", "C.4.ii"},
    "安装": {"A.1", "C.1.i"},
}


@pytest.mark.parametrize("query", CHINESE_QUERIES)
def test_chinese_queries_find_the_nodes_about_them(study_taxonomy, query):
    """The text a search looks in, in either interface: shown name, definition and the other
    language's."""
    for language in ("en", "zh-hans"):
        with translation.override(language):
            found = {
                n.code
                for n in study_taxonomy.nodes.all()
                if query in f"{n.shown_name} {n.shown_definition} {n.other_language_text}"
            }
        assert CHINESE_QUERIES[query] <= found, (language, query)
