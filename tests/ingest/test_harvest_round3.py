"""Harvests that survive real trackers, round 3 (issue 30): hangs, partial answers, renames,
clocks. One test per class, on the fake forge over real HTTP, each saying what the tracker does
and what the harvest must do."""

import json
import time
from datetime import UTC, date, datetime, timedelta

import pytest
from django.conf import settings
from django.core.management import call_command
from django.utils import timezone

from concord.errors import Conflict
from ingest.clients import RateLimited
from ingest.harvest import harvest_advance, harvest_start
from ingest.importers import url_list_import
from ingest.models import Comment, HarvestRun, Issue, RunStatus, Source
from tests.fakes.forge import make_gitee_issues, make_github_issues

WINDOW = {"created_from": date(2023, 1, 1), "created_until": date(2025, 4, 30)}
HOSTS = ["rest", "graphql", "gitee"]


def serve(forge, how, n_issues=150, comments=1, owner="vllm-project", repo="vllm"):
    """A tracker on the fake forge, and a source reading it `how` (REST, GraphQL or Gitee)."""
    if how == "gitee":
        issues, notes = make_gitee_issues(
            owner, repo, n_issues, comments, start="2023-02-01", end="2025-03-31"
        )
        forge.add_gitee_repo(owner, repo, issues, notes)
    else:
        issues, notes = make_github_issues(
            owner, repo, n_issues, comments_per_issue=comments, start="2023-01-02", end="2025-04-29"
        )
        forge.add_github_repo(owner, repo, issues, notes)
    host = "gitee" if how == "gitee" else "github"
    token = "a-token" if how == "graphql" else ""
    tracker = Source.objects.create(host=host, owner=owner, repo=repo, token=token, **WINDOW)
    return tracker, issues, notes


def harvest(of, **kw):
    return harvest_advance(run_id=harvest_start(source=of, enqueue=False).pk, **kw)


# -- never hang


@pytest.mark.parametrize("how", HOSTS)
def test_a_trickling_answer_is_cut_off_at_the_request_bound_and_asked_again(
    db, forge, settings, how
):
    settings.HARVEST_REQUEST_SECONDS = 0.3
    tracker, issues, _ = serve(forge, how)
    forge.trickle_on = {1}  # the first answer: a byte every 50 ms, for minutes

    run = harvest(tracker)

    assert run.status == RunStatus.DONE
    assert Issue.objects.count() == len(issues)
    assert forge.requests[1]["ordinal"] == 2  # the same page, asked again


@pytest.mark.parametrize("how", HOSTS)
def test_a_host_that_always_trickles_fails_the_run_in_words(db, forge, settings, how):
    settings.HARVEST_REQUEST_SECONDS, settings.HARVEST_MAX_RETRIES = 0.2, 1
    settings.HARVEST_MAX_RATE_WAITS = 0  # failing on: no wait (test_harvest_trust's 7)
    tracker, _, _ = serve(forge, how)
    forge.trickle_on = set(range(1, 10))

    run = harvest(tracker)

    assert run.status == RunStatus.FAILED
    assert "no whole answer within 0.2 s" in run.error
    assert "still failing after 1 retries" in run.error


@pytest.mark.parametrize("how", HOSTS)
def test_an_answer_cut_off_halfway_is_asked_again(db, forge, how):
    """The connection closes before the body the headers promised has come."""
    tracker, issues, notes = serve(forge, how)
    forge.cut_on = {1, 2}

    run = harvest(tracker)

    assert run.status == RunStatus.DONE
    assert Issue.objects.count() == len(issues)
    assert Comment.objects.count() == len(notes)
    assert forge.request_count > run.requests  # the cut answers, asked again


# -- never crash


@pytest.mark.parametrize("how", HOSTS)
def test_an_html_page_answered_with_200_is_asked_again(db, forge, how):
    tracker, issues, _ = serve(forge, how)
    forge.html_on = {1, 2}

    run = harvest(tracker)

    assert run.status == RunStatus.DONE
    assert Issue.objects.count() == len(issues)


@pytest.mark.parametrize("how", HOSTS)
def test_a_host_answering_html_pages_fails_the_run_in_words(db, forge, settings, how):
    settings.HARVEST_MAX_RETRIES = 1
    settings.HARVEST_MAX_RATE_WAITS = 0  # failing on: no wait (test_harvest_trust's 7)
    tracker, _, _ = serve(forge, how)
    forge.html_on = set(range(1, 10))

    run = harvest(tracker)

    assert run.status == RunStatus.FAILED
    assert "an HTML page instead of JSON (HTTP 200)" in run.error


# -- a run whose process is gone never holds its source


def test_a_run_left_running_by_a_dead_process_is_taken_over_by_the_same_harvest(db, forge):
    tracker, issues, _ = serve(forge, "rest", n_issues=350)
    crashed = harvest_start(source=tracker, enqueue=False)
    harvest_advance(run_id=crashed.pk, max_pages=2)  # then its process died: no heartbeat since
    long_ago = timezone.now() - timedelta(seconds=settings.JOB_STALE_SECONDS + 1)
    HarvestRun.objects.filter(pk=crashed.pk).update(created_at=long_ago, heartbeat_at=long_ago)
    forge.reset_log()

    call_command(
        "harvest",
        *("--host", "github", "--repo", "vllm-project/vllm"),
        *("--from", "2023-01-01", "--until", "2025-04-30"),
    )

    crashed.refresh_from_db()
    assert crashed.status == RunStatus.FAILED
    assert "stopped without finishing: no sign of its process since" in crashed.error
    taken_over = tracker.runs.get(status=RunStatus.DONE)
    assert Issue.objects.count() == len(issues)
    pages = [r["query"].get("page") for r in forge.requests if r["path"].endswith("/issues")]
    assert pages[0] == "3"  # went on from the checkpoint
    assert taken_over.pk != crashed.pk


def test_a_run_with_a_live_heartbeat_still_holds_its_source(db, forge):
    tracker, _, _ = serve(forge, "rest", n_issues=350)
    harvest_advance(run_id=harvest_start(source=tracker, enqueue=False).pk, max_pages=1)
    with pytest.raises(Conflict, match="is already being harvested"):
        harvest_start(source=tracker, enqueue=False)


# -- GraphQL's partial answers, deletions and cursors


@pytest.mark.parametrize("fault", ["null_issue", "null_comment", "timeout"])
def test_a_partial_or_timed_out_graphql_answer_is_asked_again(db, forge, fault):
    tracker, issues, notes = serve(forge, "graphql")
    forge.graphql_fault_on = {1: fault}

    run = harvest(tracker)

    assert run.status == RunStatus.DONE
    assert Issue.objects.count() == len(issues)
    assert Comment.objects.count() == len(notes)
    assert forge.request_count == run.requests + 1 == 3  # the refused answer, asked again


def test_a_graphql_page_too_heavy_for_the_host_is_asked_in_smaller_pages(db, forge, settings):
    """GitHub stops a query after about ten seconds; a page of long issues times out again and
    again at a hundred. The same cursor is asked for 25 issues (then 5, then 1) instead."""
    settings.HARVEST_MAX_RETRIES = 1
    tracker, issues, notes = serve(forge, "graphql", n_issues=120, comments=2)
    forge.graphql_timeout_above = 30

    run = harvest(tracker)

    assert run.status == RunStatus.DONE
    assert Issue.objects.count() == len(issues)
    assert Comment.objects.count() == len(notes)
    queries = [json.loads(r["body"]) for r in forge.requests if b"ConcordIssues(" in r["body"]]
    asked = [query["variables"]["first"] for query in queries]
    assert asked[:3] == [100, 100, 25]  # a hundred, asked again, then a quarter
    assert set(asked[3:]) == {100, 25}  # each page starts at a hundred again


def test_graphql_answering_in_part_every_time_fails_the_run_in_words(db, forge, settings):
    settings.HARVEST_MAX_RETRIES = 2
    settings.HARVEST_MAX_RATE_WAITS = 0  # failing on: no wait (test_harvest_trust's 7)
    tracker, _, _ = serve(forge, "graphql")
    forge.graphql_fault_on = dict.fromkeys(range(1, 100), "null_issue")

    run = harvest(tracker)

    assert run.status == RunStatus.FAILED
    assert "GitHub's GraphQL API answered in part (Something went wrong" in run.error
    assert "still failing after 2 retries" in run.error


def test_an_issue_deleted_before_its_extra_comment_page_leaves_the_rest_of_the_run(db, forge):
    tracker, issues, notes = serve(forge, "graphql", n_issues=50, comments=1)
    busy = issues[-1]
    extra = [
        dict(notes[0], id=9_000_000_000 + k, issue_url=busy["url"], updated_at=busy["created_at"])
        for k in range(150)
    ]
    forge.upsert_github_items(
        "vllm-project", "vllm", issues=[dict(busy, comments=151)], comments=extra
    )
    rest = [i for i in issues if i is not busy]
    forge.on_request = {2: lambda: forge.add_github_repo("vllm-project", "vllm", rest, notes)}

    run = harvest(tracker)

    assert run.status == RunStatus.DONE
    assert Issue.objects.count() == len(issues)  # stored as it was before it went
    assert Comment.objects.filter(issue__number=str(busy["number"])).count() == 100


def test_an_invalid_graphql_cursor_on_resume_restarts_the_listing(db, forge):
    tracker, issues, _ = serve(forge, "graphql", n_issues=350)
    run = harvest_start(source=tracker, enqueue=False)
    harvest_advance(run_id=run.pk, max_pages=2)
    forge.cursor_epoch = 1  # every cursor handed out so far is unknown now

    call_command("harvest", "--resume", str(run.pk))

    run.refresh_from_db()
    assert run.status == RunStatus.DONE
    assert run.restarts == 1
    assert Issue.objects.count() == len(issues)


def test_comment_ids_past_32_bits_are_read_whole(db, forge):
    tracker, issues, notes = serve(forge, "graphql", n_issues=20)
    assert min(n["id"] for n in notes) > 2**31  # GraphQL's databaseId is null for these

    harvest(tracker)

    assert set(Comment.objects.values_list("comment_id", flat=True)) == {n["id"] for n in notes}
    assert set(Issue.objects.values_list("host_id", flat=True)) == {i["id"] for i in issues}


# -- rate limits and clocks


def limited_once(run_id: int) -> float:
    """Advance a run that the host has limited: the wait it is told to take."""
    with pytest.raises(RateLimited) as limited:
        harvest_advance(run_id=run_id)
    return limited.value.wait_seconds


@pytest.mark.parametrize(
    ("kind", "with_data"),
    [("RATE_LIMITED", True), ("RATE_LIMIT", True), ("RATE_LIMITED", False)],
    ids=["RATE_LIMITED", "RATE_LIMIT", "headers-only"],
)
def test_a_graphql_limit_waits_until_its_reset_and_asks_nothing_meanwhile(
    db, forge, settings, kind, with_data
):
    settings.HARVEST_SECONDARY_WAIT_SECONDS = 30  # a limit taken for a secondary waits this
    tracker, issues, _ = serve(forge, "graphql")
    forge.rate_limit, forge.rate_limit_reset_in = 0, 1
    forge.graphql_limit_type, forge.graphql_limit_data = kind, with_data
    run = harvest_start(source=tracker, enqueue=False)

    wait = limited_once(run.pk)

    assert 0 < wait <= 3  # until the reset (and a second), not past it
    assert limited_once(run.pk) <= wait  # still limited: no request spent on it
    assert forge.request_count == 1
    time.sleep(wait)
    assert harvest_advance(run_id=run.pk).status == RunStatus.DONE
    assert Issue.objects.count() == len(issues)


def test_a_graphql_secondary_limit_answered_200_waits_its_retry_after(db, forge):
    tracker, _, _ = serve(forge, "graphql")
    forge.secondary_limit_on, forge.secondary_as_graphql_error, forge.retry_after = {1}, True, 2

    assert limited_once(harvest_start(source=tracker, enqueue=False).pk) == 2
    assert HarvestRun.objects.get().status == RunStatus.WAITING


@pytest.mark.parametrize("host_ahead", [3600, -3600])
def test_a_retry_after_date_is_read_on_the_hosts_clock(db, forge, host_ahead):
    tracker, _, _ = serve(forge, "rest")
    forge.secondary_limit_on, forge.retry_after, forge.retry_after_date = {1}, 2, True
    forge.clock_offset = host_ahead

    wait = limited_once(harvest_start(source=tracker, enqueue=False).pk)

    assert 1 <= wait <= 3  # two seconds on its clock (HTTP dates are whole seconds)


@pytest.mark.parametrize("how", HOSTS)
@pytest.mark.parametrize("host_ahead", [3600, -3600])
def test_a_reset_is_waited_for_on_the_hosts_clock(db, forge, settings, how, host_ahead):
    settings.HARVEST_SECONDARY_WAIT_SECONDS = 30
    tracker, _, _ = serve(forge, how)
    forge.rate_limit, forge.rate_limit_reset_in, forge.clock_offset = 0, 1, host_ahead

    wait = limited_once(harvest_start(source=tracker, enqueue=False).pk)

    assert 0 < wait <= 3  # neither an hour nor at once (which would hammer the limited host)


def test_a_re_harvest_asks_for_changes_since_the_hosts_clock_less_a_margin(db, forge):
    tracker, issues, _ = serve(forge, "graphql")
    forge.clock_offset = -3600  # our clock is an hour ahead of the host's
    assert harvest(tracker).status == RunStatus.DONE
    host_now = datetime.now(UTC) - timedelta(seconds=3600)
    edited = dict(
        issues[7], title="Edited on the host", updated_at=f"{host_now:%Y-%m-%dT%H:%M:%SZ}"
    )
    forge.upsert_github_items("vllm-project", "vllm", issues=[edited])
    forge.reset_log()

    run = harvest(tracker)

    assert run.status == RunStatus.DONE
    assert Issue.objects.get(number=str(edited["number"])).title == "Edited on the host"
    assert forge.request_count == run.requests == 1


# -- renames


@pytest.mark.parametrize("how", ["rest", "graphql"])
def test_a_rename_is_followed_and_recorded_and_the_new_name_finds_the_stored_issues(db, forge, how):
    """REST answers 301 to /repositories/{id}/... (GitHub's redirect); GraphQL answers under the
    old name with the current `nameWithOwner`. Either way the source takes the new name, its
    issues move with it, and a URL list or a harvest in the new name finds them."""
    tracker, issues, notes = serve(forge, how, owner="microsoft", repo="DeepSpeed")
    harvest(tracker)  # stored under the old name, before the rename
    forge.add_github_repo("deepspeedai", "DeepSpeed", issues, notes)
    forge.redirect_github_repo("microsoft", "DeepSpeed", "deepspeedai", "DeepSpeed")

    run = harvest(tracker)

    tracker.refresh_from_db()
    assert run.status == RunStatus.DONE
    assert (tracker.repository, tracker.renamed_from) == (
        "deepspeedai/DeepSpeed",
        "microsoft/DeepSpeed",
    )
    assert set(Issue.objects.values_list("owner", flat=True)) == {"deepspeedai"}
    listed = "https://github.com/deepspeedai/DeepSpeed/issues/{}"
    report = url_list_import(
        text="\n".join(listed.format(i["number"]) for i in issues[:3]),
        name="list.txt",
        fetch_details=False,
    )
    assert (report.created, report.already_known) == (0, 3)
    Source.objects.filter(pk=tracker.pk).delete()  # a fresh source, in the new name
    renamed = Source.objects.create(
        host="github", owner="deepspeedai", repo="DeepSpeed", token=tracker.token, **WINDOW
    )
    assert harvest(renamed).status == RunStatus.DONE
    assert Issue.objects.count() == len(issues)
    assert Comment.objects.count() == len(notes)


# -- nothing lost mid-run


def test_an_issue_deleted_mid_harvest_shifts_the_pages_and_the_run_re_reads_what_moved(db, forge):
    tracker, issues, notes = serve(forge, "rest", n_issues=350)
    newest = max(issues, key=lambda i: i["created_at"])  # on page 1, read before it goes
    rest = [i for i in issues if i is not newest]
    forge.on_request = {2: lambda: forge.add_github_repo("vllm-project", "vllm", rest, notes)}

    run = harvest(tracker)

    assert run.status == RunStatus.DONE
    assert Issue.objects.count() == len(issues)  # the one that moved up to page 1 too
    held = {n["id"] for n in notes if n["issue_url"] != newest["url"]}
    assert held <= set(Comment.objects.values_list("comment_id", flat=True))


@pytest.mark.parametrize("how", ["rest", "gitee"])
def test_a_comment_edited_mid_harvest_shifts_nothing_and_is_read_as_edited(db, forge, how):
    tracker, _, notes = serve(forge, how, n_issues=250)
    issue_pages = 3
    first = min(notes, key=lambda n: (n["updated_at"], n["id"]))
    edited = dict(first, body="edited meanwhile", updated_at="2025-04-30T12:00:00Z")
    upsert = forge.upsert_gitee_items if how == "gitee" else forge.upsert_github_items
    forge.on_request = {issue_pages + 2: lambda: upsert("vllm-project", "vllm", comments=[edited])}

    run = harvest(tracker)

    assert run.status == RunStatus.DONE
    assert Comment.objects.count() == len(notes)
    assert Comment.objects.get(comment_id=first["id"]).body == "edited meanwhile"


@pytest.mark.parametrize("silent", [False, True], ids=["422", "no-next"])
def test_a_re_run_with_nothing_changed_downloads_no_comment_page_again(db, forge, silent):
    """The repository-wide comments listing is capped two pages deep: read by time, it is never
    reached, and an unchanged re-run asks the same URLs, all answered 304 (no rate limit)."""
    tracker, _, notes = serve(forge, "rest", n_issues=350, comments=2)
    forge.comments_page_limit, forge.comments_cap_silent = 2, silent
    assert harvest(tracker).status == RunStatus.DONE
    assert Comment.objects.count() == len(notes) == 700
    forge.reset_log()

    run = harvest(tracker)

    assert run.status == RunStatus.DONE
    assert [r["status"] for r in forge.requests] == [304] * run.requests
    assert run.requests == run.pages_unchanged == 4 + 8  # issue pages, comment pages


def test_a_gitee_deletion_and_a_transfer_in_that_keep_the_total_lose_nothing(db, forge):
    """Gitee's `total_count` stays the same (one issue gone before the page being read, one come
    in further down): consecutive pages overlap, so the issue that moved up is on the next."""
    tracker, issues, notes = serve(forge, "gitee", n_issues=350)
    newest = max(issues, key=lambda i: i["created_at"])
    oldest = min(issues, key=lambda i: i["created_at"])
    came_in = dict(oldest, number="IZZZZZ", id=oldest["id"] + 10**6, title="transferred in")
    after = [i for i in issues if i is not newest] + [came_in]
    forge.on_request = {2: lambda: forge.add_gitee_repo("vllm-project", "vllm", after, notes)}

    run = harvest(tracker)

    assert run.status == RunStatus.DONE
    assert Issue.objects.count() == len(issues) + 1  # the deleted one was stored before it went
    pages = [r["query"] for r in forge.requests if r["path"].endswith("/issues")]
    assert len(pages) == 4  # overlapping by a few issues, still four pages for 351
    assert {p["per_page"] for p in pages[1:]} <= {str(n) for n in range(90, 101)}


@pytest.mark.parametrize("how", HOSTS)
def test_an_answer_trickling_from_its_first_header_byte_is_cut_off_too(db, forge, settings, how):
    settings.HARVEST_REQUEST_SECONDS = 0.3
    tracker, issues, _ = serve(forge, how)
    forge.trickle_headers_on = {1}  # the status line and headers, a byte every 50 ms

    run = harvest(tracker)

    assert run.status == RunStatus.DONE
    assert Issue.objects.count() == len(issues)


def test_a_deletion_during_a_re_run_is_noticed_after_a_page_answered_304(db, forge):
    tracker, issues, notes = serve(forge, "rest", n_issues=350)
    assert harvest(tracker).status == RunStatus.DONE
    by_age = sorted(issues, key=lambda i: i["created_at"], reverse=True)
    newest, moving = by_age[0], by_age[100]  # on page 1; first of page 2
    edited = dict(moving, title="edited before the re-run", updated_at="2025-05-01T00:00:00Z")
    forge.upsert_github_items("vllm-project", "vllm", issues=[edited])
    rest = [edited if i is moving else i for i in issues if i is not newest]
    forge.reset_log()  # page 1 answers 304, then the newest issue goes: page 2 shifts
    forge.on_request = {2: lambda: forge.add_github_repo("vllm-project", "vllm", rest, notes)}

    run = harvest(tracker)

    assert run.status == RunStatus.DONE
    assert forge.requests[0]["status"] == 304
    assert Issue.objects.get(number=str(moving["number"])).title == "edited before the re-run"
