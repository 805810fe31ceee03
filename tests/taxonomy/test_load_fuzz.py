"""Fuzzing the taxonomy loader (hypothesis): random rows, levels, parents, duplicate and empty
codes, quotes, CRLF, BOMs, wrong encodings. A load either succeeds (and loading the same file
again changes nothing) or fails with a RowError naming the file and the line, and then the
taxonomy tables are unchanged, row for row."""

from __future__ import annotations

from hypothesis import event, given
from hypothesis import strategies as st

from concord.errors import RowError
from taxonomy.loaders import taxonomy_load
from taxonomy.models import Example, Node, Taxonomy
from tests.annotation.test_import_fuzz import FUZZ, snapshot

TABLES = (Taxonomy, Node, Example)
HEADERS = [
    "code,level,parent,name,description",
    "code,level,parent,name",
    "level,code,name,parent,description,extra",
    "code,level,name,description",
    "\ufeffcode,level,parent,name,description",
]
codes = st.sampled_from(["A", "A.1", "A.1.i", "B", "B.2", "", "a", "A.1 ", "=x()"])
rows = st.lists(
    st.tuples(
        codes,
        st.sampled_from(["type", "theme", "subtheme", "Theme", "", "chapter"]),
        st.one_of(codes, st.text(max_size=5)),
        st.one_of(st.text(max_size=20), st.just("x" * 3000)),
        st.text(max_size=20),
    ),
    max_size=8,
)


@FUZZ
@given(
    header=st.sampled_from(HEADERS),
    body=rows,
    newline=st.sampled_from(["\n", "\r\n"]),
    encoding=st.sampled_from(["utf-8", "utf-16", "latin-1"]),
)
def test_taxonomy_load_succeeds_or_changes_nothing(db, tmp_path, header, body, newline, encoding):
    def quoted(cell: str) -> str:
        return '"' + cell.replace('"', '""') + '"'

    text = newline.join([header, *(",".join(map(quoted, row)) for row in body)]) + newline
    path = tmp_path / "taxonomy.csv"
    path.write_bytes(text.encode(encoding, errors="replace"))
    before = snapshot(TABLES)
    failure = None
    try:
        taxonomy_load(path=path, name="Fuzzed")
    except RowError as exc:
        failure = exc
    event("loaded" if failure is None else "refused")
    if failure is None:
        after = snapshot(TABLES)
        taxonomy_load(path=path, name="Fuzzed")
        assert snapshot(TABLES) == after
        return
    assert failure.where.path == str(path)
    assert failure.where.line is not None
    assert snapshot(TABLES) == before
