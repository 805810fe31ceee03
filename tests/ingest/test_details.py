"""Issues imported by URL get their details from the forge, one issue at a time."""

from ingest.details import issues_fetch_details
from ingest.importers import url_list_import
from ingest.models import Issue
from tests.fakes.forge import make_gitee_issues, make_github_issues


def test_details_fill_in_title_body_and_comments_and_mark_what_cannot_be_fetched(db, forge):
    gh_issues, gh_notes = make_github_issues(
        "NVIDIA", "Megatron-LM", 5, n_prs=2, comments_per_issue=2
    )
    forge.add_github_repo("NVIDIA", "Megatron-LM", gh_issues, gh_notes)
    ge_issues, ge_notes = make_gitee_issues("ascend", "MindSpeed", 3, comments_per_issue=1)
    forge.add_gitee_repo("ascend", "MindSpeed", ge_issues, ge_notes)
    issue = next(i for i in gh_issues if "pull_request" not in i)
    pr = next(i for i in gh_issues if "pull_request" in i)
    text = "\n".join(
        [
            f"https://github.com/NVIDIA/Megatron-LM/issues/{issue['number']}",
            f"https://github.com/NVIDIA/Megatron-LM/issues/{pr['number']}",
            "https://github.com/NVIDIA/Megatron-LM/issues/99999",
            ge_issues[0]["html_url"],
        ]
    )
    report = url_list_import(text=text, name="list.txt", fetch_details=False)
    assert issues_fetch_details(issue_ids=report.issue_ids) == 2

    stored = Issue.objects.get(number=str(issue["number"]))
    assert (stored.title, stored.comments.count()) == (issue["title"], 2)
    assert stored.fetched_at is not None
    assert "pull request" in Issue.objects.get(number=str(pr["number"])).fetch_error
    assert "not found" in Issue.objects.get(number="99999").fetch_error
    gitee = Issue.objects.get(number=ge_issues[0]["number"])
    assert gitee.title == ge_issues[0]["title"]
    assert gitee.comments.count() == 1

    forge.reset_log()
    assert issues_fetch_details(issue_ids=report.issue_ids) == 0  # done ones are skipped
    assert forge.request_count == 0
