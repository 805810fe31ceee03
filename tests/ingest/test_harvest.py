"""Harvesting from the fake forge over real HTTP: windows, PRs, bulk comments, rate limits,
retries, conditional requests, checkpoints and bad input. Nothing inside Concord is mocked."""

import time
from datetime import date

import pytest
from django.core.management import CommandError, call_command

from concord.errors import ConcordError
from ingest.clients import RateLimited
from ingest.harvest import harvest_advance, harvest_start
from ingest.models import Comment, HarvestRun, Issue, KeywordMatch, KeywordSet, RunStatus, Source
from tests.fakes.forge import make_gitee_issues, make_github_issues

WINDOW = {"created_from": date(2023, 1, 1), "created_until": date(2025, 4, 30)}


def github_source(**extra):
    return Source.objects.create(
        host="github", owner="vllm-project", repo="vllm", **WINDOW, **extra
    )


def serve_github(forge, n_issues=250, n_prs=40, comments=2, **kw):
    issues, notes = make_github_issues(
        "vllm-project",
        "vllm",
        n_issues,
        n_prs=n_prs,
        comments_per_issue=comments,
        start="2022-10-01",
        end="2025-06-30",
        **kw,
    )
    forge.add_github_repo("vllm-project", "vllm", issues, notes)
    return issues, notes


def in_window(items):
    return [i for i in items if "2023-01-01" <= i["created_at"][:10] <= "2025-04-30"]


def harvest(source, **kw):
    run = harvest_start(source=source, enqueue=False)
    return harvest_advance(run_id=run.pk, **kw)


def clean_run_snapshot(source):
    """What a fresh harvest with no history, no stored issues and no ETags gives."""
    Issue.objects.all().delete()
    HarvestRun.objects.all().delete()
    source.page_validators.all().delete()
    harvest(source)
    return snapshot()


def snapshot():
    return (
        sorted(
            Issue.objects.values_list(
                "host",
                "owner",
                "repo",
                "number",
                "title",
                "body",
                "state",
                "updated_at",
                "comment_count",
            )
        ),
        sorted(
            Comment.objects.values_list("host", "comment_id", "issue__number", "body", "updated_at")
        ),
    )


def test_github_harvest_takes_the_window_skips_prs_and_fetches_comments_in_bulk(db, forge):
    issues, notes = serve_github(forge)
    run = harvest(github_source())
    wanted = [i for i in in_window(issues) if "pull_request" not in i]
    assert run.status == RunStatus.DONE
    assert run.issues_fetched == Issue.objects.count() == len(wanted)
    assert run.pull_requests_skipped == len([i for i in in_window(issues) if "pull_request" in i])
    assert not Issue.objects.filter(is_pull_request=True).exists()
    wanted_numbers = {str(i["number"]) for i in wanted}
    expected_comments = [c for c in notes if c["issue_url"].rsplit("/", 1)[1] in wanted_numbers]
    assert Comment.objects.count() == run.comments_fetched == len(expected_comments)
    issue_paths = [r for r in forge.requests if r["path"].endswith("/issues")]
    comment_paths = [r for r in forge.requests if r["path"].endswith("/issues/comments")]
    assert len(issue_paths) + len(comment_paths) == forge.request_count == run.requests
    assert all(r["headers"].get("user-agent", "").startswith("Concord") for r in forge.requests)
    assert all(r["headers"].get("x-github-api-version") == "2022-11-28" for r in forge.requests)


def test_issue_fields_are_stored(db, forge):
    issues, _ = serve_github(forge, n_prs=0, comments=1)
    harvest(github_source())
    sample = in_window(issues)[0]
    stored = Issue.objects.get(number=str(sample["number"]))
    assert stored.url == sample["html_url"]
    assert stored.title == sample["title"]
    assert stored.body == (sample["body"] or "")
    assert stored.author == sample["user"]["login"]
    assert stored.labels == [label["name"] for label in sample["labels"]]
    assert stored.comment_count == sample["comments"]
    assert stored.created_at.isoformat().replace("+00:00", "Z") == sample["created_at"]
    assert stored.comments.count() == 1


def test_cursor_pagination_is_followed_exactly(db, forge):
    issues, _ = serve_github(forge, n_issues=450, n_prs=0, comments=0)
    forge.cursor_after_page = 2
    run = harvest(github_source())
    assert run.status == RunStatus.DONE
    assert Issue.objects.count() == len(in_window(issues))
    assert any("after" in r["query"] for r in forge.requests)


def test_gitee_harvest_keeps_string_ids_and_maps_comments_by_target(db, forge):
    issues, notes = make_gitee_issues(
        "ascend",
        "MindSpeed",
        150,
        comments_per_issue=1,
        n_pr_comments=3,
        start="2022-12-01",
        end="2025-05-31",
    )
    forge.add_gitee_repo("ascend", "MindSpeed", issues, notes)
    source = Source.objects.create(host="gitee", owner="ascend", repo="MindSpeed", **WINDOW)
    run = harvest(source)
    assert run.status == RunStatus.DONE
    sample = Issue.objects.order_by("created_at").first()
    assert sample.number.startswith("I")
    assert sample.number.isupper()
    assert sample.created_at.utcoffset().total_seconds() == 0  # +08:00 stamps stored as UTC
    # Gitee's four states are GitHub's two: progressing is open, rejected closed (finished_at)
    by_number = {i["number"]: i for i in issues}
    seen = set()
    for issue in Issue.objects.all():
        given = by_number[issue.number]
        seen.add(given["state"])
        closed = given["state"] in ("closed", "rejected")
        assert issue.state == ("closed" if closed else "open"), given["state"]
        assert (issue.closed_at is not None) == closed, given["state"]
    assert seen == {"open", "progressing", "closed", "rejected"}
    stored_numbers = set(Issue.objects.values_list("number", flat=True))
    expected = [
        c
        for c in notes
        if c["target"]["issue"] and c["target"]["issue"]["number"] in stored_numbers
    ]
    assert Comment.objects.count() == len(expected)


def test_rate_limit_waits_for_the_reset_then_finishes_with_the_same_data(db, forge):
    serve_github(forge, n_issues=350, n_prs=0, comments=1)
    forge.rate_limit, forge.rate_limit_reset_in, forge.rate_limit_refill = 2, 1, 5000
    run = harvest_start(source=github_source(), enqueue=False)
    with pytest.raises(RateLimited) as caught:
        harvest_advance(run_id=run.pk)
    run.refresh_from_db()
    assert run.status == RunStatus.WAITING
    assert run.waiting_until is not None
    assert 0 < caught.value.wait_seconds <= 3
    time.sleep(caught.value.wait_seconds)
    run = harvest_advance(run_id=run.pk)
    assert run.status == RunStatus.DONE
    limited = snapshot()
    forge.rate_limit = None
    assert clean_run_snapshot(Source.objects.get()) == limited


@pytest.mark.parametrize("status", [403, 429])
def test_secondary_limit_uses_retry_after(db, forge, status):
    serve_github(forge, n_issues=50, n_prs=0, comments=0)
    forge.secondary_limit_on, forge.secondary_limit_status, forge.retry_after = {1}, status, 7
    run = harvest_start(source=github_source(), enqueue=False)
    with pytest.raises(RateLimited) as caught:
        harvest_advance(run_id=run.pk)
    assert caught.value.wait_seconds == 7
    assert not Issue.objects.exists()


def test_flaky_5xx_are_retried_transparently(db, forge):
    serve_github(forge, n_issues=150, n_prs=0, comments=0)
    forge.fail_5xx_on = {1, 3}
    run = harvest(github_source())
    assert run.status == RunStatus.DONE
    assert Issue.objects.count() > 0


def test_persistent_5xx_fail_the_run_with_a_clear_message(db, forge, settings):
    serve_github(forge, n_issues=50, n_prs=0, comments=0)
    settings.HARVEST_MAX_RETRIES, settings.HARVEST_MAX_RATE_WAITS = 2, 0  # no wait for it
    forge.fail_5xx_on = set(range(1, 50))
    run = harvest(github_source())
    assert run.status == RunStatus.FAILED
    assert "HTTP 502" in run.error
    assert "after 2 retries" in run.error


def test_revoked_token_fails_clearly(db, forge):
    serve_github(forge, n_issues=10, n_prs=0, comments=0)
    forge.token = "the-right-token"
    run = harvest(github_source(token="revoked"))
    assert run.status == RunStatus.FAILED
    assert "token was refused (401" in run.error
    assert forge.request_count == 1  # never retried


def test_token_from_the_source_is_sent(db, forge):
    serve_github(forge, n_issues=10, n_prs=0, comments=0)
    forge.token = "the-right-token"
    assert harvest(github_source(token="the-right-token")).status == RunStatus.DONE
    assert forge.requests[0]["headers"]["authorization"] == "Bearer the-right-token"


def test_missing_repository_fails_clearly(db, forge):
    run = harvest(Source.objects.create(host="gitee", owner="nobody", repo="nothing", **WINDOW))
    assert run.status == RunStatus.FAILED
    assert "not found (404: Not Found Project)" in run.error


def test_reharvest_uses_etags_and_changes_only_what_changed(db, forge):
    issues, _ = serve_github(forge, n_issues=250, n_prs=0, comments=1)
    source = github_source()
    harvest(source)
    before = snapshot()
    forge.reset_log()
    second = harvest(source)
    assert second.pages_unchanged == second.pages
    assert snapshot() == before
    assert all(r["status"] == 304 for r in forge.requests)

    changed = dict(in_window(issues)[5], title="Edited title", updated_at="2025-06-01T00:00:00Z")
    forge.upsert_github_items("vllm-project", "vllm", issues=[changed])
    third = harvest(source)
    assert third.status == RunStatus.DONE
    after = snapshot()
    assert Issue.objects.get(number=str(changed["number"])).title == "Edited title"
    assert [row for row in after[0] if row not in before[0]] == [
        r for r in after[0] if r[3] == str(changed["number"])
    ]


def test_resuming_from_the_checkpoint_gives_no_duplicate_and_no_gap(db, forge):
    serve_github(forge, n_issues=450, n_prs=20, comments=2)
    source = github_source()
    run = harvest_start(source=source, enqueue=False)
    harvest_advance(run_id=run.pk, max_pages=2)
    run.refresh_from_db()
    assert run.status == RunStatus.RUNNING
    assert run.pages == 2
    harvest_advance(run_id=run.pk, max_pages=3)
    harvest_advance(run_id=run.pk)
    resumed = snapshot()
    assert clean_run_snapshot(source) == resumed


def test_an_expired_cursor_restarts_the_listing(db, forge):
    issues, _ = serve_github(forge, n_issues=250, n_prs=0, comments=0)
    source = github_source()
    run = harvest_start(source=source, enqueue=False)
    repo_id = forge.github_repo_id("vllm-project", "vllm")
    bogus = f"{forge.github_api}/repositories/{repo_id}/issues?per_page=100&after=bm9wZQ"
    HarvestRun.objects.filter(pk=run.pk).update(cursor={"phase": "issues", "url": bogus})
    run = harvest_advance(run_id=run.pk)
    assert run.status == RunStatus.DONE
    assert Issue.objects.count() == len(in_window(issues))


def test_nul_bytes_are_cleaned(db, forge):
    issues, _ = serve_github(forge, n_issues=20, n_prs=0, comments=0, nul_in_body=True)
    dirty = [i for i in in_window(issues) if "\x00" in (i["body"] or "")]
    assert dirty, "the fake must serve a body with a NUL byte"
    harvest(github_source())
    stored = Issue.objects.get(number=str(dirty[0]["number"]))
    assert stored.body == dirty[0]["body"].replace("\x00", "")


def test_one_active_run_per_source(db, forge):
    source = github_source()
    harvest_start(source=source, enqueue=False)
    with pytest.raises(ConcordError, match="already being harvested"):
        harvest_start(source=source, enqueue=False)


def test_keyword_set_marks_candidates_with_the_keywords_found(db, forge):
    serve_github(forge, n_issues=120, n_prs=0, comments=0)
    keywords = KeywordSet.objects.create(name="pytorch", keywords=["llama", "quantization", "yi"])
    harvest(github_source(keyword_set=keywords))
    matches = KeywordMatch.objects.select_related("issue")
    assert matches.exists()
    for match in matches:
        text = f"{match.issue.title}\n{match.issue.body}".lower()
        assert all(k in text for k in match.keywords)
    unmatched = Issue.objects.exclude(keyword_matches__isnull=False)
    for issue in unmatched:
        assert "llama" not in f"{issue.title} {issue.body}".lower()


def test_cancel_stops_before_the_next_page(db, forge):
    from ingest.harvest import harvest_cancel

    serve_github(forge, n_issues=350, n_prs=0, comments=0)
    run = harvest_start(source=github_source(), enqueue=False)
    harvest_advance(run_id=run.pk, max_pages=1)
    harvest_cancel(run=run)
    run = harvest_advance(run_id=run.pk)
    assert run.status == RunStatus.CANCELLED
    assert run.pages == 1


def test_harvest_command_shows_progress_and_totals(db, forge, capsys):
    serve_github(forge, n_issues=150, n_prs=5, comments=1)
    call_command(
        "harvest",
        "--host",
        "github",
        "--repo",
        "vllm-project/vllm",
        "--from",
        "2023-01-01",
        "--until",
        "2025-04-30",
    )
    out = capsys.readouterr().out
    assert "] 100% done" in out
    assert "issues   pages" in out
    assert f"done: {Issue.objects.count()} issues" in out


def test_progress_grows_page_by_page_to_one(db, forge):
    serve_github(forge, n_issues=450, n_prs=0, comments=1)
    run = harvest_start(source=github_source(), enqueue=False)
    seen = [run.progress]
    harvest_advance(run_id=run.pk, on_page=lambda r: seen.append(r.progress))
    assert seen == sorted(seen)
    assert seen[0] == 0.0
    assert 0.0 < seen[2] < 0.5  # a few issue pages in: part of the issues half
    assert seen[-1] == 1.0


def test_harvest_command_rejects_a_malformed_repo(db):
    with pytest.raises(CommandError, match="owner/repo"):
        call_command(
            "harvest",
            "--host",
            "github",
            "--repo",
            "vllm",
            "--from",
            "2023-01-01",
            "--until",
            "2025-04-30",
        )
