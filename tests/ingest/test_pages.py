"""The ingest pages: staff only; sources, harvest start/progress/cancel against the fake forge,
keyword sets, URL-list upload, and a project's intake from a source."""

import html
import re
from datetime import date, timedelta

import pytest
from django.utils import timezone

from annotation.models import Item, Stage
from ingest.harvest import harvest_start
from ingest.models import HarvestRun, Issue, KeywordMatch, KeywordSet, RunStatus, Source
from tests.conftest import STUDY
from tests.fakes.forge import make_github_issues

WINDOW = {"created_from": date(2023, 1, 1), "created_until": date(2025, 4, 30)}


def a_source(**extra) -> Source:
    return Source.objects.create(
        host="github", owner="NVIDIA", repo="Megatron-LM", **WINDOW, **extra
    )


def serve(forge, n_issues=120, n_prs=10, comments=1):
    """Megatron-LM on the fake GitHub, with issues on both sides of the window."""
    issues, notes = make_github_issues(
        "NVIDIA",
        "Megatron-LM",
        n_issues,
        n_prs=n_prs,
        comments_per_issue=comments,
        start="2022-10-01",
        end="2025-06-30",
    )
    forge.add_github_repo("NVIDIA", "Megatron-LM", issues, notes)
    return issues


def wanted_issues(issues) -> list[dict]:
    return [
        i
        for i in issues
        if "2023-01-01" <= i["created_at"][:10] <= "2025-04-30" and "pull_request" not in i
    ]


def page_text(response) -> str:
    """What a reader sees: tags dropped, entities decoded, whitespace collapsed."""
    return " ".join(html.unescape(re.sub(r"<[^>]+>", " ", response.content.decode())).split())


# ---------------------------------------------------------------- who may come in


@pytest.fixture
def urls(db):
    source = a_source()
    run = harvest_start(source=source, enqueue=False)
    keyword_set = KeywordSet.objects.create(name="pytorch", keywords=["llm"])
    return [
        "/ingest/",
        "/ingest/sources/new/",
        f"/ingest/sources/{source.pk}/",
        f"/ingest/runs/{run.pk}/",
        "/ingest/keyword-sets/",
        "/ingest/keyword-sets/new/",
        f"/ingest/keyword-sets/{keyword_set.pk}/",
        "/ingest/url-lists/",
    ]


def test_anonymous_users_are_sent_to_sign_in(client, urls):
    for url in urls:
        response = client.get(url)
        assert response.status_code == 302, url
        assert response["Location"].startswith("/accounts/login/?next="), url


@pytest.mark.parametrize("who", ["volunteer_a", "lead", "admin", "outsider"])
def test_people_who_are_not_staff_get_403_everywhere(client, personas, urls, who):
    client.force_login(personas[who])
    for url in urls:
        assert client.get(url).status_code == 403, url
    source = Source.objects.get()
    run = HarvestRun.objects.get()
    assert client.post(f"/ingest/sources/{source.pk}/harvest/").status_code == 403
    assert client.post(f"/ingest/runs/{run.pk}/cancel/").status_code == 403
    assert client.post("/ingest/sources/new/", {"host": "github"}).status_code == 403
    assert HarvestRun.objects.count() == 1
    assert HarvestRun.objects.get().status == RunStatus.QUEUED


def test_staff_open_every_page_and_see_the_nav_link(client, staff, urls):
    client.force_login(staff)
    for url in urls:
        assert client.get(url).status_code == 200, url
    assert 'href="/ingest/"' in client.get("/").content.decode()


def test_the_nav_link_is_hidden_from_non_staff(client, personas):
    client.force_login(personas["lead"])
    assert 'href="/ingest/"' not in client.get("/").content.decode()


def test_a_superuser_who_is_not_staff_is_an_ingest_admin(client, db):
    from tests.factories import UserFactory

    client.force_login(UserFactory(username="root", is_superuser=True, is_staff=False))
    assert client.get("/ingest/").status_code == 200


# ---------------------------------------------------------------- sources


def test_empty_source_list_explains_what_a_source_is(client, staff):
    client.force_login(staff)
    text = page_text(client.get("/ingest/"))
    assert "No sources yet" in text
    assert "one GitHub or Gitee issue tracker" in text


def test_source_list_shows_the_last_run_and_pages(client, staff):
    client.force_login(staff)
    source = a_source()
    HarvestRun.objects.create(source=source, status=RunStatus.FAILED, issues_fetched=5)
    HarvestRun.objects.create(
        source=source, status=RunStatus.DONE, issues_fetched=41, comments_fetched=77
    )
    for n in range(25):
        Source.objects.create(host="gitee", owner="ascend", repo=f"repo{n:02d}", **WINDOW)
    first = client.get("/ingest/")
    assert first.context["page"].paginator.count == 26
    assert "Page 1 of 2" in page_text(first)
    assert "Gitee ascend/repo00" in page_text(first)
    second = client.get("/ingest/?page=2")  # sorted by host, then owner/repo
    row = second.context["page"].object_list[0]
    assert row.pk == source.pk
    assert (row.last_run_status, row.last_run_issues, row.last_run_comments) == ("done", 41, 77)
    assert "GitHub NVIDIA/Megatron-LM" in page_text(second)
    assert "Never harvested" not in page_text(second)


def source_form(**changes) -> dict:
    data = {
        "host": "github",
        "repository": "NVIDIA/Megatron-LM",
        "created_from": "2023-01-01",
        "created_until": "2025-04-30",
        "token": "",
        "keyword_set": "",
    }
    return {**data, **changes}


@pytest.mark.parametrize(
    "repository",
    ["NVIDIA", "NVIDIA/Megatron-LM/issues", "https://github.com/NVIDIA", " / ", "a b/c"],
)
def test_a_malformed_repository_is_a_field_error(client, staff, repository):
    client.force_login(staff)
    response = client.post(
        "/ingest/sources/new/", source_form(repository=repository, token="s3cret-token")
    )
    assert response.status_code == 200
    error = response.context["form"].errors["repository"][0]
    assert "write it as owner/repo" in error
    assert "write it as owner/repo" in page_text(response)
    assert "s3cret-token" not in response.content.decode()  # a password input is not echoed
    assert not Source.objects.exists()


def test_a_window_that_ends_before_it_starts_is_refused(client, staff):
    client.force_login(staff)
    response = client.post(
        "/ingest/sources/new/", source_form(created_from="2025-01-01", created_until="2024-01-01")
    )
    assert "must not end before it starts" in response.context["form"].errors["created_until"][0]
    assert not Source.objects.exists()


def test_the_same_tracker_and_window_twice_is_refused_with_a_message(client, staff):
    client.force_login(staff)
    a_source()
    response = client.post("/ingest/sources/new/", source_form())
    assert response.status_code == 200
    assert "is already a source for 2023-01-01..2025-04-30" in page_text(response)
    assert Source.objects.count() == 1


def test_adding_a_source_stores_the_token_and_never_shows_it(client, staff):
    client.force_login(staff)
    keyword_set = KeywordSet.objects.create(name="pytorch", keywords=["llm"])
    response = client.post(
        "/ingest/sources/new/",
        source_form(
            repository=" NVIDIA/Megatron-LM ", token="ghp_secret", keyword_set=keyword_set.pk
        ),
    )
    source = Source.objects.get()
    assert response.status_code == 302
    assert response["Location"] == f"/ingest/sources/{source.pk}/"
    assert (source.owner, source.repo, source.token, source.keyword_set) == (
        "NVIDIA",
        "Megatron-LM",
        "ghp_secret",
        keyword_set,
    )
    detail = client.get(response["Location"])
    assert "ghp_secret" not in detail.content.decode()
    assert "its own (stored, not shown)" in page_text(detail)


# ---------------------------------------------------------------- harvests


def test_start_harvest_runs_against_the_forge_and_issues_land(
    client, staff, forge, eager_tasks, django_capture_on_commit_callbacks
):
    client.force_login(staff)
    wanted = wanted_issues(serve(forge))
    source = a_source()
    with django_capture_on_commit_callbacks(execute=True):
        response = client.post(f"/ingest/sources/{source.pk}/harvest/")
    run = HarvestRun.objects.get()
    assert response.status_code == 302
    assert response["Location"] == f"/ingest/runs/{run.pk}/"
    assert run.status == RunStatus.DONE
    assert run.started_by == staff
    assert Issue.objects.filter(source=source).count() == run.issues_fetched == len(wanted)

    progress_page = client.get(response["Location"])
    text = page_text(progress_page)
    assert "Status: Done" in text
    assert f"Issues fetched {len(wanted)}" in text
    assert f"Comments fetched {run.comments_fetched}" in text
    assert f"Pull requests skipped {run.pull_requests_skipped}" in text
    assert "Issues and comments harvested." in text
    body = progress_page.content.decode()
    assert 'value="1.000"' in body  # the progress bar is full
    assert 'id="cancel-form" hidden' in body  # nothing left to cancel
    assert "js/harvest-progress.js" in body
    assert "<script>" not in body  # CSP: no inline script

    listing = client.get("/ingest/")
    row = listing.context["page"].object_list[0]
    assert (row.n_issues, row.last_run_status) == (len(wanted), "done")


def test_a_second_start_while_one_is_active_shows_the_message(client, staff):
    client.force_login(staff)
    source = a_source()
    first = client.post(f"/ingest/sources/{source.pk}/harvest/")  # queued: on-commit never runs
    assert first.status_code == 302
    second = client.post(f"/ingest/sources/{source.pk}/harvest/", follow=True)
    assert second.status_code == 200
    assert second.redirect_chain[-1][0] == f"/ingest/sources/{source.pk}/"
    run = HarvestRun.objects.get()
    assert f"is already being harvested (run {run.pk}, queued)" in page_text(second)


def test_cancel_stops_a_queued_run(client, staff):
    client.force_login(staff)
    source = a_source()
    client.post(f"/ingest/sources/{source.pk}/harvest/")
    run = HarvestRun.objects.get()
    response = client.post(f"/ingest/runs/{run.pk}/cancel/", follow=True)
    run.refresh_from_db()
    assert run.status == RunStatus.CANCELLED
    assert run.finished_at is not None
    assert "Status: Cancelled" in page_text(response)
    # The source can be harvested again.
    client.post(f"/ingest/sources/{source.pk}/harvest/")
    assert HarvestRun.objects.filter(status=RunStatus.QUEUED).count() == 1


def test_cancel_needs_post(client, staff):
    client.force_login(staff)
    run = harvest_start(source=a_source(), enqueue=False)
    assert client.get(f"/ingest/runs/{run.pk}/cancel/").status_code == 405
    run.refresh_from_db()
    assert run.status == RunStatus.QUEUED


def response_body(client, run) -> str:
    return client.get(f"/ingest/runs/{run.pk}/").content.decode()


def test_the_progress_page_says_how_long_the_rate_limit_wait_is(client, staff):
    client.force_login(staff)
    run = harvest_start(source=a_source(), enqueue=False)
    now = timezone.now()
    HarvestRun.objects.filter(pk=run.pk).update(
        status=RunStatus.WAITING,
        waiting_until=now + timedelta(minutes=14, seconds=10),
        rate_remaining=0,
        rate_reset_at=now + timedelta(minutes=14),
        pages=3,
        requests=4,
    )
    text = page_text(client.get(f"/ingest/runs/{run.pk}/"))
    assert "Status: Waiting to go on" in text
    assert "waiting 14 min for the GitHub limit to reset" in text
    assert "Pages done 3" in text
    assert "Requests 4" in text
    assert 'data-active="true"' in response_body(client, run)  # the script polls while active


def test_the_progress_page_shows_why_a_run_failed(client, staff):
    client.force_login(staff)
    source = a_source()
    HarvestRun.objects.create(
        source=source,
        status=RunStatus.FAILED,
        error="GitHub said 404: NVIDIA/Megatron-LM does not exist or the token cannot see it.",
        rate_remaining=4990,
    )
    text = page_text(client.get(f"/ingest/runs/{HarvestRun.objects.get().pk}/"))
    assert "Status: Failed" in text
    assert "GitHub said 404" in text
    assert "when the run stopped: 4990 GitHub requests left" in text


def test_an_unknown_source_or_run_is_404(client, staff):
    client.force_login(staff)
    assert client.get("/ingest/sources/999999/").status_code == 404
    assert client.get("/ingest/runs/999999/").status_code == 404
    assert client.post("/ingest/sources/999999/harvest/").status_code == 404


# ---------------------------------------------------------------- keyword sets


def test_importing_the_study_filter_keywords_makes_one_set_per_framework(client, staff):
    client.force_login(staff)
    path = STUDY / "filter_keywords"
    with path.open("rb") as upload:
        response = client.post("/ingest/keyword-sets/", {"file": upload}, follow=True)
    names = set(KeywordSet.objects.values_list("name", flat=True))
    assert names == {"tensorflow", "mindspore", "pytorch"}
    text = page_text(response)
    assert "Imported 3 keyword sets" in text
    tensorflow = KeywordSet.objects.get(name="tensorflow")
    assert "large language model" in tensorflow.keywords
    assert f"tensorflow ({len(tensorflow.keywords)} keywords)" in text


@pytest.mark.parametrize(
    ("content", "expected"),
    [
        (b"pytorch_keywords = [\n  'llm',\n  'gpt'\n  'lora',,\n]\n", "line 4"),
        (b"a = 1\npytorch_keywords = [\n  'llm',\n  open('x'),\n]\n", "line 4"),
        (b"# nothing here\nmodels = ['llm']\n", "no `<framework>_keywords = [...]` lists found"),
        (
            b"x = 1\n\xff\xfe\x00bad",
            "filter_keywords, line 2: not UTF-8 text: byte 1 of the line (0xff)",
        ),
    ],
)
def test_a_bad_keyword_file_is_refused_with_its_line(client, staff, content, expected):
    from django.core.files.uploadedfile import SimpleUploadedFile

    client.force_login(staff)
    upload = SimpleUploadedFile("filter_keywords", content)
    response = client.post("/ingest/keyword-sets/", {"file": upload})
    assert response.status_code == 200
    assert expected in page_text(response)
    assert not KeywordSet.objects.exists()


def test_editing_a_keyword_set_marks_its_sources_candidates_again(client, staff):
    from tests.factories import IssueFactory

    client.force_login(staff)
    keyword_set = KeywordSet.objects.create(name="pytorch", keywords=["llama"])
    source = a_source(keyword_set=keyword_set)
    llama = IssueFactory(source=source, title="llama-3 OOM with FSDP")
    lora = IssueFactory(source=source, title="LoRA adapters lose precision")
    response = client.post(
        f"/ingest/keyword-sets/{keyword_set.pk}/",
        {"name": "pytorch", "description": "study filter", "keywords": "lora\n\n  LoRA \nfsdp\n"},
    )
    assert response.status_code == 302
    keyword_set.refresh_from_db()
    assert keyword_set.keywords == ["lora", "fsdp"]
    matches = dict(KeywordMatch.objects.values_list("issue_id", "keywords"))
    assert matches == {llama.pk: ["fsdp"], lora.pk: ["lora"]}
    edit = client.get(f"/ingest/keyword-sets/{keyword_set.pk}/")
    assert "lora\nfsdp</textarea>" in edit.content.decode()


def test_a_new_keyword_set_needs_a_free_name_and_a_keyword(client, staff):
    client.force_login(staff)
    KeywordSet.objects.create(name="pytorch", keywords=["llm"])
    response = client.post("/ingest/keyword-sets/new/", {"name": "pytorch", "keywords": " \n "})
    errors = response.context["form"].errors
    assert "already a keyword set named 'pytorch'" in errors["name"][0]
    assert errors["keywords"] == ["Give at least one keyword."]
    client.post("/ingest/keyword-sets/new/", {"name": "jax", "keywords": "pjit\nxla"})
    assert KeywordSet.objects.get(name="jax").keywords == ["pjit", "xla"]


# ---------------------------------------------------------------- URL lists


def test_url_list_upload_reports_bad_lines_by_number_and_takes_the_rest(client, staff):
    from django.core.files.uploadedfile import SimpleUploadedFile

    client.force_login(staff)
    text = (
        "https://github.com/NVIDIA/Megatron-LM/issues/1516\n"
        "\n"
        "https://github.com/NVIDIA/Megatron-LM/pull/1517\n"
        "https://gitee.com/ascend/MindSpeed/issues/IBZ414\n"
        "not a url\n"
        "https://github.com/NVIDIA/Megatron-LM/issues/1516\n"
    )
    upload = SimpleUploadedFile("Megatron-LM_2024.txt", text.encode())
    response = client.post("/ingest/url-lists/", {"file": upload})
    assert response.status_code == 200
    assert Issue.objects.count() == 2
    report = response.context["report"]
    assert [e.where.line for e in report.errors] == [3, 5]
    body = response.content.decode()
    assert re.search(r'<td class="num">3</td><td>[^<]*is a pull request, not an issue', body)
    assert re.search(r'<td class="num">5</td><td>[^<]*is not an http\(s\) URL', body)
    text = page_text(response)
    assert "2 new issues, 0 already known, 1 repeated line, from 5 URL lines" in text
    assert "2 lines could not be taken; the rest went in." in text


def test_a_study_url_list_uploads_whole(client, staff):
    client.force_login(staff)
    path = STUDY / "issue-lists" / "MindSpeed_2024.txt"
    with path.open("rb") as upload:
        response = client.post("/ingest/url-lists/", {"file": upload})
    assert response.context["report"].errors == []
    assert Issue.objects.filter(host="gitee").count() == response.context["report"].created > 0


# ---------------------------------------------------------------- a project's intake


@pytest.fixture
def harvested(db):
    """A source with a keyword set: three issues, two of them candidates, plus a pull request."""
    from tests.factories import IssueFactory

    keyword_set = KeywordSet.objects.create(name="pytorch", keywords=["llama"])
    source = a_source(keyword_set=keyword_set)
    issues = [
        IssueFactory(source=source, title="llama OOM"),
        IssueFactory(source=source, title="Llama2 loss spikes"),
        IssueFactory(source=source, title="Docs typo"),
        IssueFactory(source=source, title="llama fix", is_pull_request=True),
    ]
    from ingest.candidates import candidates_mark

    candidates_mark(keyword_set=keyword_set, issues=issues)
    return source


@pytest.mark.parametrize(("which", "added"), [("all", 3), ("candidates", 2)])
def test_a_lead_adds_items_from_a_source(client, personas, project, harvested, which, added):
    client.force_login(personas["lead"])
    url = f"/projects/{project.slug}/items/from-source/"
    assert client.get(url).status_code == 200
    response = client.post(url, {"source": harvested.pk, "which": which}, follow=True)
    assert response.redirect_chain[-1][0] == f"/projects/{project.slug}/"
    assert f"Added {added} new items from" in page_text(response)
    assert project.items.count() == added
    assert set(project.items.values_list("stage", flat=True)) == {Stage.CANDIDATE}
    again = client.post(url, {"source": harvested.pk, "which": which}, follow=True)
    assert "Added 0 new items" in page_text(again)


def test_candidates_only_needs_a_keyword_set(client, personas, project, db):
    client.force_login(personas["admin"])
    source = a_source()
    response = client.post(
        f"/projects/{project.slug}/items/from-source/", {"source": source.pk, "which": "candidates"}
    )
    assert response.status_code == 200
    assert "has no keyword set, so it has no keyword candidates" in page_text(response)
    assert not Item.objects.exists()


@pytest.mark.parametrize(("who", "code"), [("volunteer_a", 403), ("outsider", 404)])
def test_volunteers_and_outsiders_cannot_add_items(client, personas, project, harvested, who, code):
    client.force_login(personas[who])
    url = f"/projects/{project.slug}/items/from-source/"
    assert client.get(url).status_code == code
    assert client.post(url, {"source": harvested.pk, "which": "all"}).status_code == code
    assert not Item.objects.exists()


def test_the_project_page_links_the_intake_for_leads_only(client, personas, project):
    link = f'href="/projects/{project.slug}/items/from-source/"'
    client.force_login(personas["lead"])
    assert link in client.get(f"/projects/{project.slug}/").content.decode()
    client.force_login(personas["volunteer_a"])
    assert link not in client.get(f"/projects/{project.slug}/").content.decode()
