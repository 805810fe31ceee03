"""GitHub and Gitee take owner and repository names in any case: `nvidia/megatron-lm` is
`NVIDIA/Megatron-LM`. Concord holds such an issue once, under the first spelling it saw, whether
it comes from a URL list, an item import, a label import or a harvest; Gitee's issue ids stay
case-sensitive."""

from __future__ import annotations

import json
from datetime import date

import pytest

from annotation.models import Item
from annotation.projects.importers import study_labels_import
from ingest.harvest import harvest_advance, harvest_start
from ingest.importers import url_list_import
from ingest.issue_files import issue_file_parse, issue_file_store, issue_file_stored_clashes
from ingest.issue_refs import IssueRef, parse_issue_url
from ingest.models import Comment, Issue, RunStatus, Source
from ingest.services import issues_ensure
from tests.annotation.test_item_imports import admin_api, post_file  # noqa: F401 - a fixture
from tests.fakes.forge import make_github_issues

UPPER = "https://github.com/NVIDIA/Megatron-LM/issues/{}"
LOWER = "https://github.com/nvidia/megatron-lm/issues/{}"


def test_names_are_compared_without_case_and_numbers_exactly():
    assert parse_issue_url(LOWER.format(5)) == parse_issue_url(UPPER.format(5))
    assert len({parse_issue_url(LOWER.format(5)), parse_issue_url(UPPER.format(5))}) == 1
    assert parse_issue_url(LOWER.format(5)).repository == "nvidia/megatron-lm"  # as given
    gitee = "https://gitee.com/{}/issues/{}"
    assert parse_issue_url(gitee.format("Ascend/mindspeed", "IBDZ87")) == parse_issue_url(
        gitee.format("ascend/MindSpeed", "IBDZ87")
    )
    assert IssueRef("gitee", "a", "b", "IBDZ87") != IssueRef("gitee", "a", "b", "IBDZ88")


def test_a_url_list_in_either_spelling_is_one_issue_and_one_item(project, personas):
    from rest_framework.test import APIClient

    api = APIClient()
    api.force_authenticate(personas["admin"])
    url = f"/api/projects/{project.slug}/items/from-url-list/"
    first = api.post(url, {"text": UPPER.format(5), "name": "a.txt"}, format="json").json()
    again = api.post(url, {"text": LOWER.format(5), "name": "b.txt"}, format="json").json()
    assert (first["created"], first["added"]) == (1, 1)
    assert (again["created"], again["added"]) == (0, 0)
    (issue,) = Issue.objects.all()
    assert issue.repository == "NVIDIA/Megatron-LM"  # the first spelling seen
    assert project.items.count() == 1
    both = url_list_import(text=f"{LOWER.format(6)}\n{UPPER.format(6)}\n", name="c.txt")
    assert (both.created, both.duplicates) == (1, 1)
    # A new issue of a repository Concord holds takes the repository's spelling.
    assert Issue.objects.get(number="6").repository == "NVIDIA/Megatron-LM"


def test_an_item_import_in_another_spelling_is_the_same_issue_item_and_comments(
    admin_api,  # noqa: F811 - the fixture
    project,
    eager_tasks,
    django_capture_on_commit_callbacks,
):
    def record(url: str) -> bytes:
        comments = [{"author": "a", "body": "which version?", "created_at": "2024-05-01T11:00Z"}]
        body = {"url": url, "title": "OOM", "updated_at": "2024-05-02T10:00:00Z"}
        return (json.dumps({**body, "comments": comments}) + "\n").encode()

    for url in (UPPER.format(7), LOWER.format(7)):
        response = post_file(
            admin_api, project, "i.jsonl", record(url), django_capture_on_commit_callbacks
        )
        job = admin_api.get(f"/api/projects/{project.slug}/item-imports/{response.json()['id']}/")
        assert job.json()["status"] == "done", job.json()
    (issue,) = Issue.objects.all()
    assert issue.repository == "NVIDIA/Megatron-LM"
    assert issue.url == UPPER.format(7)
    assert project.items.count() == 1
    assert Comment.objects.count() == 1  # the comment without an id is the same comment

    text = (record(UPPER.format(8)) + record(LOWER.format(8))).decode()
    _, errors = issue_file_parse(text=text, name="two.jsonl")
    assert [(e.where.line, e.where.column, e.message) for e in errors] == [
        (2, "url", "duplicate of line 1")
    ]


def test_a_comment_id_on_the_same_issue_in_another_spelling_is_no_clash(db):
    line = {"url": UPPER.format(9), "comments": [{"id": 91, "body": "x"}]}
    records, _ = issue_file_parse(text=json.dumps(line), name="a.jsonl")
    issue_file_store(records)
    line["url"] = LOWER.format(9)
    records, _ = issue_file_parse(text=json.dumps(line), name="b.jsonl")
    assert issue_file_stored_clashes(records, "b.jsonl") == []
    stored = issue_file_store(records)
    assert stored.created == 0
    assert Issue.objects.count() == 1


def test_a_label_import_in_another_spelling_labels_the_same_item(project, tmp_path):
    url_list_import(text=UPPER.format(1516), name="list.txt", fetch_details=False)
    path = tmp_path / "labels.csv"
    path.write_text(
        f"Issue_URL,Label1,Final_Label\n{LOWER.format(1516)},C.1,C.1\n", encoding="utf-8"
    )
    study_labels_import(project=project, path=path)
    (issue,) = Issue.objects.all()
    assert issue.repository == "NVIDIA/Megatron-LM"
    item = Item.objects.get(project=project)
    assert item.issue_id == issue.pk
    assert item.annotations.count() == 1


def test_a_harvest_of_a_source_in_another_spelling_fills_in_the_issues_held(db, forge):
    issues, notes = make_github_issues(
        "NVIDIA", "Megatron-LM", 4, comments_per_issue=1, start="2024-01-01", end="2024-01-31"
    )
    forge.add_github_repo("NVIDIA", "Megatron-LM", issues, notes)
    url_list_import(text=UPPER.format(issues[0]["number"]), name="list", fetch_details=False)
    source = Source.objects.create(
        host="github",
        owner="nvidia",
        repo="megatron-lm",
        created_from=date(2024, 1, 1),
        created_until=date(2024, 1, 31),
    )
    run = harvest_advance(run_id=harvest_start(source=source, enqueue=False).pk)
    assert run.status == RunStatus.DONE, run.error
    assert Issue.objects.count() == 4
    assert set(Issue.objects.values_list("owner", "repo")) == {("NVIDIA", "Megatron-LM")}
    held = Issue.objects.get(number=str(issues[0]["number"]))
    assert held.title == issues[0]["title"]  # the harvest found the row the list made
    assert held.comments.count() == 1
    assert Comment.objects.count() == 4


@pytest.mark.parametrize("first", ["NVIDIA/Megatron-LM", "nvidia/megatron-lm"])
def test_two_rows_stored_before_are_left_and_the_older_one_is_used(db, first):
    """Rows from before names were compared without case may hold one issue twice: nothing
    fails, and every lookup finds the older row."""
    second = "nvidia/megatron-lm" if first == "NVIDIA/Megatron-LM" else "NVIDIA/Megatron-LM"
    rows = [
        Issue.objects.create(
            host="github", owner=name.split("/")[0], repo=name.split("/")[1], number="3", url=""
        )
        for name in (first, second)
    ]
    ids = issues_ensure([parse_issue_url(UPPER.format(3)), parse_issue_url(LOWER.format(3))])
    assert list(ids.values()) == [rows[0].pk]
    assert Issue.objects.count() == 2
