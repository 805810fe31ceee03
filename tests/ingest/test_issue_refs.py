import pytest

from ingest.issue_refs import BadIssueUrl, IssueRef, parse_issue_url
from tests.conftest import STUDY


def test_every_url_in_the_shared_issue_lists_parses():
    urls = [u for p in sorted((STUDY / "issue-lists").glob("*.txt")) for u in p.read_text().split()]
    refs = [parse_issue_url(u) for u in urls]
    assert len(refs) == 4800
    assert len(set(refs)) == 4800
    assert {r.host for r in refs} == {"github", "gitee"}
    assert all(r.url == u for r, u in zip(refs, urls, strict=True))


def test_gitee_ids_are_strings_and_github_numbers_digits():
    assert parse_issue_url("https://gitee.com/ascend/MindSpeed/issues/IBDZ87") == IssueRef(
        "gitee", "ascend", "MindSpeed", "IBDZ87"
    )
    assert parse_issue_url(" https://github.com/NVIDIA/Megatron-LM/issues/1516/ ").number == "1516"


@pytest.mark.parametrize(
    ("url", "message"),
    [
        ("https://gitlab.com/a/b/issues/1", "unknown host 'gitlab.com'"),
        ("ftp://github.com/a/b/issues/1", "not an http(s) URL"),
        ("https://github.com/a/b/pull/1", "is a pull request"),
        ("https://github.com/a/b", "not an issue URL"),
        ("https://github.com/a/b/issues/abc", "positive integers"),
        ("https://gitee.com/ascend/MindSpeed/issues/ibdz87", "Gitee ids are upper case"),
        ("https://gitee.com/ascend/MindSpeed/issues/IB-Z", "not a Gitee issue id"),
    ],
)
def test_bad_urls_say_why(url, message):
    with pytest.raises(BadIssueUrl, match=message.replace("(", r"\(").replace(")", r"\)")):
        parse_issue_url(url)
