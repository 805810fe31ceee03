"""A URL list's issues become a project's items, in the page and through the API with a token:
all of them, or a keyword set's candidates among them (judged on the text they have, the rest
taken when the list comes again); a source's issues through the API as on the page."""

from __future__ import annotations

from datetime import date

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.utils import timezone
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

from annotation.models import Stage
from ingest.models import Issue, KeywordSet, Source

BASE = "https://github.com/NVIDIA/Megatron-LM/issues/"


def token_client(user) -> APIClient:
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {Token.objects.create(user=user).key}")
    return client


def with_text(number: str, title: str) -> Issue:
    return Issue.objects.create(
        host="github",
        owner="NVIDIA",
        repo="Megatron-LM",
        number=number,
        url=BASE + number,
        title=title,
        fetched_at=timezone.now(),
    )


@pytest.fixture
def llama():
    return KeywordSet.objects.create(name="llama", keywords=["llama"])


def test_all_issues_of_a_list_become_items_and_bad_lines_are_named(project, personas):
    api = token_client(personas["admin"])
    text = f"{BASE}1\n# a comment\n{BASE}2\nhttps://github.com/NVIDIA/Megatron-LM/pull/3\n"
    response = api.post(
        f"/api/projects/{project.slug}/items/from-url-list/",
        {"text": text, "name": "megatron.txt"},
        format="json",
    )
    assert response.status_code == 200, response.content
    body = response.json()
    assert (body["lines"], body["created"], body["added"], body["awaiting_details"]) == (3, 2, 2, 0)
    assert [e["line"] for e in body["errors"]] == [4]
    items = project.items.select_related("issue")
    assert sorted(i.issue.number for i in items) == ["1", "2"]
    assert {i.stage for i in items} == {
        Stage.CANDIDATE if project.screening_enabled else Stage.OPEN
    }
    again = api.post(
        f"/api/projects/{project.slug}/items/from-url-list/", {"text": text}, format="json"
    ).json()
    assert (again["created"], again["already_known"], again["added"]) == (0, 2, 0)


def test_only_keyword_candidates_and_the_rest_once_their_text_is_in(project, personas, llama):
    with_text("10", "Llama2 fine-tuning diverges")
    with_text("11", "Checkpoint conversion is slow")
    api = token_client(personas["admin"])
    url = f"/api/projects/{project.slug}/items/from-url-list/"
    text = f"{BASE}10\n{BASE}11\n{BASE}12\n"  # 12: a bare URL, its details not fetched yet
    first = api.post(url, {"text": text, "keyword_set": llama.pk}, format="json").json()
    assert (first["added"], first["awaiting_details"]) == (1, 1)
    assert list(project.items.values_list("issue__number", flat=True)) == ["10"]

    # The details of 12 arrive (as the background fetch writes them); the same list again.
    Issue.objects.filter(number="12").update(title="LLaMA-3 OOM", fetched_at=timezone.now())
    second = api.post(url, {"text": text, "keyword_set": llama.pk}, format="json").json()
    assert (second["added"], second["awaiting_details"]) == (1, 0)
    numbers = sorted(project.items.values_list("issue__number", flat=True))
    assert numbers == ["10", "12"]


def test_the_page_takes_a_list_file_with_a_keyword_set(client, project, personas, llama):
    with_text("20", "llama inference crash")
    client.force_login(personas["admin"])
    upload = SimpleUploadedFile("list.txt", f"{BASE}20\n{BASE}21\nnot a url\n".encode())
    response = client.post(
        f"/projects/{project.slug}/items/from-url-list/",
        {"file": upload, "keyword_set": llama.pk},
    )
    assert response.status_code == 200
    page = response.content.decode()
    assert "<strong>1</strong> new item in" in page
    assert "1 issue have no title or body yet" in page
    assert '<td class="num">3</td>' in page
    assert list(project.items.values_list("issue__number", flat=True)) == ["20"]


@pytest.mark.parametrize(("who", "code"), [("volunteer_a", 403), ("lead", 403), ("outsider", 404)])
def test_a_url_list_needs_a_project_admin(project, personas, who, code):
    response = token_client(personas[who]).post(
        f"/api/projects/{project.slug}/items/from-url-list/", {"text": f"{BASE}1"}, format="json"
    )
    assert response.status_code == code
    assert not Issue.objects.exists()


def test_a_lead_adds_a_sources_candidates_through_the_api(project, personas, llama):
    source = Source.objects.create(
        host="github",
        owner="NVIDIA",
        repo="Megatron-LM",
        created_from=date(2024, 1, 1),
        created_until=date(2024, 12, 31),
        keyword_set=llama,
    )
    for number, title in [("30", "llama loss spikes"), ("31", "docs typo")]:
        issue = with_text(number, title)
        Issue.objects.filter(pk=issue.pk).update(source=source)
    from ingest.candidates import candidates_mark

    candidates_mark(keyword_set=llama, issues=Issue.objects.filter(source=source))
    api = token_client(personas["lead"])
    url = f"/api/projects/{project.slug}/items/from-source/"
    response = api.post(url, {"source": source.pk, "which": "candidates"}, format="json")
    assert response.json() == {"added": 1}
    assert api.post(url, {"source": source.pk}, format="json").json() == {"added": 1}
    assert project.items.count() == 2
    volunteer = token_client(personas["volunteer_a"])
    assert volunteer.post(url, {"source": source.pk}, format="json").status_code == 403
