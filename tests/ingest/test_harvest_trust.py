"""Harvests that can be trusted on real trackers (issue 13): one test per numbered case, on the
fake forge over real HTTP. Each says what the tracker does and what the harvest must do."""

from datetime import date

import pytest
from django.core.management import CommandError, call_command

from ingest.clients import RateLimited
from ingest.details import issues_fetch_details
from ingest.harvest import harvest_advance, harvest_start
from ingest.importers import url_list_import
from ingest.models import Comment, HarvestRun, Issue, KeywordMatch, KeywordSet, RunStatus, Source
from ingest.selectors import run_progress
from tests.fakes.forge import make_gitee_issues, make_github_issues

WINDOW = {"created_from": date(2023, 1, 1), "created_until": date(2025, 4, 30)}


def serve(forge, owner="vllm-project", repo="vllm", n_issues=450, comments=0, **kw):
    kw.setdefault("start", "2023-01-02")
    kw.setdefault("end", "2025-04-29")
    issues, notes = make_github_issues(owner, repo, n_issues, comments_per_issue=comments, **kw)
    forge.add_github_repo(owner, repo, issues, notes)
    return issues, notes


def source(owner="vllm-project", repo="vllm", host="github", **extra):
    return Source.objects.create(host=host, owner=owner, repo=repo, **{**WINDOW, **extra})


def harvest(of, **kw):
    return harvest_advance(run_id=harvest_start(source=of, enqueue=False).pk, **kw)


def advance_through_waits(run, limit=20):
    """Advance a run as a worker would, collecting each rate-limit wait it is told to take."""
    waits = []
    for _ in range(limit):
        try:
            run = harvest_advance(run_id=run.pk)
        except RateLimited as exc:
            waits.append(exc.wait_seconds)
        else:
            return run, waits
    raise AssertionError(f"the run never ended: waits {waits}")


# -- 1. a saved cursor the host no longer accepts


def test_1_a_refused_saved_cursor_restarts_the_listing_fresh_and_ends(db, forge):
    issues, _ = serve(forge)
    forge.cursor_after_page = 2
    tracker = source()
    harvest(tracker)  # stores ETags and `next` links, cursors included
    run = harvest_start(source=tracker, enqueue=False)
    harvest_advance(run_id=run.pk, max_pages=3)  # the checkpoint is now an `after=` cursor
    assert "after=" in HarvestRun.objects.get(pk=run.pk).cursor["url"]
    forge.cursor_epoch = 1  # every cursor handed out so far expires
    forge.reset_log()

    run = harvest_advance(run_id=run.pk)

    assert run.status == RunStatus.DONE
    assert run.restarts == 1
    assert forge.request_count < 12  # the refused URL, 5 fresh issue pages, comments: not 7,561
    assert Issue.objects.count() == len(issues)


def test_1_a_host_refusing_every_cursor_fails_in_words_after_a_few_restarts(db, forge, settings):
    serve(forge)
    forge.cursor_after_page, forge.refuse_cursors = 1, True
    settings.HARVEST_MAX_RESTARTS = 2

    run = harvest(source())

    assert run.status == RunStatus.FAILED
    assert "HARVEST_MAX_RESTARTS=2" in run.error
    assert "refused the saved page URL" in run.error
    assert forge.request_count == 6  # (page 1, its refused cursor) x (first walk + 2 restarts)


def test_every_run_is_bounded_no_progress_over_n_requests_fails_in_words(db, forge, settings):
    serve(forge)
    forge.cursor_after_page, forge.refuse_cursors = 2, True
    settings.HARVEST_MAX_RESTARTS, settings.HARVEST_IDLE_REQUESTS = 1000, 4

    run = harvest(source())

    assert run.status == RunStatus.FAILED
    assert run.error.startswith("no progress in ")
    assert "kept returning to pages already walked (deepest page 2" in run.error
    assert forge.request_count < 15


# -- 2. a listing the host caps deep down


@pytest.mark.parametrize("silent", [False, True], ids=["422", "no-next"])
def test_2_a_capped_comment_listing_continues_by_time_and_misses_nothing(db, forge, silent):
    issues, notes = serve(forge, n_issues=300, comments=2)
    forge.comments_page_limit, forge.comments_cap_silent = 2, silent

    run = harvest(source())

    assert run.status == RunStatus.DONE
    assert Comment.objects.count() == len(notes) == 600
    assert Issue.objects.count() == len(issues)
    sinces = {r["query"].get("since") for r in forge.requests if "comments" in r["path"]}
    assert len(sinces) >= 3  # walked on by update time, twice


# -- 3. a 304 on a last page that was exactly full


def test_3_a_304_on_a_full_last_page_still_finds_comments_added_later(db, forge):
    _, notes = serve(forge, n_issues=100, comments=2)  # 200 comments: two full pages
    tracker = source()
    harvest(tracker)
    assert Comment.objects.count() == 200
    later = dict(notes[-1], id=notes[-1]["id"] + 1000, body="added after the first harvest")
    later["created_at"] = later["updated_at"] = "2025-06-01T00:00:00Z"
    forge.upsert_github_items("vllm-project", "vllm", comments=[later])
    forge.reset_log()

    run = harvest(tracker)

    assert run.status == RunStatus.DONE
    assert Comment.objects.filter(comment_id=later["id"]).exists()
    assert Comment.objects.count() == 201
    assert run.pages_unchanged >= 2  # the unchanged pages still cost nothing


# -- 4. a transferred issue


def test_4_a_transferred_issue_keeps_its_identity_and_records_where_it_moved(db, forge):
    serve(forge, "NVIDIA", "Megatron-LM", n_issues=5, comments=1)
    there, _ = serve(forge, "NVIDIA", "Other", n_issues=12, comments=2)
    forge.transfer_github_issue("NVIDIA", "Megatron-LM", 5, "NVIDIA", "Other", 9)
    report = url_list_import(
        text="https://github.com/NVIDIA/Megatron-LM/issues/5", name="list.txt", fetch_details=False
    )

    assert issues_fetch_details(issue_ids=report.issue_ids) == 1

    moved = Issue.objects.get(owner="NVIDIA", repo="Megatron-LM", number="5")
    assert moved.moved_to == "https://github.com/NVIDIA/Other/issues/9"
    assert moved.title == there[8]["title"]
    assert moved.comments.count() == 2
    assert Issue.objects.count() == 1  # no phantom Megatron-LM#9
    forge.reset_log()
    assert issues_fetch_details(issue_ids=report.issue_ids) == 0
    assert forge.request_count == 0  # not sent again on the next sweep


# -- 5. a renamed repository


def test_5_a_renamed_repository_is_recorded_and_a_harvest_under_the_new_name_adds_nothing(
    db, forge
):
    issues, notes = serve(forge, "microsoft", "DeepSpeed", n_issues=150, comments=1)
    tracker = source("microsoft", "DeepSpeed")
    harvest(tracker)  # stored under the old name, before the rename
    forge.add_github_repo("deepspeedai", "DeepSpeed", issues, notes)
    forge.redirect_github_repo("microsoft", "DeepSpeed", "deepspeedai", "DeepSpeed")

    run = harvest(tracker)

    tracker.refresh_from_db()
    assert run.status == RunStatus.DONE
    assert (tracker.owner, tracker.renamed_from) == ("deepspeedai", "microsoft/DeepSpeed")
    assert set(Issue.objects.values_list("owner", flat=True)) == {"deepspeedai"}
    assert Issue.objects.count() == len(issues)
    call_command(
        "harvest",
        *("--host", "github", "--repo", "deepspeedai/DeepSpeed"),
        *("--from", "2023-01-01", "--until", "2025-04-30"),
    )
    assert Issue.objects.count() == len(issues)
    assert Comment.objects.count() == len(notes)


# -- 6. Gitee pages shift when an issue is deleted mid-harvest


def test_6_a_gitee_issue_deleted_mid_harvest_shifts_pages_and_the_run_re_walks_them(db, forge):
    issues, _ = make_gitee_issues("ascend", "MindSpeed", 350, start="2023-02-01", end="2025-03-31")
    forge.add_gitee_repo("ascend", "MindSpeed", issues, [])
    tracker = source("ascend", "MindSpeed", host="gitee")
    run = harvest_start(source=tracker, enqueue=False)
    harvest_advance(run_id=run.pk, max_pages=1)  # the newest 100
    newest = max(issues, key=lambda i: i["created_at"])
    forge.add_gitee_repo("ascend", "MindSpeed", [i for i in issues if i is not newest], [])

    run = harvest_advance(run_id=run.pk)

    assert run.status == RunStatus.DONE
    assert Issue.objects.count() == len(issues)  # the deleted one was stored before it went
    pages = [r["query"]["page"] for r in forge.requests if r["path"].endswith("/issues")]
    assert pages.count("1") == 2  # page 2 showed one fewer in total_count: page 1 again


# -- 7. repeated secondary rate limits


def test_7_secondary_limits_back_off_with_growth_and_give_up_after_the_limit(db, forge, settings):
    serve(forge, n_issues=50)
    forge.secondary_limit_on, forge.retry_after = set(range(1, 100)), None
    settings.HARVEST_SECONDARY_WAIT_SECONDS, settings.HARVEST_MAX_RATE_WAITS = 0.5, 4

    run, waits = advance_through_waits(harvest_start(source=source(), enqueue=False))

    assert waits == [0.5, 1.0, 2.0, 4.0]
    assert run.status == RunStatus.FAILED
    assert "kept refusing with a rate limit: 5 answers in a row" in run.error
    assert "HARVEST_MAX_RATE_WAITS=4" in run.error


def test_7_a_secondary_limit_in_githubs_older_words_is_waited_for(db, forge, settings):
    """ "abuse detection mechanism", a 403 without retry-after: a limit, not a refusal."""
    serve(forge, n_issues=50)
    forge.secondary_limit_on, forge.retry_after = {1}, None
    forge.secondary_in_old_words = True
    settings.HARVEST_SECONDARY_WAIT_SECONDS = 0.5

    run, waits = advance_through_waits(harvest_start(source=source(), enqueue=False))

    assert waits == [0.5]
    assert run.status == RunStatus.DONE


def test_7_a_used_up_limit_answered_with_a_422_waits_for_the_reset(db, forge):
    """GitHub has answered a used-up limit with a 422 (a tokenless deep page): read as a refused
    page, the listing would start again from the first page."""
    serve(forge, n_issues=50)
    forge.rate_limit, forge.rate_limit_reset_in, forge.rate_limit_status = 0, 1, 422

    with pytest.raises(RateLimited):
        harvest(source())
    assert HarvestRun.objects.get().status == RunStatus.WAITING


def test_7_the_harvest_command_gives_up_with_the_reason(db, forge, settings):
    serve(forge, n_issues=50)
    forge.secondary_limit_on, forge.retry_after = set(range(1, 100)), None
    settings.HARVEST_SECONDARY_WAIT_SECONDS, settings.HARVEST_MAX_RATE_WAITS = 0.01, 2
    with pytest.raises(CommandError, match="kept refusing with a rate limit"):
        call_command("harvest", "--source", str(source().pk))


def test_7_a_page_stored_between_limits_starts_the_count_again(db, forge, settings):
    serve(forge, n_issues=350)
    forge.secondary_limit_on, forge.retry_after = {1, 3, 5}, None
    settings.HARVEST_SECONDARY_WAIT_SECONDS, settings.HARVEST_MAX_RATE_WAITS = 0.5, 1

    run, waits = advance_through_waits(harvest_start(source=source(), enqueue=False))

    assert waits == [0.5, 0.5, 0.5]
    assert run.status == RunStatus.DONE


def test_7_a_host_failing_for_minutes_is_waited_out_and_the_run_goes_on_from_its_checkpoint(
    db, forge, settings
):
    """5xx beyond the client's retries (a GitHub incident lasts minutes): the run waits, longer
    each time, says why on its page, and then goes on from the page it had reached."""
    issues, _ = serve(forge, n_issues=350)
    settings.HARVEST_MAX_RETRIES, settings.HARVEST_SECONDARY_WAIT_SECONDS = 1, 0.5
    forge.fail_5xx_on = set(range(3, 3 + 2 * 3))  # pages 1 and 2; page 3 fails 3 x 2 tries

    run = harvest_start(source=source(), enqueue=False)
    with pytest.raises(RateLimited):
        harvest_advance(run_id=run.pk)
    run.refresh_from_db()
    assert run.status == RunStatus.WAITING
    assert run.wait_reason.startswith("GitHub failing: ")
    assert "HTTP 502" in run_progress(run)["rate_limit"]
    reached = run.cursor

    run, waits = advance_through_waits(run)
    assert waits == [1.0, 2.0]
    assert run.status == RunStatus.DONE
    assert Issue.objects.count() == len(issues)
    pages = [r["query"].get("page") for r in forge.requests if r["path"].endswith("/issues")]
    assert pages.count(None) == 1  # the first page (no `page=`): not walked again
    assert reached["url"] is not None


def test_7_a_host_that_keeps_failing_fails_the_run_saying_so(db, forge, settings):
    serve(forge, n_issues=50)
    settings.HARVEST_MAX_RETRIES, settings.HARVEST_SECONDARY_WAIT_SECONDS = 1, 0.5
    settings.HARVEST_MAX_RATE_WAITS = 3
    forge.fail_5xx_on = set(range(1, 100))

    run, waits = advance_through_waits(harvest_start(source=source(), enqueue=False))

    assert waits == [0.5, 1.0, 2.0]
    assert run.status == RunStatus.FAILED
    assert "GitHub kept failing: 4 times in a row, the last HTTP 502" in run.error
    assert (run.wait_reason, run.waiting_until) == ("", None)


# -- 8. the page after the window


def test_8_no_request_is_spent_past_the_window(db, forge):
    serve(forge, n_issues=600, comments=1, start="2020-01-01")  # half of it before the window
    tracker = source()
    run = harvest(tracker)
    assert run.status == RunStatus.DONE
    assert forge.request_count == run.requests  # nothing fetched and dropped
    forge.reset_log()
    again = harvest(tracker)
    assert forge.request_count == again.requests == again.pages_unchanged


# -- 9. a window in the source's time zone


def test_9_a_gitee_window_is_read_in_the_sources_time_zone(db, forge):
    issues, _ = make_gitee_issues(
        "mindspore", "mindformers", 400, start="2024-02-25", end="2024-04-05"
    )
    forge.add_gitee_repo("mindspore", "mindformers", issues, [])
    window = {"created_from": date(2024, 3, 1), "created_until": date(2024, 3, 31)}
    tracker = source("mindspore", "mindformers", host="gitee", time_zone="Asia/Shanghai", **window)

    assert harvest(tracker).status == RunStatus.DONE

    # Gitee shows +08:00 stamps: the window's days are the dates written there
    shown = {i["number"] for i in issues if "2024-03-01" <= i["created_at"][:10] <= "2024-03-31"}
    assert set(Issue.objects.values_list("number", flat=True)) == shown
    utc = {i["number"] for i in issues if "2024-03-01" <= _utc_day(i["created_at"]) <= "2024-03-31"}
    assert utc != shown  # the test would notice a window read in UTC
    assert "(Asia/Shanghai)" in str(tracker)


def _utc_day(stamp: str) -> str:
    from datetime import UTC, datetime

    return datetime.fromisoformat(stamp).astimezone(UTC).date().isoformat()


@pytest.mark.parametrize(
    ("host", "given", "kept"),
    [
        ("gitee", "", "Asia/Shanghai"),
        ("github", "", "UTC"),
        ("github", "Asia/Shanghai", "Asia/Shanghai"),
    ],
)
def test_9_a_new_source_takes_the_zone_its_host_shows_unless_told(client, staff, host, given, kept):
    client.force_login(staff)
    form = {
        "host": host,
        "repository": "ascend/MindSpeed",
        "created_from": "2024-03-01",
        "created_until": "2024-03-31",
        "time_zone": given,
    }
    response = client.post("/ingest/sources/new/", form)
    assert response.status_code == 302, response.content.decode()[:2000]
    assert Source.objects.get().time_zone == kept
    assert f"2024-03-31 ({kept})" in client.get(response["Location"]).content.decode()


def test_9_the_api_takes_a_zone_and_refuses_one_that_does_not_exist(client, staff):
    client.force_login(staff)
    new = {
        "host": "gitee",
        "repository": "mindspore/mindformers",
        "created_from": "2024-03-01",
        "created_until": "2024-03-31",
    }
    bad = client.post("/api/sources/", {**new, "time_zone": "Mars/Olympus"}, "application/json")
    assert bad.status_code == 400
    assert "'Mars/Olympus' is not a time zone" in bad.json()["fields"]["time_zone"][0]
    made = client.post("/api/sources/", new, "application/json")
    assert made.status_code == 201, made.content
    assert made.json()["time_zone"] == "Asia/Shanghai"


# -- keyword candidates in Chinese and mixed text, end to end


def test_a_gitee_harvest_marks_chinese_and_mixed_candidates(db, forge):
    issues, _ = make_gitee_issues(
        "mindspore", "mindformers", 4, start="2024-03-02", end="2024-03-20"
    )
    titles = ["使用deepspeed训练时报错", "基于llama的微调", "MindFormers接口报错", "文档错别字"]
    issues = [dict(i, title=t, body=None) for i, t in zip(issues, titles, strict=True)]
    forge.add_gitee_repo("mindspore", "mindformers", issues, [])
    keywords = KeywordSet.objects.create(
        name="ms", keywords=["DeepSpeed", "LLaMA", "微调", "mindformers"]
    )

    harvest(source("mindspore", "mindformers", host="gitee", keyword_set=keywords))

    matched = {m.issue.title: m.keywords for m in KeywordMatch.objects.select_related("issue")}
    assert matched == {
        "使用deepspeed训练时报错": ["DeepSpeed"],
        "基于llama的微调": ["LLaMA", "微调"],
        "MindFormers接口报错": ["mindformers"],
    }


# -- GitHub at the request floor: GraphQL with a token


def test_graphql_harvest_stores_what_rest_stores_at_the_request_floor(db, forge):
    issues, notes = serve(forge, n_issues=420, comments=2, n_prs=80, start="2022-06-01")
    busy = next(i for i in issues if "pull_request" not in i and i["created_at"] > "2024")
    extra = [
        dict(
            notes[0],
            id=9_000_000_000 + k,
            issue_url=busy["url"],
            body=f"reply {k}",
            created_at=busy["created_at"],
            updated_at=busy["created_at"],
        )
        for k in range(250)
    ]
    busy = dict(busy, comments=busy["comments"] + len(extra))  # 252 comments on one issue
    # an account since deleted: REST names it `ghost`, GraphQL gives a null author
    busy["user"] = extra[0]["user"] = {**busy["user"], "login": "ghost"}
    forge.upsert_github_items("vllm-project", "vllm", issues=[busy], comments=extra)
    tracker = source()
    rest = harvest(tracker)
    by_rest = stored_rows()
    Issue.objects.all().delete()
    tracker.runs.all().delete()
    Source.objects.filter(pk=tracker.pk).update(token="a-token")
    tracker.refresh_from_db()
    forge.reset_log()

    run = harvest(tracker)

    wanted = [i for i in issues if "pull_request" not in i and i["created_at"] >= "2023"]
    floor = -(-len(wanted) // 100) + 2  # plus two pages for the 152 comments past the first 100
    assert run.status == RunStatus.DONE
    assert stored_rows() == by_rest
    assert forge.request_count == run.requests == floor
    assert all(r["path"].endswith("/graphql") for r in forge.requests)
    assert rest.requests > 2 * floor  # REST reads pages shared with PRs and old issues
    assert run.pull_requests_skipped == 0


def test_graphql_re_harvest_asks_only_for_what_changed_since_the_last_run(db, forge):
    issues, notes = serve(forge, n_issues=300, comments=1)
    tracker = source(token="a-token")
    harvest(tracker)
    changed = dict(issues[42], title="Edited", updated_at="2099-01-01T00:00:00Z")
    note = dict(notes[0], id=notes[-1]["id"] + 1, issue_url=changed["url"], body="new reply")
    note["updated_at"] = note["created_at"] = "2099-01-01T00:00:00Z"
    forge.upsert_github_items("vllm-project", "vllm", issues=[changed], comments=[note])
    forge.reset_log()

    run = harvest(tracker)

    assert run.status == RunStatus.DONE
    assert forge.request_count == run.requests == 1
    assert Issue.objects.get(number=str(changed["number"])).title == "Edited"
    assert Comment.objects.filter(comment_id=note["id"]).exists()
    assert Issue.objects.count() == len(issues)


def test_graphql_resumes_and_waits_like_rest(db, forge):
    issues, _ = serve(forge, n_issues=350, comments=1)
    forge.secondary_limit_on, forge.retry_after = {2}, 1
    run = harvest_start(source=source(token="a-token"), enqueue=False)
    run, waits = advance_through_waits(run)
    assert waits == [1]
    assert run.status == RunStatus.DONE
    assert Issue.objects.count() == len(issues)


def test_graphql_with_a_refused_token_fails_clearly(db, forge):
    serve(forge, n_issues=10)
    forge.token = "the-right-token"
    run = harvest(source(token="revoked"))
    assert run.status == RunStatus.FAILED
    assert "token was refused (401" in run.error


def stored_rows():
    issues = Issue.objects.values_list(
        "number", "title", "body", "author", "state", "labels", "created_at", "comment_count"
    )
    notes = Comment.objects.values_list(
        "comment_id", "issue__number", "author", "body", "updated_at"
    )
    return sorted(issues), sorted(notes)


def test_a_rest_checkpoint_resumed_with_a_token_starts_graphql_afresh(db, forge):
    issues, _ = serve(forge, n_issues=350, comments=1)
    tracker = source()
    run = harvest_start(source=tracker, enqueue=False)
    harvest_advance(run_id=run.pk, max_pages=2)  # REST, no token
    Source.objects.filter(pk=tracker.pk).update(token="a-token")
    run = harvest_advance(run_id=run.pk)
    assert run.status == RunStatus.DONE
    assert run.restarts == 1
    assert Issue.objects.count() == len(issues)


# -- a comment id another issue holds


@pytest.mark.parametrize("token", ["", "a-token"])  # REST and GraphQL
def test_a_harvest_never_moves_a_comment_from_the_issue_that_holds_it(db, forge, token):
    """Comments are unique by host + id and shared by every project holding their issue: a
    tracker (or a forged listing) that shows a stored comment's id under another issue neither
    moves it nor rewrites it."""
    forge.token = token or None
    _, notes = serve(forge, "NVIDIA", "Megatron-LM", n_issues=5, comments=1)
    harvest(source("NVIDIA", "Megatron-LM", token=token))
    held = Comment.objects.get(comment_id=notes[0]["id"])
    serve(forge, "NVIDIA", "Other", n_issues=5, comments=1)
    forged = dict(
        notes[0],
        issue_url=f"{forge.github_api}/repos/NVIDIA/Other/issues/2",
        body="taken over",
        updated_at="2025-06-01T00:00:00Z",
    )
    forge.upsert_github_items("NVIDIA", "Other", comments=[forged])

    run = harvest(source("NVIDIA", "Other", token=token))

    assert run.status == RunStatus.DONE
    note = Comment.objects.get(comment_id=notes[0]["id"])
    assert (note.issue_id, note.body, note.updated_at) == (
        held.issue_id,
        held.body,
        held.updated_at,
    )
    assert note.issue.repo == "Megatron-LM"
    assert Comment.objects.filter(issue__repo="Other").count() == 5  # its own comments, stored
