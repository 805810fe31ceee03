"""Issue 25: an item-import file is read as a stream, a block at a time, never whole. Whatever
the block size, and wherever a block ends (inside a record, a string, a number, a UTF-8
sequence), the records, the problems and where they are named are those of the file held whole.
(How little memory that takes is measured by tests.bench.item_imports, not here.)"""

from __future__ import annotations

import io
import json

import pytest

from concord.errors import RowError, utf8_text
from ingest import issue_files
from ingest.issue_files import issue_file_check, issue_file_parse, issue_file_save

URL = "https://github.com/NVIDIA/Megatron-LM/issues/{}"
WHOLE = 1 << 30  # a block larger than any file here: the file in one piece


def record(n: int, **fields) -> dict:
    return {
        "url": URL.format(n),
        "title": f"显存溢出 #{n}\u2028second line",
        "body": "Out of memory\r\nwith `--fp16` 🚀 " * (n % 4),
        "created_at": "2024-05-01T10:00:00Z",
        "comments": [{"id": 1000 + n, "body": "Which version?"}],
        **fields,
    }


def json_array(records: list[dict], indent: int | None = None) -> str:
    return json.dumps(records, ensure_ascii=False, indent=indent)


def jsonl(records: list[dict]) -> str:
    return "".join(json.dumps(r, ensure_ascii=False) + "\r\n" for r in records)


GOOD = [record(n) for n in range(1, 30)]
FILES = {
    "array, one line": json_array(GOOD),
    "array, indented": "\ufeff\n\n" + json_array(GOOD, indent=2) + "\n",
    "jsonl": jsonl(GOOD),
    "jsonl with blank lines": "\n\n" + jsonl(GOOD[:10]) + "\n  \n" + jsonl(GOOD[10:]),
    "array, a bad record last": json_array([*GOOD, record(99, created_at="soon")], indent=1),
    "array, a repeated issue": json_array([*GOOD, record(3)], indent=1),
    "array, cut short": json_array(GOOD, indent=1)[:-40],
    "array, broken in a line": json_array(GOOD)[:900] + "}" + json_array(GOOD)[900:],
    "array, text after it": json_array(GOOD) + "\n x",
    "array, a number too long": json_array(GOOD)[:-1] + ', {"url": ' + "9" * 5000 + "}]",
    "array, nested too deep": json_array(GOOD[:3])[:-1] + ", " + "[" * 3000 + "]" * 3000 + "]",
    "jsonl, a broken line": jsonl(GOOD[:5]) + '{"url": "x", "title": }\n' + jsonl(GOOD[5:]),
}


def parsed(text: str, monkeypatch, block: int) -> tuple[list, list[tuple]]:
    monkeypatch.setattr(issue_files, "BLOCK", block)
    records, errors = issue_file_parse(text=text, name="f.json")
    return records, [(e.where.as_dict(), e.message) for e in errors]


@pytest.mark.parametrize("name", FILES)
@pytest.mark.parametrize("block", [1, 7, 64, 1000])
def test_a_file_read_in_blocks_reads_as_the_whole_file(name, block, monkeypatch):
    text = FILES[name]
    whole = parsed(text, monkeypatch, WHOLE)
    assert parsed(text, monkeypatch, block) == whole
    if "bad" in name or "repeated" in name:
        assert whole[0]  # the file's good records
        assert whole[1]  # and its problem
    elif name in ("jsonl", "array, one line", "array, indented"):
        assert (len(whole[0]), whole[1]) == (len(GOOD), [])


def test_the_problem_of_a_bad_last_record_names_its_line_and_field(monkeypatch):
    text = FILES["array, a bad record last"]
    _, problems = parsed(text, monkeypatch, 64)
    last_line = text.count("\n", 0, text.rindex('"url": "' + URL.format(99))) + 1
    assert problems[0][0] == {"path": "f.json", "line": last_line - 1, "column": "created_at"}
    assert "'soon' is not a date and time" in problems[0][1]


def test_a_broken_line_is_named_at_its_line_and_character_whatever_the_block(monkeypatch):
    text = json_array(GOOD)  # one line: the error's column counts from the file's start
    comma = text.index(', "created_at"', 2000)
    broken = text[:comma] + text[comma + 1 :]  # Expecting ',' delimiter
    with pytest.raises(json.JSONDecodeError) as whole:
        json.loads(broken)
    column = whole.value.colno
    for block in (1, 100, 1500):
        _, problems = parsed(broken, monkeypatch, block)
        assert problems[0][0]["line"] == 1
        assert problems[0][1].endswith(f"at character {column}")


def test_the_check_counts_records_and_keeps_none_of_them(monkeypatch, db):
    monkeypatch.setattr(issue_files, "BLOCK", 100)
    monkeypatch.setattr(issue_files, "CHUNK", 4)
    seen = []
    count, errors = issue_file_check(
        io.StringIO(FILES["jsonl"], newline=""), "f.jsonl", seen.append
    )
    assert (count, errors) == (len(GOOD), [])
    assert seen[-1] == len(GOOD)


def saved(data: bytes, size: int) -> bytes:
    out = io.BytesIO()
    issue_file_save((data[i : i + size] for i in range(0, len(data), size)), "f.jsonl", out)
    return out.getvalue()


def refusal(data: bytes, size: int) -> tuple[dict, str]:
    with pytest.raises(RowError) as caught:
        saved(data, size)
    return caught.value.where.as_dict(), caught.value.message


@pytest.mark.parametrize("size", [1, 2, 3, 5, 64, 1 << 20])
def test_an_upload_is_copied_as_sent_in_any_blocks(size):
    data = b"\xef\xbb\xbf" + jsonl(GOOD).encode()
    assert saved(data, size) == data


@pytest.mark.parametrize("size", [1, 2, 3, 5, 64, 1 << 20])
def test_bytes_not_utf8_are_named_as_for_the_whole_file(size):
    head = b"\xef\xbb\xbf" + jsonl(GOOD[:3]).encode()
    for bad in (b'{"title": "caf\xe9"}\n', b'{"title": "\xf0\x9f\x9a"}', b"x\xf0\x9f"):
        data = head + bad
        with pytest.raises(RowError) as whole:
            utf8_text(data, "f.jsonl")
        assert refusal(data, size) == (whole.value.where.as_dict(), whole.value.message)


@pytest.mark.parametrize("size", [1, 3, 64, 1 << 20])
def test_a_nul_is_named_at_its_line_and_character(size):
    data = jsonl(GOOD[:2]).encode() + '{"title": "显存\x00"}\n'.encode()
    where, message = refusal(data, size)
    assert where == {"path": "f.jsonl", "line": 3, "column": None}
    assert message.startswith("contains a NUL character (U+0000) at character 14;")
