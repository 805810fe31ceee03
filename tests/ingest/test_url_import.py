"""URL-list import: the shared issue lists, bad lines reported, the rest taken."""

import pytest
from django.core.management import CommandError, call_command
from django.utils import translation

from ingest.importers import url_list_import
from ingest.models import Issue
from tests.conftest import STUDY


def test_all_shared_issue_lists_import(db):
    total = 0
    for path in sorted((STUDY / "issue-lists").glob("*.txt")):
        report = url_list_import(text=path.read_text(), name=str(path), fetch_details=False)
        assert report.errors == []
        total += report.created
    assert total == Issue.objects.count() == 4800
    assert Issue.objects.filter(host="gitee").count() == 80 + 1780
    assert Issue.objects.get(number="IBZ414").repository == "ascend/MindSpeed"
    assert not Issue.objects.filter(fetched_at__isnull=False).exists()


def test_importing_again_creates_nothing(db):
    path = STUDY / "issue-lists" / "MindSpeed_2024.txt"
    first = url_list_import(text=path.read_text(), name=str(path), fetch_details=False)
    again = url_list_import(text=path.read_text(), name=str(path), fetch_details=False)
    assert (again.created, again.already_known) == (0, first.created)


def test_bad_lines_are_reported_by_number_and_the_rest_goes_in(db):
    text = (
        "https://github.com/NVIDIA/Megatron-LM/issues/1516\n"
        "\n"
        "https://github.com/NVIDIA/Megatron-LM/pull/1517\n"
        "https://gitee.com/ascend/MindSpeed/issues/ibz414\n"
        "https://gitlab.com/x/y/issues/1\n"
        "https://gitee.com/ascend/MindSpeed/issues/IBZ414\n"
        "https://github.com/NVIDIA/Megatron-LM/issues/1516\n"
    )
    report = url_list_import(text=text, name="list.txt", fetch_details=False)
    assert [(e.where.line, e.message.split(" ")[0]) for e in report.errors] == [
        (3, "'https://github.com/NVIDIA/Megatron-LM/pull/1517'"),
        (4, "'ibz414'"),
        (5, "unknown"),
    ]
    assert "pull request" in report.errors[0].message
    assert "upper case" in report.errors[1].message
    assert (report.created, report.duplicates) == (2, 1)


def test_command_reports_bad_lines_and_keeps_good_ones(db, tmp_path, capsys):
    path = tmp_path / "urls.txt"
    path.write_text("https://github.com/a/b/issues/1\nnot a url\n")
    with pytest.raises(CommandError, match=r"1 line\(s\) were not imported"):
        call_command("import_urls", str(path))
    assert "urls.txt, line 2" in capsys.readouterr().err
    assert Issue.objects.filter(number="1").exists()


def test_bad_lines_are_reported_in_the_readers_language(db):
    text = "https://github.com/NVIDIA/Megatron-LM/pull/1517\nhttps://gitlab.com/x/y/issues/1\n"
    with translation.override("zh-hans"):
        report = url_list_import(text=text, name="list.txt", fetch_details=False)
        said = [str(e) for e in report.errors]
    assert said == [
        "list.txt，第 1 行：'https://github.com/NVIDIA/Megatron-LM/pull/1517' 是拉取请求，不是议题",  # noqa: RUF001
        "list.txt，第 2 行：未知的网站 'gitlab.com'；Concord 支持 github.com 和 gitee.com",  # noqa: RUF001
    ]
