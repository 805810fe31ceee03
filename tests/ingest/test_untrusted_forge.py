"""What comes from a forge is untrusted input: issue URLs become links only when they are http(s),
owner/repository names are what the host allows (never `..` in a request path), and the token
goes only to the configured API host, whatever `link` header the forge sends."""

from datetime import date

import pytest
from django.core.exceptions import ValidationError

from ingest.clients import ForgeError, GiteeClient, GitHubClient
from ingest.clients.base import OffHostUrl
from ingest.details import issues_fetch_details
from ingest.harvest import harvest_advance, harvest_start
from ingest.importers import url_list_import
from ingest.issue_refs import BadIssueUrl, parse_issue_url, web_url
from ingest.models import HarvestRun, Issue, RunStatus, Source
from tests.annotation.labeling_helpers import items
from tests.fakes.forge import FakeForge, make_gitee_issues, make_github_issues

WINDOW = {"created_from": date(2023, 1, 1), "created_until": date(2025, 4, 30)}
TOKEN = "ghp_only-for-the-api-host"
BAD_URLS = [
    "javascript:alert(document.cookie)",
    "JavaScript:alert(1)",
    " javascript:alert(1)",
    "java\tscript:alert(1)",
    "data:text/html,<script>alert(1)</script>",
    "vbscript:msgbox(1)",
    "//evil.example/x",
    "https:evil.example",
    "https://",
    "https://user@evil.example/",
    "https://github.com\\@evil.example/",
    "\x01https://github.com/a/b/issues/1",
    "https://github.com/a b/issues/1",
    "",
    None,
    42,
]


def serve(forge, n_issues=30, **kw):
    issues, notes = make_github_issues("vllm-project", "vllm", n_issues, **kw)
    forge.add_github_repo("vllm-project", "vllm", issues, notes)
    return issues, notes


def github_source(**extra) -> Source:
    return Source.objects.create(
        host="github", owner="vllm-project", repo="vllm", **WINDOW, **extra
    )


def harvest(source: Source) -> HarvestRun:
    run = harvest_start(source=source, enqueue=False)
    return harvest_advance(run_id=run.pk)


@pytest.fixture
def elsewhere():
    """A second fake forge on another loopback address: where a hostile `link` points."""
    with FakeForge(host="127.0.0.2") as other:
        yield other


# ---------------------------------------------------------------- URLs that become links


@pytest.mark.parametrize(
    "url",
    ["https://github.com/a/b/issues/1", "http://gitee.com/a/b/issues/I1?x=1#c", "HTTPS://X.Y"],
)
def test_http_urls_are_web_urls(url):
    assert web_url(url) == url


@pytest.mark.parametrize("url", BAD_URLS)
def test_anything_else_is_not_a_web_url(url):
    assert web_url(url) == ""


def test_a_javascript_html_url_is_not_stored(db, forge):
    issues, _ = serve(forge)
    issues[3]["html_url"] = "javascript:alert(document.cookie)"
    issues[4]["html_url"] = "data:text/html,<script>alert(1)</script>"
    issues[5]["html_url"] = "https://github.com/vllm-project/vllm/issues/" + "9" * 300  # too long
    forge.add_github_repo("vllm-project", "vllm", issues, [])
    run = harvest(github_source())
    assert run.status == RunStatus.DONE, run.error
    stored = dict(Issue.objects.values_list("number", "url"))
    for sample in issues[3:6]:
        number = str(sample["number"])
        assert stored[number] == f"https://github.com/vllm-project/vllm/issues/{number}"
    assert stored[str(issues[0]["number"])] == issues[0]["html_url"]
    assert not Issue.objects.exclude(url__startswith="https://").exists()


def test_an_old_javascript_url_never_becomes_an_href(client, personas, project):
    """A row stored before the check: the page still shows no link to it."""
    (item,) = items(project, 1)
    Issue.objects.filter(pk=item.issue_id).update(url="javascript:alert(document.cookie)")
    client.force_login(personas["volunteer_a"])
    response = client.get(f"/projects/{project.slug}/label/")
    body = response.content.decode()
    assert response.status_code == 200
    assert "open the original" in body
    assert "javascript:" not in body
    assert "alert(document.cookie)" not in body


def test_a_good_url_is_still_a_link(client, personas, project):
    (item,) = items(project, 1)
    client.force_login(personas["volunteer_a"])
    body = client.get(f"/projects/{project.slug}/label/").content.decode()
    assert f'href="{item.issue.url}" target="_blank"' in body


# ---------------------------------------------------------------- owner and repository names

BAD_REPOSITORIES = [
    ("github", "../vllm", "not an account name GitHub allows"),
    ("github", "vllm-project/..", "owner/repo"),
    ("github", "vllm-project/.", "owner/repo"),
    ("github", "-vllm/vllm", "not an account name GitHub allows"),
    ("github", "vllm_project/vllm", "not an account name GitHub allows"),
    ("github", "a" * 40 + "/vllm", "not an account name GitHub allows"),
    ("github", "vllm-project/" + "v" * 101, "not a repository name GitHub allows"),
    ("gitee", "../MindSpeed", "not an account name Gitee allows"),
    ("gitee", "ascend/.hidden", "not a repository name Gitee allows"),
    ("gitee", "ascend/" + "m" * 150, "too long"),
]


def source_form(host: str, repository: str) -> dict:
    return {
        "host": host,
        "repository": repository,
        "created_from": "2023-01-01",
        "created_until": "2025-04-30",
        "token": "",
        "keyword_set": "",
    }


@pytest.mark.parametrize(("host", "repository", "message"), BAD_REPOSITORIES)
def test_the_source_form_refuses_names_the_host_does_not_allow(
    client, staff, host, repository, message
):
    client.force_login(staff)
    response = client.post("/ingest/sources/new/", source_form(host, repository))
    assert response.status_code == 200
    assert message in response.context["form"].errors["repository"][0]
    assert not Source.objects.exists()


@pytest.mark.parametrize(("host", "repository", "message"), BAD_REPOSITORIES)
def test_the_api_refuses_names_the_host_does_not_allow(client, staff, host, repository, message):
    client.force_login(staff)
    response = client.post(
        "/api/sources/", source_form(host, repository), content_type="application/json"
    )
    assert response.status_code == 400
    assert message in response.json()["fields"]["repository"][0]
    assert not Source.objects.exists()


@pytest.mark.parametrize(
    ("host", "repository"),
    [("github", "NVIDIA/Megatron-LM"), ("github", "a/.github"), ("gitee", "ascend/MindSpeed")],
)
def test_names_the_host_allows_are_taken(client, staff, host, repository):
    client.force_login(staff)
    response = client.post(
        "/api/sources/", source_form(host, repository), content_type="application/json"
    )
    assert response.status_code == 201, response.content


def test_the_model_check_names_the_field(db):
    source = Source(host="github", owner="..", repo="vllm", **WINDOW)
    with pytest.raises(ValidationError) as caught:
        source.full_clean()
    assert "not an account name GitHub allows" in caught.value.message_dict["owner"][0]
    source = Source(host="gitee", owner="ascend", repo="..", **WINDOW)
    with pytest.raises(ValidationError) as caught:
        source.full_clean()
    assert "repo" in caught.value.message_dict


def test_an_issue_url_with_dot_dot_is_refused(db):
    with pytest.raises(BadIssueUrl, match="not an account name GitHub allows"):
        parse_issue_url("https://github.com/../vllm/issues/1")
    report = url_list_import(text="https://gitee.com/ascend/../issues/I1\n", name="list.txt")
    assert report.created == 0
    assert "not a repository name Gitee allows" in report.errors[0].message


@pytest.mark.parametrize("client_class", [GitHubClient, GiteeClient])
def test_the_client_refuses_dot_dot_before_building_a_path(forge, client_class):
    client = client_class(api_url=forge.github_api, token=TOKEN)
    for owner, repo in [("..", "vllm"), ("vllm-project", ".."), ("a/b", "c"), ("", "c")]:
        with pytest.raises(ForgeError, match="allows"):
            client.repo_url(owner, repo)
        with pytest.raises(ForgeError, match="allows"):
            client.issue(owner, repo, "1")
    assert forge.request_count == 0


def test_an_issue_number_stays_one_path_segment(forge):
    serve(forge, n_issues=3)
    client = GitHubClient(api_url=forge.github_api, max_retries=0)
    with pytest.raises(ForgeError):
        client.issue("vllm-project", "vllm", "1/../../../../other/repo/issues/1")
    (request,) = forge.requests
    assert request["path"].startswith("/github/repos/vllm-project/vllm/issues/1/")


def test_a_stored_source_with_dot_dot_fails_its_run_without_a_request(db, forge):
    """A row from before the check (or written around it) never reaches the client's URL."""
    source = Source.objects.create(host="github", owner="..", repo="vllm", **WINDOW)
    run = harvest(source)
    assert run.status == RunStatus.FAILED
    assert "'..' is not an account name GitHub allows" in run.error
    assert forge.request_count == 0


# ---------------------------------------------------------------- the token stays on the API host


def test_a_next_page_on_another_host_is_not_followed(db, forge, elsewhere, settings):
    settings.GITHUB_GRAPHQL = False  # `link` headers are REST's
    issues, notes = serve(forge, n_issues=250)
    elsewhere.add_github_repo("vllm-project", "vllm", issues, notes)
    forge.token = elsewhere.token = TOKEN
    forge.link_origin = elsewhere.base_url
    run = harvest(github_source(token=TOKEN))
    assert run.status == RunStatus.FAILED
    assert "the forge sent a next page on another host: http://127.0.0.2:" in run.error
    assert elsewhere.requests == []  # neither the token nor anything else went there
    assert [r["headers"]["authorization"] for r in forge.requests] == [f"Bearer {TOKEN}"]
    assert TOKEN not in run.error


def test_a_stored_cursor_on_another_host_is_not_fetched(db, forge, elsewhere):
    """A checkpoint written before the check: the client still sends nothing there."""
    serve(forge)
    source = github_source(token=TOKEN)
    run = harvest_start(source=source, enqueue=False)
    url = f"{elsewhere.github_api}/repos/vllm-project/vllm/issues?page=2"
    HarvestRun.objects.filter(pk=run.pk).update(cursor={"phase": "issues", "url": url})
    run = harvest_advance(run_id=run.pk)
    assert run.status == RunStatus.FAILED
    assert "not on the API host" in run.error
    assert elsewhere.requests == []
    assert forge.request_count == 0


def test_detail_fetches_do_not_follow_a_comment_page_elsewhere(db, forge, elsewhere, settings):
    issues, notes = make_github_issues("vllm-project", "vllm", 1, comments_per_issue=101)
    forge.add_github_repo("vllm-project", "vllm", issues, notes)
    elsewhere.add_github_repo("vllm-project", "vllm", issues, notes)
    settings.GITHUB_TOKEN = TOKEN
    forge.link_origin = elsewhere.base_url
    report = url_list_import(
        text="https://github.com/vllm-project/vllm/issues/1", name="list", fetch_details=False
    )
    assert issues_fetch_details(issue_ids=report.issue_ids) == 0
    issue = Issue.objects.get()
    assert "the forge sent a next page on another host" in issue.fetch_error
    assert not issue.comments.exists()
    assert elsewhere.requests == []


@pytest.mark.parametrize(
    ("link", "allowed"),
    [
        ("https://api.github.com/repositories/1/issues?page=2", True),
        ("https://API.github.com:443/repositories/1/issues?page=2", True),
        ("/repositories/1/issues?page=2", True),  # relative: resolved against the page
        ("http://api.github.com/repositories/1/issues?page=2", False),  # another scheme
        ("https://api.github.com:8443/repositories/1/issues?page=2", False),
        ("https://api.github.com.evil.example/repositories/1/issues", False),
        ("https://evil.example/repositories/1/issues?page=2", False),
        ("//evil.example/repositories/1/issues?page=2", False),
        ("https://api.github.com@evil.example/", False),
    ],
)
def test_next_links_are_followed_only_on_the_api_host(link, allowed):
    client = GitHubClient(api_url="https://api.github.com", token=TOKEN)
    page = "https://api.github.com/repos/a/b/issues?per_page=100"
    if allowed:
        assert client.next_url(page, link).startswith("https://")
    else:
        with pytest.raises(OffHostUrl, match="another host"):
            client.next_url(page, link)


# ---------------------------------------------------------------- answers of the wrong shape


def github_repo(forge):
    return forge._github[("vllm-project", "vllm")]


def answer_oddly(collection, index: int, body: bytes) -> None:
    """The fake forge answers `body` for the index-th item of one of its repositories, alone
    (GET …/issues/{n}) and in the listing's pages: the items' JSON is serialized once, up front."""
    collection._blobs[index] = body


def test_a_detail_fetch_answered_with_a_list_fails_that_issue_in_words(db, forge):
    """The forge answers a list where one issue is expected: that issue's fetch fails saying
    so, the others are filled in, and the worker goes on."""
    issues, _ = serve(forge, 3)
    repo = github_repo(forge)
    answer_oddly(repo.issues, repo.by_number[issues[0]["number"]], b'[{"number": 1}]')
    answer_oddly(repo.issues, repo.by_number[issues[1]["number"]], b'{"title": "x"}')
    urls = [f"https://github.com/vllm-project/vllm/issues/{i['number']}" for i in issues]
    report = url_list_import(text="\n".join(urls), name="list", fetch_details=False)
    assert issues_fetch_details(issue_ids=report.issue_ids) == 1
    errors = dict(Issue.objects.values_list("number", "fetch_error"))
    first, second, third = (errors[str(i["number"])] for i in issues)
    assert first.startswith("the host answered a list where an issue was expected (")
    assert second.startswith("the host answered an issue Concord cannot read (no 'number' in it)")
    assert third == ""


@pytest.mark.parametrize(
    ("odd", "words"),
    [
        (b"[1, 2]", "the host answered a list where an issue was expected"),
        (b'"an issue"', "the host answered a string where an issue was expected"),
        (b'{"number": 7}', "the host answered an issue Concord cannot read (no 'created_at'"),
        (
            b'{"number": {"n": 7}, "created_at": "2024-01-01T00:00:00Z"}',
            "the host answered an issue Concord cannot read (expected an issue number",
        ),
        (
            b'{"number": 7, "title": ["x"], "created_at": "2024-01-01T00:00:00Z"}',
            "the host answered an issue Concord cannot read (expected text, not a list)",
        ),
        (
            b'{"number": 7, "created_at": "yesterday"}',
            "the host answered an issue Concord cannot read (Invalid isoformat",
        ),
        (
            b'{"number": 7, "created_at": "2024-01-01T00:00:00"}',
            "the host answered an issue Concord cannot read (the time '2024-01-01T00:00:00' has "
            "no time zone",
        ),
    ],
    ids=[
        "a-list",
        "a-string",
        "no-created_at",
        "a-number-object",
        "a-title-list",
        "a-bad-time",
        "a-time-without-zone",
    ],
)
def test_a_listing_with_an_issue_of_the_wrong_shape_fails_the_run_in_words(db, forge, odd, words):
    serve(forge, 5)
    answer_oddly(github_repo(forge).issues, 2, odd)
    run = harvest(github_source())
    assert run.status == RunStatus.FAILED
    assert words in run.error, run.error


def test_a_listing_answered_with_an_object_fails_the_run_in_words(db, forge, monkeypatch):
    serve(forge, 5)
    monkeypatch.setattr(github_repo(forge).issues, "body", lambda indices: b'{"items": []}')
    run = harvest(github_source())
    assert run.status == RunStatus.FAILED
    assert "the host answered an object where a page of issues was expected" in run.error


def test_a_graphql_page_of_the_wrong_shape_fails_the_run_in_words(db, forge, monkeypatch, settings):
    serve(forge, 5)
    settings.GITHUB_TOKEN = TOKEN
    settings.GITHUB_GRAPHQL = True
    odd = {"repository": {"issues": {"nodes": [[1]], "pageInfo": {"hasNextPage": False}}}}
    monkeypatch.setattr(forge._graphql_api, "answer", lambda query, variables: {"data": odd})
    run = harvest(github_source())
    assert run.status == RunStatus.FAILED
    assert "the host answered a page of issues Concord cannot read" in run.error, run.error


def test_a_gitee_detail_fetch_answered_with_a_list_fails_that_issue_in_words(db, forge):
    issues, notes = make_gitee_issues("ascend", "MindSpeed", 2)
    forge.add_gitee_repo("ascend", "MindSpeed", issues, notes)
    repo = forge._gitee[("ascend", "mindspeed")]
    answer_oddly(repo.issues, repo.by_number[issues[0]["number"]], b"[]")
    urls = [f"https://gitee.com/ascend/MindSpeed/issues/{i['number']}" for i in issues]
    report = url_list_import(text="\n".join(urls), name="list", fetch_details=False)
    assert issues_fetch_details(issue_ids=report.issue_ids) == 1
    bad = Issue.objects.get(number=issues[0]["number"])
    assert bad.fetch_error.startswith("the host answered a list where an issue was expected (")
