"""Tests of the fake forge itself, over real sockets with urllib (no database, no Django).

The harvester's tests trust this fake to behave like GitHub and Gitee (forge-apis.md §5.10), so
each behaviour it promises is pinned here: paging and links, cursors and the deep-page 422,
PR mixing, both comment endpoints, rate limits, faults, ETags, auth, 404s and the 301.
"""

from __future__ import annotations

import json
import re
import threading
import time
import urllib.error
import urllib.request
from urllib.parse import parse_qs, urlsplit

import pytest

from tests.fakes.forge import FakeForge, make_gitee_issues, make_github_issues

GH_ISSUES, GH_COMMENTS = make_github_issues(
    "vllm-project", "vllm", 200, n_prs=50, comments_per_issue=2, nul_in_body=True
)
GITEE_ISSUES, GITEE_COMMENTS = make_gitee_issues(
    "ascend", "MindSpeed", 80, comments_per_issue=1, n_pr_comments=3
)
VLLM = "/repos/vllm-project/vllm"
MINDSPEED = "/repos/ascend/MindSpeed"
ALL_DESC = "/issues?state=all&sort=created&direction=desc"


class _NoRedirect(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, *args, **kwargs):
        return None  # the tests look at the 301 itself


_OPENER = urllib.request.build_opener(_NoRedirect)


def fetch(url: str, headers: dict | None = None) -> tuple[int, dict, bytes]:
    """GET without following redirects: (status, headers with lower-case names, body)."""
    head = {"User-Agent": "concord-tests", **(headers or {})}
    request = urllib.request.Request(url, headers=head)  # noqa: S310 - http://127.0.0.1 only
    try:
        with _OPENER.open(request, timeout=5) as resp:
            return resp.status, {k.lower(): v for k, v in resp.headers.items()}, resp.read()
    except urllib.error.HTTPError as err:
        with err:
            return err.code, {k.lower(): v for k, v in err.headers.items()}, err.read()


def get_json(url: str, headers: dict | None = None):
    status, head, body = fetch(url, headers)
    assert status == 200, (status, body[:300])
    return head, json.loads(body)


def links(head: dict) -> dict[str, str]:
    return {rel: url for url, rel in re.findall(r'<([^>]+)>; rel="(\w+)"', head.get("link", ""))}


def walk(url: str) -> list[tuple[dict, list]]:
    """Follow rel="next" verbatim until it is gone, as a harvester must."""
    pages = []
    while url:
        head, items = get_json(url)
        pages.append((head, items))
        url = links(head).get("next")
    return pages


@pytest.fixture(scope="module")
def server():
    with FakeForge() as forge:
        forge.add_github_repo("vllm-project", "vllm", GH_ISSUES, GH_COMMENTS)
        forge.add_gitee_repo("ascend", "MindSpeed", GITEE_ISSUES, GITEE_COMMENTS)
        small, notes = make_github_issues("deepspeedai", "DeepSpeed", 10, comments_per_issue=1)
        forge.add_github_repo("deepspeedai", "DeepSpeed", small, notes)
        forge.redirect_github_repo("microsoft", "DeepSpeed", "deepspeedai", "DeepSpeed")
        yield forge


@pytest.fixture
def forge(server):
    """The shared server with every knob off and an empty log: tests cannot leak faults."""
    server.reset_knobs()
    server.reset_log()
    yield server
    server.reset_knobs()


# ----------------------------------------------------------------------------- GitHub paging


def test_issue_walk_follows_links_to_the_end(forge):
    pages = walk(forge.github_api + VLLM + ALL_DESC + "&per_page=100")
    assert [len(items) for _, items in pages] == [100, 100, 50]
    numbers = [item["number"] for _, items in pages for item in items]
    assert numbers == sorted((i["number"] for i in GH_ISSUES), reverse=True)
    rels = [sorted(links(head)) for head, _ in pages]
    assert rels == [["last", "next"], ["first", "last", "next", "prev"], ["first", "prev"]]
    base = f"{forge.github_api}/repositories/{forge.github_repo_id('vllm-project', 'vllm')}/issues"
    first = links(pages[0][0])
    assert first["next"].startswith(base + "?")
    assert parse_qs(urlsplit(first["next"]).query) == {
        "state": ["all"],
        "sort": ["created"],
        "direction": ["desc"],
        "per_page": ["100"],
        "page": ["2"],
    }
    assert parse_qs(urlsplit(first["last"]).query)["page"] == ["3"]


def test_list_headers_are_githubs(forge):
    head, _ = get_json(forge.github_api + VLLM + ALL_DESC)
    assert head["content-type"].startswith("application/json")
    assert head["x-github-api-version-selected"] == "2022-11-28"
    assert head["x-ratelimit-resource"] == "core"
    assert int(head["x-ratelimit-reset"]) > time.time()
    assert re.fullmatch(r'W/"[0-9a-f]{32}"', head["etag"])


def test_per_page_defaults_to_30_and_caps_at_100(forge):
    _, items = get_json(forge.github_api + VLLM + ALL_DESC)
    assert len(items) == 30
    _, items = get_json(forge.github_api + VLLM + ALL_DESC + "&per_page=500")
    assert len(items) == 100


def test_pull_requests_are_mixed_in_and_marked(forge):
    items = [
        i for _, page in walk(forge.github_api + VLLM + ALL_DESC + "&per_page=100") for i in page
    ]
    prs = [item for item in items if "pull_request" in item]
    assert len(prs) == 50
    assert all("/pull/" in pr["html_url"] for pr in prs)
    assert all("/issues/" in i["html_url"] for i in items if "pull_request" not in i)
    _, single = get_json(f"{forge.github_api}{VLLM}/issues/{prs[0]['number']}")
    assert single["pull_request"]["html_url"].endswith(f"/pull/{prs[0]['number']}")


def test_state_filter_and_since_on_updated_at(forge):
    _, items = get_json(forge.github_api + VLLM + "/issues?per_page=100")  # default: open
    assert {item["state"] for item in items} == {"open"}
    since = "2024-06-01T00:00:00Z"
    url = f"{forge.github_api}{VLLM}/issues?state=all&sort=updated&direction=asc&since={since}"
    got = [i for _, page in walk(url + "&per_page=100") for i in page]
    expected = [i for i in GH_ISSUES if i["updated_at"] >= since]
    assert len(got) == len(expected) > 0
    stamps = [item["updated_at"] for item in got]
    assert stamps == sorted(stamps)


def test_cursor_paging_takes_over_and_page_numbers_422(forge):
    forge.cursor_after_page = 2
    pages = walk(forge.github_api + VLLM + ALL_DESC + "&per_page=50")
    numbers = [item["number"] for _, items in pages for item in items]
    assert numbers == sorted((i["number"] for i in GH_ISSUES), reverse=True)
    second_next = parse_qs(urlsplit(links(pages[1][0])["next"]).query)
    assert "after" in second_next
    assert "page" not in second_next
    assert all("last" not in links(head) for head, _ in pages)
    status, _, body = fetch(forge.github_api + VLLM + ALL_DESC + "&per_page=50&page=3")
    assert status == 422
    assert json.loads(body) == {
        "message": "Pagination with the page parameter is not supported for large datasets, "
        "please use cursor based pagination (after/before)",
        "documentation_url": "https://docs.github.com/rest/issues/issues#list-repository-issues",
        "status": "422",
    }


def test_before_cursor_pages_backwards(forge):
    forge.cursor_after_page = 1
    first_head, first = get_json(forge.github_api + VLLM + ALL_DESC + "&per_page=50")
    second_head, _ = get_json(links(first_head)["next"])
    _, back = get_json(links(second_head)["prev"])
    assert "before=" in links(second_head)["prev"]
    assert [i["number"] for i in back] == [i["number"] for i in first]


def test_bad_cursor_is_a_422(forge):
    status, _, _ = fetch(forge.github_api + VLLM + ALL_DESC + "&after=bm9wZQ%3D%3D")
    assert status == 422


# ----------------------------------------------------------------------------- GitHub comments


def test_repo_comments_include_pr_comments(forge):
    url = forge.github_api + VLLM + "/issues/comments?sort=updated&direction=asc&per_page=100"
    pages = walk(url)
    comments = [c for _, page in pages for c in page]
    assert len(comments) == len(GH_COMMENTS) == 500
    stamps = [c["updated_at"] for c in comments]
    assert stamps == sorted(stamps)
    pr_numbers = {i["number"] for i in GH_ISSUES if "pull_request" in i}
    on_prs = [c for c in comments if int(c["issue_url"].rsplit("/", 1)[1]) in pr_numbers]
    assert len(on_prs) == 100
    assert all(re.search(r"/issues/\d+$", c["issue_url"]) for c in comments)
    assert links(pages[0][0])["next"].startswith(forge.github_api + "/repositories/")


def test_repo_comments_since(forge):
    since = "2025-01-01T00:00:00Z"
    url = f"{forge.github_api}{VLLM}/issues/comments?sort=updated&since={since}&per_page=100"
    comments = [c for _, page in walk(url) for c in page]
    assert len(comments) == sum(c["updated_at"] >= since for c in GH_COMMENTS) > 0


def test_repo_comments_deep_page_422_when_limited(forge):
    forge.comments_page_limit = 2
    status, _, body = fetch(forge.github_api + VLLM + "/issues/comments?per_page=100&page=3")
    assert status == 422
    assert json.loads(body)["message"].startswith("In order to keep the API fast")


def test_issue_comments_in_id_order(forge):
    issue = next(i for i in GH_ISSUES if "pull_request" not in i)
    head, comments = get_json(f"{forge.github_api}{VLLM}/issues/{issue['number']}/comments")
    assert "link" not in head  # one page: no link header at all
    assert len(comments) == issue["comments"] == 2
    assert [c["id"] for c in comments] == sorted(c["id"] for c in comments)
    assert {c["issue_url"] for c in comments} == {issue["url"]}


# ----------------------------------------------------------------------------- GitHub errors


def test_github_404_bodies_and_case_insensitive_names(forge):
    status, _, body = fetch(forge.github_api + "/repos/nobody/nothing/issues")
    assert status == 404
    assert json.loads(body)["message"] == "Not Found"
    assert "documentation_url" in json.loads(body)
    assert fetch(forge.github_api + VLLM + "/issues/99999")[0] == 404
    assert fetch(forge.github_api + "/repos/VLLM-Project/VLLM/issues")[0] == 200


def test_redirect_301_to_the_new_repo(forge):
    """As GitHub does, under the repository's id; `redirect_by_name` names the new path."""
    status, head, body = fetch(forge.github_api + "/repos/Microsoft/deepspeed/issues?state=all")
    assert status == 301
    repo_id = forge.github_repo_id("deepspeedai", "DeepSpeed")
    assert head["location"] == forge.github_api + f"/repositories/{repo_id}/issues?state=all"
    assert json.loads(body)["message"] == "Moved Permanently"
    _, items = get_json(head["location"])
    assert len(items) == 10
    forge.redirect_by_name = True
    _, head, _ = fetch(forge.github_api + "/repos/Microsoft/deepspeed/issues?state=all")
    assert head["location"] == forge.github_api + "/repos/deepspeedai/DeepSpeed/issues?state=all"


@pytest.mark.parametrize("status", [403, 429])
def test_primary_rate_limit_then_reset_and_refill(forge, status):
    forge.rate_limit, forge.rate_limit_status, forge.rate_limit_reset_in = 2, status, 0.01
    url = forge.github_api + VLLM + ALL_DESC
    assert fetch(url)[1]["x-ratelimit-remaining"] == "1"
    assert fetch(url)[1]["x-ratelimit-remaining"] == "0"
    code, head, body = fetch(url)
    assert code == status
    assert head["x-ratelimit-remaining"] == "0"
    assert json.loads(body)["message"].startswith("API rate limit exceeded")
    reset = int(head["x-ratelimit-reset"])
    time.sleep(max(0.0, reset - time.time()) + 0.01)
    code, head, _ = fetch(url)
    assert (code, head["x-ratelimit-remaining"]) == (200, "4999")


def test_secondary_limit_with_and_without_retry_after(forge):
    forge.secondary_limit_on = {2, 4}
    url = forge.github_api + VLLM + ALL_DESC
    assert fetch(url)[0] == 200
    status, head, body = fetch(url)
    assert (status, head["retry-after"]) == (403, "1")
    assert json.loads(body)["message"].startswith("You have exceeded a secondary rate limit")
    assert head["x-ratelimit-remaining"] != "0"
    forge.retry_after = None
    assert fetch(url)[0] == 200
    status, head, _ = fetch(url)
    assert status == 403
    assert "retry-after" not in head


def test_5xx_injection(forge):
    forge.fail_5xx_on = {1, 3}
    url = forge.github_api + VLLM + ALL_DESC
    status, head, body = fetch(url)
    assert (status, head["content-type"]) == (502, "text/html")
    assert b"502 Bad Gateway" in body
    assert fetch(url)[0] == 200
    forge.fail_5xx_status = 503
    status, _, body = fetch(url)
    assert status == 503
    assert json.loads(body)["message"]


def test_etag_304_is_free_with_a_token_only(forge):
    forge.rate_limit = 10
    url = forge.github_api + VLLM + ALL_DESC
    signed = {"Authorization": "Bearer any"}
    _, head, _ = fetch(url, signed)
    status, again, body = fetch(url, {**signed, "If-None-Match": head["etag"]})
    assert (status, body, again["etag"]) == (304, b"", head["etag"])
    assert again["x-ratelimit-remaining"] == "9"
    assert forge.rate_limit == 9
    status, again, _ = fetch(url, {"If-None-Match": head["etag"]})  # no Authorization header
    assert (status, again["x-ratelimit-remaining"]) == (304, "8")
    other = fetch(url + "&page=2")[1]["etag"]
    assert other != head["etag"]


def test_github_token(forge):
    forge.token = "s3cret"
    url = forge.github_api + VLLM + ALL_DESC
    status, _, body = fetch(url)
    assert status == 401
    assert json.loads(body)["message"] == "Bad credentials"
    assert fetch(url, {"Authorization": "Bearer wrong"})[0] == 401
    assert fetch(url, {"Authorization": "Bearer s3cret"})[0] == 200
    assert fetch(url, {"Authorization": "token s3cret"})[0] == 200


def test_nul_byte_body_travels_escaped(forge):
    issue = next(i for i in GH_ISSUES if i["body"] and "\x00" in i["body"])
    status, _, raw = fetch(f"{forge.github_api}{VLLM}/issues/{issue['number']}")
    assert status == 200
    assert b"\\u0000" in raw
    assert "\x00" in json.loads(raw)["body"]


# ----------------------------------------------------------------------------- Gitee


def test_gitee_pages_totals_and_empty_past_the_end(forge):
    url = forge.gitee_api + MINDSPEED + "/issues?state=all&sort=created&direction=desc"
    head, items = get_json(url)
    assert len(items) == 20
    assert (head["total_count"], head["total_page"]) == ("80", "4")
    numbers = [i["number"] for p in range(1, 5) for i in get_json(f"{url}&page={p}")[1]]
    assert sorted(numbers) == sorted(i["number"] for i in GITEE_ISSUES)
    head, items = get_json(url + "&page=5")
    assert items == []
    assert head["total_page"] == "4"
    head, items = get_json(url + "&per_page=500")
    assert len(items) == 80
    assert head["total_page"] == "1"


def test_gitee_states(forge):
    url = forge.gitee_api + MINDSPEED + "/issues?per_page=100"
    counts = {}
    for state in ("open", "progressing", "closed", "rejected"):
        _, items = get_json(f"{url}&state={state}")
        assert {i["state"] for i in items} <= {state}
        counts[state] = len(items)
    assert sum(counts.values()) == 80
    assert all(counts.values())
    assert len(get_json(url)[1]) == counts["open"]  # the default state is open


def test_gitee_string_ids_and_cst_timestamps(forge):
    _, items = get_json(forge.gitee_api + MINDSPEED + "/issues?state=all&per_page=100")
    assert all(re.fullmatch(r"I[0-9A-Z]{5}", i["number"]) for i in items)
    assert all(
        i["created_at"].endswith("+08:00") and i["updated_at"].endswith("+08:00") for i in items
    )
    assert all((i["finished_at"] is None) == (i["state"] in ("open", "progressing")) for i in items)


def test_gitee_ids_are_case_sensitive(forge):
    number = next(i["number"] for i in GITEE_ISSUES if re.search("[A-Z]", i["number"][1:]))
    _, issue = get_json(f"{forge.gitee_api}{MINDSPEED}/issues/{number}")
    assert issue["number"] == number
    status, _, body = fetch(f"{forge.gitee_api}{MINDSPEED}/issues/{number.lower()}")
    assert (status, json.loads(body)) == (404, {"message": "404 Not Found"})


def test_gitee_unknown_repo(forge):
    status, _, body = fetch(forge.gitee_api + "/repos/nobody/nothing/issues")
    assert (status, json.loads(body)) == (404, {"message": "Not Found Project"})


def test_gitee_comment_endpoints(forge):
    head, comments = get_json(forge.gitee_api + MINDSPEED + "/issues/comments?per_page=100")
    assert head["total_count"] == "83"
    assert len(comments) == 83
    on_prs = [c for c in comments if c["target"]["issue"] is None]
    assert len(on_prs) == 3
    assert all(c["target"]["pull_request"] for c in on_prs)
    issue = next(i for i in GITEE_ISSUES if i["comments"])
    _, own = get_json(f"{forge.gitee_api}{MINDSPEED}/issues/{issue['number']}/comments")
    assert [c["target"]["issue"]["number"] for c in own] == [issue["number"]]


def test_gitee_token_in_query_or_header(forge):
    forge.token = "s3cret"
    url = forge.gitee_api + MINDSPEED + "/issues"
    status, _, body = fetch(url)
    assert (status, json.loads(body)) == (
        401,
        {"message": "401 Unauthorized: Access token does not exist"},
    )
    assert fetch(url + "?access_token=s3cret")[0] == 200
    assert fetch(url, {"Authorization": "token s3cret"})[0] == 200


def test_gitee_rate_limit(forge):
    forge.rate_limit = 1
    url = forge.gitee_api + MINDSPEED + "/issues"
    assert fetch(url)[0] == 200
    status, head, body = fetch(url)
    assert (status, head["x-ratelimit-remaining"]) == (403, "0")
    assert json.loads(body) == {"message": "Rate Limit Exceeded"}


# ----------------------------------------------------------------------------- the server


def test_request_log(forge):
    fetch(forge.github_api + VLLM + ALL_DESC + "&per_page=5")
    fetch(forge.gitee_api + "/repos/nobody/nothing/issues")
    assert forge.request_count == 2
    first, second = forge.requests
    assert first["path"] == "/github" + VLLM + "/issues"
    assert first["query"]["per_page"] == "5"
    assert first["method"] == "GET"
    assert first["headers"]["user-agent"] == "concord-tests"
    assert (first["status"], second["status"]) == (200, 404)
    forge.reset_log()
    assert forge.requests == []
    assert forge.request_count == 0


def test_delay(forge):
    forge.delay = 0.2
    started = time.perf_counter()
    fetch(forge.github_api + VLLM + ALL_DESC)
    assert time.perf_counter() - started >= 0.2


def test_concurrent_clients_see_the_same_pages(forge):
    url = forge.github_api + VLLM + ALL_DESC + "&per_page=100"
    results = []

    def run():
        results.append([i["number"] for _, page in walk(url) for i in page])

    threads = [threading.Thread(target=run) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(results) == 4
    assert all(r == results[0] for r in results)
    assert forge.request_count == 12


def test_lifecycle():
    forge = FakeForge()
    with pytest.raises(RuntimeError):
        _ = forge.base_url
    with forge:
        url = forge.github_api + "/repos/a/b/issues"
        assert forge.base_url.startswith("http://127.0.0.1:")
        assert fetch(url)[0] == 404
    with pytest.raises(urllib.error.URLError):
        fetch(url)


# ----------------------------------------------------------------------------- generators


def test_generators_are_deterministic():
    assert make_github_issues("a", "b", 20, 5, 2) == make_github_issues("a", "b", 20, 5, 2)
    assert make_github_issues("a", "b", 20, seed=1) != make_github_issues("a", "b", 20, seed=2)
    assert make_gitee_issues("a", "b", 20, 1, 2) == make_gitee_issues("a", "b", 20, 1, 2)


def test_github_generator_shapes():
    issues, comments = make_github_issues("o", "r", 300, n_prs=100, comments_per_issue=1)
    created = [i["created_at"] for i in issues]
    assert [i["number"] for i in issues] == list(range(1, 401))
    assert created == sorted(created)
    assert created[0] >= "2023-01-01T00:00:00Z"
    assert created[-1] <= "2025-04-30T23:59:59Z"
    assert sum("pull_request" in i for i in issues) == 100
    assert any(i["body"] is None for i in issues)
    assert not any(i["body"] and "\x00" in i["body"] for i in issues)
    by_number = {i["number"]: i for i in issues}
    for comment in comments:
        issue = by_number[int(comment["issue_url"].rsplit("/", 1)[1])]
        assert issue["created_at"] <= comment["created_at"] <= issue["updated_at"]
    assert len({c["id"] for c in comments}) == len(comments) == 400


def test_gitee_generator_shapes():
    issues, comments = make_gitee_issues(
        "o",
        "r",
        500,
        comments_per_issue=1,
        n_pr_comments=4,
        start="2024-01-01",
        end="2024-01-31",
        nul_in_body=True,
    )
    numbers = [i["number"] for i in issues]
    assert len(set(numbers)) == 500
    assert numbers == sorted(numbers)
    assert issues[0]["created_at"] >= "2024-01-01T00:00:00+08:00"
    assert issues[-1]["created_at"] <= "2024-01-31T23:59:59+08:00"
    assert sum(bool(i["body"] and "\x00" in i["body"]) for i in issues) == 1
    assert sum(c["target"]["issue"] is None for c in comments) == 4


# ----------------------------------------------------------------------------- issue 13 knobs


def post_graphql(forge, query: str, variables: dict, token: str | None = "t"):  # noqa: S107
    body = json.dumps({"query": query, "variables": variables}).encode()
    head = {"Content-Type": "application/json", "User-Agent": "concord-tests"}
    if token:
        head["Authorization"] = f"Bearer {token}"
    request = urllib.request.Request(forge.github_api + "/graphql", body, head)  # noqa: S310
    try:
        with _OPENER.open(request, timeout=5) as resp:
            return resp.status, json.loads(resp.read())
    except urllib.error.HTTPError as err:
        with err:
            return err.code, json.loads(err.read())


ISSUES_QUERY = "query ConcordIssues($owner: String!, $name: String!, $after: String) { … }"


def test_graphql_issues_hold_no_pull_requests_and_nest_their_comments(forge):
    variables = {"owner": "vllm-project", "name": "vllm", "after": None}
    numbers, comments = [], 0
    while True:
        status, body = post_graphql(forge, ISSUES_QUERY, variables)
        assert status == 200
        issues = body["data"]["repository"]["issues"]
        numbers += [node["number"] for node in issues["nodes"]]
        comments += sum(len(node["comments"]["nodes"]) for node in issues["nodes"])
        if not issues["pageInfo"]["hasNextPage"]:
            break
        variables["after"] = issues["pageInfo"]["endCursor"]
    wanted = [i["number"] for i in GH_ISSUES if "pull_request" not in i]
    assert numbers == sorted(wanted, reverse=True)  # newest first, no PRs
    assert comments == 2 * len(wanted)
    assert body["data"]["rateLimit"]["cost"] == 1


def test_graphql_needs_a_token_and_names_a_missing_repository(forge):
    assert post_graphql(forge, ISSUES_QUERY, {"owner": "a", "name": "b"}, token=None)[0] == 401
    status, body = post_graphql(forge, ISSUES_QUERY, {"owner": "nobody", "name": "nothing"})
    assert status == 200
    assert body["errors"][0]["type"] == "NOT_FOUND"
    assert body["data"]["repository"] is None


def test_a_transferred_issue_answers_301_to_the_repository_it_went_to(forge):
    forge.transfer_github_issue("vllm-project", "vllm", 3, "deepspeedai", "DeepSpeed", 2)
    try:
        status, head, _ = fetch(forge.github_api + VLLM + "/issues/3/comments")
        target = forge.github_repo_id("deepspeedai", "DeepSpeed")
        assert status == 301
        assert head["location"] == f"{forge.github_api}/repositories/{target}/issues/2/comments"
    finally:
        forge._transfers.clear()


def test_a_new_cursor_epoch_refuses_the_cursors_handed_out_before(forge):
    forge.cursor_after_page = 1
    head, _ = get_json(forge.github_api + VLLM + ALL_DESC + "&per_page=50")
    old = links(head)["next"]
    forge.cursor_epoch = 1
    assert fetch(old)[0] == 422
    fresh, _ = get_json(forge.github_api + VLLM + ALL_DESC + "&per_page=50")
    assert fetch(links(fresh)["next"])[0] == 200


def test_a_silently_capped_comment_listing_just_stops_sending_next(forge):
    forge.comments_page_limit, forge.comments_cap_silent = 2, True
    pages = walk(forge.github_api + VLLM + "/issues/comments?per_page=100")
    assert [len(items) for _, items in pages] == [100, 100]  # 500 comments, two pages served
