"""The ingest API: staff only; sources (token write-only), harvest start (409 while active),
runs with progress, cancel, keyword-set CRUD and URL-list imports."""

from datetime import date

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile

from ingest.harvest import harvest_start
from ingest.models import HarvestRun, Issue, KeywordMatch, KeywordSet, RunStatus, Source
from tests.fakes.forge import make_github_issues

WINDOW = {"created_from": date(2023, 1, 1), "created_until": date(2025, 4, 30)}
NEW_SOURCE = {
    "host": "github",
    "repository": "NVIDIA/Megatron-LM",
    "created_from": "2023-01-01",
    "created_until": "2025-04-30",
}


def a_source(**extra) -> Source:
    return Source.objects.create(
        host="github", owner="NVIDIA", repo="Megatron-LM", **WINDOW, **extra
    )


@pytest.fixture
def api(client, staff):
    client.force_login(staff)
    return client


# ---------------------------------------------------------------- who may call


@pytest.fixture
def calls(db):
    """(method, url, body) for every ingest endpoint."""
    source = a_source()
    run = harvest_start(source=source, enqueue=False)
    keyword_set = KeywordSet.objects.create(name="pytorch", keywords=["llm"])
    return [
        ("get", "/api/sources/", None),
        (
            "post",
            "/api/sources/",
            {**NEW_SOURCE, "host": "gitee", "repository": "ascend/MindSpeed"},
        ),
        ("get", f"/api/sources/{source.pk}/", None),
        ("get", "/api/harvest-runs/", None),
        ("get", f"/api/harvest-runs/{run.pk}/", None),
        ("post", f"/api/harvest-runs/{run.pk}/cancel/", None),
        ("post", f"/api/sources/{source.pk}/harvest/", None),  # after the cancel: no active run
        ("get", "/api/keyword-sets/", None),
        ("post", "/api/keyword-sets/", {"name": "jax", "keywords": ["xla"]}),
        ("get", f"/api/keyword-sets/{keyword_set.pk}/", None),
        ("patch", f"/api/keyword-sets/{keyword_set.pk}/", {"keywords": ["gpt"]}),
        ("delete", f"/api/keyword-sets/{keyword_set.pk}/", None),
        ("post", "/api/url-lists/", {"text": "https://github.com/NVIDIA/Megatron-LM/issues/1"}),
    ]


def call(client, method, url, body):
    if body is None:
        return getattr(client, method)(url)
    return getattr(client, method)(url, body, content_type="application/json")


def snapshot():
    return (
        list(Source.objects.values_list("pk", "owner", "repo")),
        list(HarvestRun.objects.values_list("pk", "status")),
        list(KeywordSet.objects.values_list("pk", "name", "keywords")),
        Issue.objects.count(),
    )


@pytest.mark.parametrize("who", [None, "volunteer_a", "lead", "admin"])
def test_everyone_but_staff_is_refused_and_nothing_changes(client, personas, calls, who):
    if who:
        client.force_login(personas[who])
    before = snapshot()
    refused = 403 if who else 401  # a signed-in person may not; no one signed in: who are you?
    for method, url, body in calls:
        response = call(client, method, url, body)
        assert response.status_code == refused, (method, url)
    assert snapshot() == before


def test_staff_may_call_every_endpoint(api, calls):
    for method, url, body in calls:
        response = call(api, method, url, body)
        assert response.status_code < 300, (method, url, response.content)


def test_the_schema_lists_the_ingest_endpoints(api):
    schema = api.get("/api/schema/", HTTP_ACCEPT="application/vnd.oai.openapi+json").json()
    assert {
        "/api/sources/",
        "/api/sources/{id}/",
        "/api/sources/{id}/harvest/",
        "/api/harvest-runs/",
        "/api/harvest-runs/{id}/",
        "/api/harvest-runs/{id}/cancel/",
        "/api/keyword-sets/",
        "/api/keyword-sets/{id}/",
        "/api/url-lists/",
    } <= set(schema["paths"])
    source_fields = schema["components"]["schemas"]["Source"]["properties"]
    assert source_fields["token"]["writeOnly"] is True


# ---------------------------------------------------------------- sources


def test_creating_a_source_keeps_the_token_write_only(api):
    keyword_set = KeywordSet.objects.create(name="pytorch", keywords=["llm"])
    response = api.post(
        "/api/sources/",
        {**NEW_SOURCE, "token": "ghp_secret", "keyword_set": keyword_set.pk},
        content_type="application/json",
    )
    assert response.status_code == 201, response.content
    body = response.json()
    assert "token" not in body
    assert "ghp_secret" not in response.content.decode()
    assert body["has_token"] is True
    assert (body["owner"], body["repo"], body["repository"]) == (
        "NVIDIA",
        "Megatron-LM",
        "NVIDIA/Megatron-LM",
    )
    source = Source.objects.get()
    assert (source.token, source.keyword_set) == ("ghp_secret", keyword_set)
    listed = api.get("/api/sources/").json()
    assert listed["count"] == 1
    assert "ghp_secret" not in str(listed)
    assert listed["results"][0]["last_run"] is None


@pytest.mark.parametrize(
    ("change", "field", "message"),
    [
        ({"repository": "Megatron-LM"}, "repository", "write it as owner/repo"),
        ({"repository": "a/b/c"}, "repository", "write it as owner/repo"),
        ({"created_until": "2022-12-31"}, "created_until", "must not end before it starts"),
        ({"host": "gitlab"}, "host", "is not a valid choice"),
    ],
)
def test_a_bad_source_is_400_naming_the_field(api, change, field, message):
    response = api.post("/api/sources/", {**NEW_SOURCE, **change}, content_type="application/json")
    assert response.status_code == 400
    assert message in response.json()["fields"][field][0]
    assert f"{field}: " in response.json()["detail"]
    assert not Source.objects.exists()


def test_a_duplicate_source_is_400_with_a_message(api):
    a_source()
    response = api.post("/api/sources/", NEW_SOURCE, content_type="application/json")
    assert response.status_code == 400
    assert "is already a source for 2023-01-01..2025-04-30" in response.json()["detail"]


# ---------------------------------------------------------------- harvests


def test_harvest_starts_a_run_that_fetches_from_the_forge(
    api, forge, eager_tasks, django_capture_on_commit_callbacks
):
    issues, _ = make_github_issues("NVIDIA", "Megatron-LM", 90, n_prs=6, comments_per_issue=2)
    forge.add_github_repo("NVIDIA", "Megatron-LM", issues, _)
    source = a_source()
    with django_capture_on_commit_callbacks(execute=True):
        response = api.post(f"/api/sources/{source.pk}/harvest/")
    assert response.status_code == 201
    started = response.json()
    assert (started["status"], started["is_active"], started["started_by"]) == (
        "queued",
        True,
        "staff",
    )

    run = api.get(f"/api/harvest-runs/{started['id']}/").json()
    assert run["status"] == "done"
    assert run["is_active"] is False
    assert run["issues_fetched"] == Issue.objects.filter(source=source).count() == 90
    assert run["comments_fetched"] == 180
    assert run["pull_requests_skipped"] == 6
    assert run["requests"] == forge.request_count
    assert run["progress"]["fraction"] == 1.0
    assert run["progress"]["phase"] == "done"
    assert "GitHub requests left" in run["progress"]["rate_limit"]
    assert api.get("/api/sources/").json()["results"][0]["last_run"] == run["id"]


def test_a_second_harvest_while_one_is_active_is_409(api):
    source = a_source()
    first = api.post(f"/api/sources/{source.pk}/harvest/")  # queued: on-commit never runs here
    second = api.post(f"/api/sources/{source.pk}/harvest/")
    assert first.status_code == 201
    assert second.status_code == 409
    assert second.json()["detail"] == (
        f"{source} is already being harvested (run {first.json()['id']}, queued)."
    )
    assert HarvestRun.objects.count() == 1


def test_runs_are_listed_newest_first_and_filter_by_source_and_status(api):
    one, two = (
        a_source(),
        Source.objects.create(host="gitee", owner="ascend", repo="MindSpeed", **WINDOW),
    )
    old = HarvestRun.objects.create(source=one, status=RunStatus.DONE)
    new = harvest_start(source=one, enqueue=False)
    other = harvest_start(source=two, enqueue=False)
    ids = [r["id"] for r in api.get("/api/harvest-runs/").json()["results"]]
    assert ids == [other.pk, new.pk, old.pk]
    by_source = api.get(f"/api/harvest-runs/?source={one.pk}").json()["results"]
    assert [r["id"] for r in by_source] == [new.pk, old.pk]
    done = api.get("/api/harvest-runs/?status=done").json()["results"]
    assert [r["id"] for r in done] == [old.pk]
    assert api.get("/api/harvest-runs/999999/").status_code == 404


def test_cancel_stops_a_queued_run_and_leaves_a_finished_one(api):
    run = harvest_start(source=a_source(), enqueue=False)
    response = api.post(f"/api/harvest-runs/{run.pk}/cancel/")
    assert response.status_code == 200
    assert response.json()["status"] == "cancelled"
    assert response.json()["cancel_requested"] is True
    done = HarvestRun.objects.create(source=run.source, status=RunStatus.DONE)
    assert api.post(f"/api/harvest-runs/{done.pk}/cancel/").json()["status"] == "done"


# ---------------------------------------------------------------- keyword sets


def test_keyword_set_crud_marks_candidates(api):
    from tests.factories import IssueFactory

    created = api.post(
        "/api/keyword-sets/",
        {"name": "pytorch", "keywords": ["llama", "LLAMA", " fsdp "], "description": "study"},
        content_type="application/json",
    )
    assert created.status_code == 201
    body = created.json()
    assert body["keywords"] == ["llama", "fsdp"]
    keyword_set = KeywordSet.objects.get(pk=body["id"])
    source = a_source(keyword_set=keyword_set)
    issue = IssueFactory(source=source, title="LoRA merge fails")
    changed = api.patch(
        f"/api/keyword-sets/{keyword_set.pk}/",
        {"name": "torch", "keywords": ["lora"]},
        content_type="application/json",
    )
    assert changed.status_code == 200
    assert (changed.json()["name"], changed.json()["keywords"]) == ("torch", ["lora"])
    assert changed.json()["sources"] == [source.pk]
    assert list(KeywordMatch.objects.values_list("issue_id", "keywords")) == [(issue.pk, ["lora"])]
    assert api.delete(f"/api/keyword-sets/{keyword_set.pk}/").status_code == 204
    source.refresh_from_db()
    assert source.keyword_set is None
    assert not KeywordMatch.objects.exists()


def test_keyword_set_names_are_unique_and_lists_not_empty(api):
    KeywordSet.objects.create(name="pytorch", keywords=["llm"])
    response = api.post(
        "/api/keyword-sets/", {"name": "pytorch", "keywords": []}, content_type="application/json"
    )
    assert response.status_code == 400
    assert set(response.json()["fields"]) == {"name", "keywords"}


# ---------------------------------------------------------------- URL lists

MIXED = (
    "https://github.com/NVIDIA/Megatron-LM/issues/1516\n"
    "https://github.com/NVIDIA/Megatron-LM/pull/1517\n"
    "# a comment\n"
    "https://gitee.com/ascend/MindSpeed/issues/ibz414\n"
    "https://gitee.com/ascend/MindSpeed/issues/IBZ414\n"
)


def test_url_list_text_reports_bad_lines_and_takes_the_rest(api):
    response = api.post(
        "/api/url-lists/", {"text": MIXED, "name": "mixed.txt"}, content_type="application/json"
    )
    assert response.status_code == 200
    report = response.json()
    assert (report["name"], report["lines"], report["created"], report["already_known"]) == (
        "mixed.txt",
        4,
        2,
        0,
    )
    assert [e["line"] for e in report["errors"]] == [2, 4]
    assert "pull request" in report["errors"][0]["message"]
    assert "upper case" in report["errors"][1]["message"]
    assert sorted(report["issue_ids"]) == sorted(Issue.objects.values_list("pk", flat=True))


def test_url_list_file_upload_and_repeat(api):
    upload = SimpleUploadedFile("MindSpeed_2024.txt", MIXED.encode())
    first = api.post("/api/url-lists/", {"file": upload})
    assert first.status_code == 200
    assert first.json()["name"] == "MindSpeed_2024.txt"
    again = api.post("/api/url-lists/", {"text": MIXED}, content_type="application/json")
    assert (again.json()["created"], again.json()["already_known"]) == (0, 2)


def test_a_url_list_with_only_bad_lines_is_422_listing_them(api):
    text = "not a url\nhttps://gitlab.com/a/b/issues/1\n\nhttps://github.com/a/b/pull/2\n"
    response = api.post("/api/url-lists/", {"text": text}, content_type="application/json")
    assert response.status_code == 422
    assert [(e["line"], e["message"].split()[0]) for e in response.json()["errors"]] == [
        (1, "'not"),
        (2, "unknown"),
        (4, "'https://github.com/a/b/pull/2'"),
    ]
    assert not Issue.objects.exists()


@pytest.mark.parametrize(
    ("body", "message"),
    [
        ({}, "Send either `text` or `file`"),
        ({"text": "\n# only a comment\n"}, "has no issue URLs"),
    ],
)
def test_an_empty_url_list_is_400(api, body, message):
    response = api.post("/api/url-lists/", body, content_type="application/json")
    assert response.status_code == 400
    assert message in str(response.json())
