"""Loading the study taxonomy and its detail files, and every way a file can be wrong."""

from pathlib import Path

import pytest
from django.core.management import CommandError, call_command
from django.utils import translation

from concord.errors import RowError
from taxonomy.loaders import examples_load, taxonomy_load
from taxonomy.models import Example, ExampleKind, Level, Node, Taxonomy
from tests.conftest import STUDY


def test_study_taxonomy_has_3_types_18_themes_70_subthemes(study_taxonomy):
    levels = {level: study_taxonomy.nodes.filter(level=level).count() for level in Level.values}
    assert levels == {"type": 3, "theme": 18, "subtheme": 70}
    bug = study_taxonomy.nodes.get(code="C")
    assert bug.name == "Bug"
    assert bug.definition.startswith("Unexpected") or bug.definition


def test_study_spelling_is_kept_beside_the_paper_name(study_taxonomy):
    node = study_taxonomy.nodes.get(code="C.1.i")
    assert node.name == "Build, Installation, and Low-Level Support Failures"
    assert node.study_name == "Build、 Installation、 and Low-Level Support Failures"
    assert node.parent.code == "C.1"
    assert node.parent.parent.code == "C"


def test_every_subtheme_gets_examples_of_its_type_kind(study_taxonomy):
    subthemes = study_taxonomy.nodes.filter(level=Level.SUBTHEME)
    assert all(n.examples.exists() for n in subthemes)
    kinds = {
        (n.parent.parent.code, e.kind)
        for n in subthemes.select_related("parent__parent")
        for e in n.examples.all()
    }
    assert kinds == {
        ("A", ExampleKind.INTENT),
        ("B", ExampleKind.EXPECTATION),
        ("C", ExampleKind.SYMPTOM),
    }


def test_detail_items_are_split_on_commas_and_keep_cjk_commas(study_taxonomy):
    node = study_taxonomy.nodes.get(code="C.1.i")
    texts = list(node.examples.values_list("text", flat=True))
    assert texts[0] == "Compilation failure、build error、platform not supported"
    assert "Cuda library missing" in texts
    assert all("," not in t for t in texts)


def test_detail_row_that_spills_into_extra_cells_keeps_every_item(study_taxonomy):
    # requirement_expections.csv line 4 closes its quoted list early; the rest are more items.
    node = study_taxonomy.nodes.get(code="B.1.iii")
    texts = set(node.examples.values_list("text", flat=True))
    assert "Need to upgrade dependency versions" in texts
    assert "Adapt to OneAPI 2025.0 toolkit" in texts
    assert len(texts) >= 20


def _snapshot():
    return (
        list(
            Node.objects.order_by("pk").values_list("pk", "code", "name", "parent_id", "position")
        ),
        list(Example.objects.order_by("pk").values_list("pk", "node_id", "text")),
    )


def test_reloading_the_same_files_changes_nothing(study_taxonomy):
    before = _snapshot()
    report = taxonomy_load(path=STUDY / "taxonomy.csv", name="LLM challenges", version="1")
    for detail in (STUDY / "study-details").glob("*.csv"):
        assert examples_load(path=detail, taxonomy=study_taxonomy).created == 0
    assert (report.created, report.updated, report.unchanged) == (0, 0, 91)
    assert _snapshot() == before


def test_load_taxonomy_command_loads_and_reports(db, capsys):
    call_command(
        "load_taxonomy",
        str(STUDY / "taxonomy.csv"),
        "--details",
        *map(str, sorted((STUDY / "study-details").glob("*.csv"))),
        "--name",
        "Study",
        "--taxonomy-version",
        "2",
    )
    out = capsys.readouterr().out
    assert "91 created" in out
    assert Taxonomy.objects.get(name="Study", version="2").nodes.count() == 91
    assert Example.objects.filter(node__taxonomy__name="Study").count() > 300


def _write(tmp_path: Path, text: str, name: str = "tax.csv") -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


GOOD_HEAD = "code,level,parent,name,description\nA,type,,Question,Q\nA.1,theme,A,Install,\n"


@pytest.mark.parametrize(
    ("body", "line", "column", "message"),
    [
        ("A.1,theme,A,Again,\n", 4, "code", "duplicate code 'A.1'"),
        ("A.2,theme,Z,Orphan,\n", 4, "parent", "parent 'Z' of A.2 not defined above"),
        ("A.2,chapter,A,Odd,\n", 4, "level", "unknown level 'chapter'"),
        (
            "A.1.i,theme,A.1,Wrong depth,\n",
            4,
            "level",
            "A.1.i is a theme but its parent A.1 is a theme",
        ),
        ("B,type,A,Typed child,\n", 4, "parent", "type B cannot have a parent"),
        ("A.2,theme,A,,\n", 4, "name", "node A.2 has no name"),
    ],
)
def test_bad_taxonomy_rows_name_line_and_column_and_write_nothing(
    db, tmp_path, body, line, column, message
):
    path = _write(tmp_path, GOOD_HEAD + body)
    before = _snapshot()
    with pytest.raises(RowError) as caught:
        taxonomy_load(path=path, name="T")
    assert caught.value.where.line == line
    assert caught.value.where.column == column
    assert message in caught.value.message
    assert _snapshot() == before
    assert not Taxonomy.objects.filter(name="T").exists()


def test_missing_column_is_named(db, tmp_path):
    path = _write(tmp_path, "code,level,name\nA,type,Question\n")
    with pytest.raises(RowError, match=r"missing column.*parent"):
        taxonomy_load(path=path, name="T")


def test_non_utf8_file_is_rejected_naming_line_and_byte(db, tmp_path):
    path = tmp_path / "latin1.csv"
    path.write_bytes(GOOD_HEAD.encode() + "A.2,theme,A,Caf\xe9,\n".encode("latin-1"))
    line = GOOD_HEAD.count("\n") + 1
    with pytest.raises(
        RowError, match=rf"line {line}: not UTF-8 text: byte 16 of the line \(0xe9\)"
    ):
        taxonomy_load(path=path, name="T")
    assert not Taxonomy.objects.filter(name="T").exists()


def test_detail_row_for_unknown_subtheme_names_line_and_writes_nothing(study_taxonomy, tmp_path):
    path = _write(
        tmp_path,
        "rootcause,subcategory,symptoms\n"
        'Installation and Environment Bugs,Nowhere Failures,"a,b"\n',
        name="bug_symptoms.csv",
    )
    before = Example.objects.count()
    with pytest.raises(RowError) as caught:
        examples_load(path=path, taxonomy=study_taxonomy)
    assert caught.value.where.line == 2
    assert caught.value.where.column == "subcategory"
    assert Example.objects.count() == before


def test_command_turns_errors_into_a_clear_message(db, tmp_path):
    path = _write(tmp_path, GOOD_HEAD + "A.2,theme,Z,Orphan,\n")
    with pytest.raises(CommandError, match=r"tax\.csv, line 4, column parent: parent 'Z'"):
        call_command("load_taxonomy", str(path))


def test_a_bad_row_is_named_in_the_readers_language(db, tmp_path):
    path = _write(tmp_path, GOOD_HEAD + "A.2,theme,Z,Orphan,\n")
    with translation.override("zh-hans"), pytest.raises(RowError) as caught:
        taxonomy_load(path=path, name="T")
    with translation.override("zh-hans"):
        said = str(caught.value)
    assert said == f"{path}，第 4 行，parent 列：A.2 的父节点 'Z' 没有在前面定义"  # noqa: RUF001
