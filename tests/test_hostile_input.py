"""Issue 12, "no input makes a 500": each class of hostile input an outside attack found is a
clear 4xx that names the field, with nothing half-written. tests/test_form_fuzz.py sends the same
kinds of values to every page's forms and query parameters."""

from __future__ import annotations

import copy
import json

import pytest
from django.contrib.auth import get_user_model
from django.core.files.uploadedfile import SimpleUploadedFile
from django.core.management import CommandError, call_command
from django.test import Client
from django.urls import reverse

from annotation.models import Annotation, AuditEvent, Item, Post, ScreeningVote, Skip, Stage
from ingest.models import Issue, KeywordSet, Source
from tests.conftest import rows_only
from tests.factories import IssueFactory
from tests.test_role_matrix import role_world

STORED = (Annotation, AuditEvent, Post, ScreeningVote, Skip, Issue, KeywordSet)


def stored() -> dict[str, int]:
    return {model.__name__: model.objects.count() for model in STORED}


@pytest.fixture
def client():
    return Client(raise_request_exception=False)  # a server error is a response to look at


@pytest.fixture(scope="module")
@rows_only
def shared_world(module_rows):
    """The role matrix's objects and people, with an item to label and one to screen: made once
    for the module's tests (every one of them uses it), each of which is rolled back."""
    project, personas = module_rows
    objects, people = role_world(personas, project)
    for stage in (Stage.OPEN, Stage.CANDIDATE):
        item = Item.objects.create(project=project, issue=IssueFactory(), stage=stage)
        objects[stage] = {"slug": project.slug, "item_id": item.pk}
    return objects, people


@pytest.fixture
def world(shared_world, db):
    return copy.deepcopy(shared_world)


def refused_naming(response, field: str, status: int = 400) -> None:
    assert response.status_code == status, response.content[:300]
    if response["Content-Type"].startswith("application/json"):
        assert field in response.json()["fields"], response.json()
        assert response.json()["detail"].startswith(f"{field}: ")
    else:
        assert f"{field}: " in response.content.decode()


# ---------------------------------------------------------------- NUL and lone surrogates


@pytest.mark.parametrize(
    ("route", "item", "who", "data", "field"),
    [
        ("label-skip", Stage.OPEN, "volunteer", {"reason": "dup\x00"}, "reason"),
        ("label-item", Stage.OPEN, "volunteer", {"node": "C.1", "summary": "a\x00b"}, "summary"),
        (
            "screen-vote",
            Stage.CANDIDATE,
            "volunteer",
            {"verdict": "relevant", "reason": "\x00"},
            "reason",
        ),
        ("item-discussion", "item", "lead", {"text": "see \x00 this"}, "text"),
        ("item-reopen", "item", "lead", {"reason": "again\x00"}, "reason"),
        ("proposal-new", "project", "volunteer", {"name": "New\x00", "reason": "x"}, "name"),
        ("set_language", "", "volunteer", {"language": "zh-hans", "next": "/\x00"}, "next"),
        # issue 14: project settings, members, taxonomy curation
        ("project-edit", "project", "admin", {"name": "Study\x00", "slug": "study"}, "name"),
        ("project-members", "project", "admin", {"people": "wang\x00", "role": "lead"}, "people"),
        ("project-invite", "project", "admin", {"role": "lead\x00", "days": "3"}, "role"),
        (
            "taxonomy-node-edit",
            "node",
            "lead",
            {"definition": "x\x00", "examples": ""},
            "definition",
        ),
    ],
)
def test_nul_in_a_form_field_is_refused_naming_it(client, world, route, item, who, data, field):
    objects, people = world
    client.force_login(people[who])
    before = stored()
    response = client.post(reverse(route, kwargs=objects[item]), data)
    refused_naming(response, field)
    assert "NUL" in response.content.decode()
    assert stored() == before


@pytest.mark.parametrize(
    ("route", "kwargs", "query", "field"),
    [
        ("disputed-queue", "project", "repository=NVIDIA%00/x", "repository"),
        ("disputed-queue", "project", "type=C%00", "type"),
        ("item-resolve", "item", "theme=C.1%00", "theme"),
        ("project-reports-items", "project", "a=C%00&b=C.1", "a"),
        ("project-reports-items", "project", "a=C&b=C.1&page=1%00", "page"),
        ("api-disputed", "project", "repository=NVIDIA%00/x", "repository"),
    ],
)
def test_nul_in_a_query_parameter_is_refused_naming_it(client, world, route, kwargs, query, field):
    objects, people = world
    client.force_login(people["lead"])
    response = client.get(f"{reverse(route, kwargs=objects[kwargs])}?{query}")
    refused_naming(response, field)


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ('{"name": "llm", "keywords": ["ok", "bad\\u0000"]}', "keywords[1]"),
        ('{"name": "llm\\ud800", "keywords": ["ok"]}', "name"),
        ('{"name": "llm", "keywords": ["ok"], "note\\u0000": 1}', "'note\\x00'"),
    ],
)
def test_nul_or_lone_surrogate_in_a_json_body_is_refused_naming_the_member(
    client, world, body, field
):
    """(The members API, issue 14, is checked below with the same parser.)"""
    _, people = world
    client.force_login(people["staff"])
    before = stored()
    response = client.post("/api/keyword-sets/", body, content_type="application/json")
    refused_naming(response, field)
    assert stored() == before


# ---------------------------------------------------------------- ids in non-ASCII digits


@pytest.mark.parametrize("value", ["²", "٣", "99999999999999999999999", "-1", "0", "1x"])
@pytest.mark.parametrize(
    ("who", "url", "param"),
    [
        ("volunteer", "/api/nodes/?taxonomy=", "taxonomy"),
        ("volunteer", "/projects/study/proposals/new/?item=", "item"),
        ("staff", "/api/harvest-runs/?source=", "source"),
    ],
)
def test_an_id_parameter_that_is_not_an_id_is_refused_naming_it(
    client, world, who, url, param, value
):
    _, people = world
    client.force_login(people[who])
    response = client.get(url + value)
    refused_naming(response, param)


def test_an_id_field_in_non_ascii_digits_is_refused_on_the_proposal_form(client, world):
    _, people = world
    client.force_login(people["volunteer"])
    before = stored()
    url = reverse("proposal-new", kwargs={"slug": "study"})
    response = client.post(url, {"item": "²", "name": "Fresh category", "reason": "none fits"})
    refused_naming(response, "item")
    assert stored() == before


# ---------------------------------------------------------------- API bodies: depth and size


@pytest.mark.parametrize(
    "body",
    [
        "[" * 100_000 + "]" * 100_000,  # the decoder's recursion limit
        json.dumps({"reason": "x", "extra": json.loads("[" * 40 + "]" * 40)}),  # past the limit
    ],
    ids=["past-the-decoders-recursion-limit", "past-API_MAX_JSON_DEPTH"],
)
def test_deeply_nested_json_is_refused(client, world, body):
    objects, people = world
    client.force_login(people["volunteer"])
    before = stored()
    url = reverse("api-skip", kwargs=objects[Stage.OPEN])
    response = client.post(url, body, content_type="application/json")
    assert response.status_code == 400, response.content[:300]
    assert "deeper than 32 levels" in response.json()["detail"]
    assert stored() == before


def test_an_api_body_over_the_cap_is_refused_before_it_is_read(client, world, settings):
    objects, people = world
    settings.API_MAX_BODY_BYTES = 10_000
    client.force_login(people["volunteer"])
    url = reverse("api-skip", kwargs=objects[Stage.OPEN])
    big = json.dumps({"reason": "x" * 20_000})
    response = client.post(url, big, content_type="application/json")
    assert response.status_code == 413
    assert "at most 10,000" in response.json()["detail"]
    # A declared 50 MB body is refused on its Content-Length alone, nothing read.
    small = json.dumps({"reason": "x"})
    response = client.post(
        url, small, content_type="application/json", CONTENT_LENGTH=str(50 * 1024 * 1024)
    )
    assert response.status_code == 413
    assert not Skip.objects.exists()


def test_the_default_api_body_cap_refuses_a_volunteers_2_mb_body(client, world):
    objects, people = world
    client.force_login(people["volunteer"])
    url = reverse("api-skip", kwargs=objects[Stage.OPEN])
    body = json.dumps({"reason": "x" * (2 * 1024 * 1024)})
    assert client.post(url, body, content_type="application/json").status_code == 413


# ---------------------------------------------------------------- URL lists


TOO_LONG = [
    "https://github.com/NVIDIA/Megatron-LM/issues/123456789012345678901",  # 21 digits
    "https://gitee.com/" + "o" * 150 + "/MindSpeed/issues/IBDZ87",  # Gitee allows 191
    "https://github.com/NVIDIA/" + "r" * 101 + "/issues/1",
]
GOOD = "https://github.com/NVIDIA/Megatron-LM/issues/1516"


def test_url_list_lines_too_long_for_their_columns_are_line_errors(client, world):
    _, people = world
    client.force_login(people["staff"])
    text = "\n".join([*TOO_LONG, GOOD])
    response = client.post("/api/url-lists/", {"text": text}, content_type="application/json")
    assert response.status_code == 200, response.content[:300]
    report = response.json()
    assert [e["line"] for e in report["errors"]] == [1, 2, 3]
    assert "Concord keeps at most 20" in report["errors"][0]["message"]
    assert report["created"] == 1
    assert Issue.objects.filter(number="1516").exists()


def test_url_list_page_takes_the_good_lines_of_a_list_with_overlong_ones(client, world):
    _, people = world
    client.force_login(people["staff"])
    upload = SimpleUploadedFile("list.txt", "\n".join([*TOO_LONG, GOOD]).encode())
    response = client.post(reverse("ingest-url-lists"), {"file": upload})
    assert response.status_code == 200
    assert "3 lines could not be taken" in response.content.decode()
    assert Issue.objects.filter(number="1516").exists()


def test_url_list_api_is_capped_like_the_upload_page(client, world):
    _, people = world
    client.force_login(people["staff"])
    text = (GOOD + "\n") * (5 * 1024 * 1024 // len(GOOD + "\n") + 1)
    response = client.post("/api/url-lists/", {"text": text}, content_type="application/json")
    refused_naming(response, "text")
    assert "the limit is 5 MB" in response.json()["detail"]
    response = client.post(
        "/api/url-lists/",
        {"text": GOOD},
        content_type="application/json",
        CONTENT_LENGTH=str(11 * 1024 * 1024),
    )
    assert response.status_code == 413
    upload = SimpleUploadedFile("list.txt", GOOD.encode())
    response = client.post(
        "/api/url-lists/", {"file": upload}, CONTENT_LENGTH=str(11 * 1024 * 1024)
    )
    assert response.status_code == 413
    assert not Issue.objects.filter(number="1516").exists()


def test_item_import_is_capped_and_refuses_nul_naming_the_member(client, world, settings):
    from annotation.models import ItemImport

    _, people = world
    client.force_login(people["admin"])
    url = "/api/projects/study/item-imports/"
    before = ItemImport.objects.count()
    settings.ITEM_IMPORT_MAX_BYTES = 1024 * 1024
    text = '{"url": "https://github.com/NVIDIA/Megatron-LM/issues/1"}\n' * 20_000
    response = client.post(url, {"text": text}, content_type="application/json")
    refused_naming(response, "text")
    assert "the limit is 1 MB" in response.json()["detail"]
    upload = SimpleUploadedFile("issues.jsonl", text.encode())
    response = client.post(url, {"file": upload}, CONTENT_LENGTH=str(3 * 1024 * 1024))
    assert response.status_code == 413
    response = client.post(
        url, '{"text": "{}", "name": "a\\u0000.jsonl"}', content_type="application/json"
    )
    refused_naming(response, "name")
    assert ItemImport.objects.count() == before


# ---------------------------------------------------------------- next on the discussion form


@pytest.mark.parametrize(
    "target",
    [
        "https://evil.example/phish",
        "//evil.example/phish",
        "/\\evil.example/phish",
        "\\\\evil.example/phish",
        "http://testserver/projects/",  # this site, but not a local path
        "javascript:alert(1)",
        "projects/study/",
        "/projects/\r\nSet-Cookie: x=1",
        "/projects/\t/evil.example",
    ],
)
def test_discussion_form_never_redirects_to_a_next_that_is_not_a_local_path(client, world, target):
    objects, people = world
    client.force_login(people["lead"])
    url = reverse("item-discussion", kwargs=objects["item"])
    response = client.post(url, {"text": "Looks like C.2 to me.", "next": target})
    assert response.status_code == 302
    assert response["Location"] == url + "#posts"


def test_discussion_form_follows_a_local_next(client, world):
    objects, people = world
    client.force_login(people["lead"])
    url = reverse("item-discussion", kwargs=objects["item"])
    back = reverse("item-resolve", kwargs=objects["item"]) + "?type=C"
    response = client.post(url, {"text": "Looks like C.2 to me.", "next": back})
    assert response["Location"] == back + "#posts"


def test_language_switch_never_redirects_off_the_site_and_ignores_unknown_languages(client, world):
    """set_language follows only a local `next`, and a language Concord does not offer sets no
    cookie (the page stays in the language it was)."""
    _objects, people = world
    client.force_login(people["volunteer"])
    away = client.post(
        reverse("set_language"), {"language": "zh-hans", "next": "https://evil.example/"}
    )
    assert away.status_code == 302
    assert not away["Location"].startswith("https://evil.example")
    unknown = client.post(reverse("set_language"), {"language": "xx-evil", "next": "/"})
    assert unknown.status_code == 302
    assert (
        unknown.cookies.get("django_language") is None
        or unknown.cookies["django_language"].value != "xx-evil"
    )


def test_nul_in_the_members_api_body_is_refused_naming_the_member(client, world):
    _, people = world
    client.force_login(people["admin"])
    users = get_user_model().objects.count()
    body = '{"people": ["ok", "bad\\u0000"], "role": "volunteer"}'
    response = client.post("/api/projects/study/members/", body, content_type="application/json")
    refused_naming(response, "people[1]")
    assert get_user_model().objects.count() == users


# ---------------------------------------------------------------- time zones


LONG_ZONE = "Asia/" + "x" * 5_000  # the file system refuses so long a name (OSError)
SOURCE = {
    "host": "gitee",
    "repository": "mindspore/mindformers",
    "created_from": "2024-03-01",
    "created_until": "2024-03-31",
}


@pytest.mark.parametrize(
    "zone",
    [LONG_ZONE, "../../etc/passwd", "Asia/Shanghai\x01", "posixrules"],
    ids=["5000-characters", "a-path", "a-control-character", "a-file-that-is-no-zone"],
)
def test_a_time_zone_that_is_no_zone_name_is_refused_naming_it(client, world, zone):
    _, people = world
    client.force_login(people["staff"])
    sources = Source.objects.count()
    body = json.dumps({**SOURCE, "time_zone": zone})
    response = client.post("/api/sources/", body, content_type="application/json")
    refused_naming(response, "time_zone")
    assert "is not a time zone" in " ".join(response.json()["fields"]["time_zone"])
    page = client.post(reverse("ingest-source-create"), {**SOURCE, "time_zone": zone})
    assert page.status_code == 200  # the form again, saying why
    assert "is not one of the available choices" in page.content.decode()
    assert Source.objects.count() == sources


def test_the_harvest_commands_time_zone_is_checked_before_anything_is_made(world):
    sources = Source.objects.count()
    with pytest.raises(CommandError, match="is not a time zone"):
        call_command(
            "harvest",
            "--host=gitee",
            "--repo=mindspore/mindformers",
            "--from=2024-03-01",
            "--until=2024-03-31",
            f"--time-zone={LONG_ZONE}",
        )
    assert Source.objects.count() == sources


# ---------------------------------------------------------------- nested JSON in an item import


ISSUE = '{"url": "https://github.com/NVIDIA/Megatron-LM/issues/%d", %s}'
DEEP = "[" * 5_000 + "]" * 5_000


@pytest.mark.parametrize(
    ("fields", "column", "message"),
    [
        ('"title": {"a": 1}', "title", "expected text, not dict"),
        ('"labels": [[1]]', "labels", "expected a list of label names"),
        ('"comments": [{"body": {"x": 1}}]', "comments[0].body", "expected text, not dict"),
        ('"state": ["open"]', "state", "expected text, not list"),
        ('"created_at": {"at": "2024-05-01"}', "created_at", "expected a date and time"),
        ('"comments": [{"id": {"n": 1}}]', "comments[0].id", "positive whole number"),
        ('"comments": [[{"body": "x"}]]', "comments[0]", "expected an object, not list"),
        (f'"title": {DEEP}', "title", "nested deeper than 32 levels"),
        (f'"labels": [{DEEP}]', "labels", "nested deeper than 32 levels"),
        (f'"comments": [{{"id": 5}}, {{"body": {DEEP}}}]', "comments[1].body", "nested deeper"),
        ('"comments": [{"id": %s}]' % ("9" * 5_000), "comments[0].id", "a number of 5,000 digits"),
    ],
    ids=lambda v: v[:30] if isinstance(v, str) else v,
)
@pytest.mark.parametrize("shape", ["jsonl", "json"])
def test_nested_json_in_an_item_import_is_a_problem_naming_line_and_field(
    client, world, eager_tasks, django_capture_on_commit_callbacks, fields, column, message, shape
):
    from annotation.models import ItemImport

    _, people = world
    client.force_login(people["admin"])
    records = [ISSUE % (1, '"title": "fine"'), ISSUE % (2, fields), ISSUE % (3, '"body": "x"')]
    text = "\n".join(records) if shape == "jsonl" else "[" + ",\n".join(records) + "]"
    issues = Issue.objects.count()
    with django_capture_on_commit_callbacks(execute=True):
        response = client.post(
            "/api/projects/study/item-imports/", {"text": text}, content_type="application/json"
        )
    assert response.status_code == 201, response.content[:300]
    job = ItemImport.objects.get(pk=response.json()["id"])
    assert job.status == "failed", job.error
    (problem,) = job.problems
    assert (problem["line"], problem["column"]) == (2, column), problem
    assert message in problem["message"]
    assert "unexpected error" not in job.error
    assert Issue.objects.count() == issues


def test_too_many_fields_is_the_apis_json_refusal(world):
    """Past Django's DATA_UPLOAD_MAX_NUMBER_FIELDS, the API answers in its own shape, not an HTML
    page (the API fuzzer's find: a form with 1,001 `people`, a GET with 1,001 parameters)."""
    from rest_framework.test import APIClient

    objects, people = world
    api = APIClient()
    api.force_authenticate(people["admin"])
    body = "&".join(f"people=p{n}" for n in range(1001))
    posted = api.post(
        f"/api/projects/{objects['project']['slug']}/members/",
        body,
        content_type="application/x-www-form-urlencoded",
    )
    asked = api.get(f"/api/projects/?{'&'.join(f'x{n}=0' for n in range(1001))}")
    reason = "The number of GET/POST parameters exceeded settings.DATA_UPLOAD_MAX_NUMBER_FIELDS."
    for answer in (posted, asked):
        assert answer.status_code == 400
        assert answer["Content-Type"] == "application/json"
        assert answer.json()["fields"] == {"request": [f"too many fields or files ({reason})"]}
