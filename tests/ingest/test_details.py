"""Issues imported by URL get their details from the forge, one issue at a time."""

import pytest
from django.core.management import CommandError, call_command

from ingest.clients import ForgeUnavailable, Unauthorized
from ingest.details import DOWN_AFTER, issues_fetch_details
from ingest.importers import url_list_import
from ingest.models import Issue
from ingest.tasks import issues_fetch_details as fetch_task
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


def github_list(forge, count: int) -> tuple[list[int], list[dict]]:
    """`count` Megatron-LM issues on the fake (no comments: one request each), imported by URL."""
    issues, notes = make_github_issues("NVIDIA", "Megatron-LM", count, comments_per_issue=0)
    forge.add_github_repo("NVIDIA", "Megatron-LM", issues, notes)
    text = "\n".join(f"https://github.com/NVIDIA/Megatron-LM/issues/{i['number']}" for i in issues)
    return url_list_import(text=text, name="list.txt", fetch_details=False).issue_ids, issues


def pending_and_marked(issue_ids) -> tuple[int, int]:
    issues = Issue.objects.filter(pk__in=issue_ids)
    pending = issues.filter(fetched_at__isnull=True, fetch_error="").count()
    return pending, issues.exclude(fetch_error="").count()


def test_a_failing_host_marks_no_issue_and_they_are_fetched_once_it_answers(db, forge):
    """5xx after the client's retries says nothing about the issues: they stay pending (a mark
    would show on the labeling page and never be fetched again), and the batch stops after
    DOWN_AFTER such issues instead of trying every one against a host that is down."""
    issue_ids, _issues = github_list(forge, 6)
    forge.fail_5xx_on = set(range(1, 10_000))
    with pytest.raises(ForgeUnavailable):
        issues_fetch_details(issue_ids=issue_ids)
    assert pending_and_marked(issue_ids) == (6, 0)
    assert len({r["path"] for r in forge.requests}) == DOWN_AFTER

    forge.fail_5xx_on = set()
    assert issues_fetch_details(issue_ids=issue_ids) == 6
    assert pending_and_marked(issue_ids) == (0, 0)


def test_an_issue_the_host_always_fails_on_stays_pending_and_the_rest_are_fetched(db, forge):
    issue_ids, issues = github_list(forge, 5)
    heavy = issues[2]["number"]
    forge.fail_5xx_paths = {f"/github/repos/NVIDIA/Megatron-LM/issues/{heavy}"}
    with pytest.raises(ForgeUnavailable):  # raised once the others are stored: sent again later
        issues_fetch_details(issue_ids=issue_ids)
    assert pending_and_marked(issue_ids) == (1, 0)
    assert Issue.objects.get(number=str(heavy)).fetched_at is None


def test_a_refused_token_marks_no_issue(db, forge, settings):
    issue_ids, _issues = github_list(forge, 3)
    forge.token = "the-right-one"
    settings.GITHUB_TOKEN = "revoked"
    with pytest.raises(Unauthorized):
        issues_fetch_details(issue_ids=issue_ids)
    assert pending_and_marked(issue_ids) == (3, 0)
    fetch_task.apply(args=[issue_ids])  # the task logs it and leaves them for the sweep
    assert pending_and_marked(issue_ids) == (3, 0)


def test_the_command_says_the_urls_are_in_and_to_run_it_again(db, forge, tmp_path):
    path = tmp_path / "urls.txt"
    path.write_text("https://github.com/NVIDIA/Megatron-LM/issues/1\n")
    forge.add_github_repo("NVIDIA", "Megatron-LM", *make_github_issues("NVIDIA", "Megatron-LM", 1))
    forge.fail_5xx_on = set(range(1, 10_000))
    with pytest.raises(CommandError, match="the URLs are in; fetching their details stopped"):
        call_command("import_urls", str(path), "--fetch-details")
    assert Issue.objects.filter(number="1", fetch_error="", fetched_at__isnull=True).exists()
    forge.fail_5xx_on = set()
    call_command("import_urls", str(path), "--fetch-details")
    assert Issue.objects.get(number="1").fetched_at is not None


def test_a_deleted_issue_answered_410_gone_is_marked_as_not_found(db, forge):
    issue_ids, issues = github_list(forge, 3)
    forge.github_deleted = {("NVIDIA", "Megatron-LM", issues[1]["number"])}
    assert issues_fetch_details(issue_ids=issue_ids) == 2
    gone = Issue.objects.get(number=str(issues[1]["number"]))
    assert "not found on the host (deleted" in gone.fetch_error
