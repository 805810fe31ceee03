"""Items with their text in bulk through the API, as a script sends them: a JSON or JSONL file of
issues becomes a background job whose progress the client polls; a file with any problem adds
nothing and says where each problem is; importing again changes nothing."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.utils import timezone, translation
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

from annotation.jobs import jobs_stale
from annotation.models import ItemImport, JobStatus, Stage
from annotation.projects.item_imports import item_import_dir, item_import_run, item_import_start
from ingest.models import Comment, Issue

URL = "https://github.com/NVIDIA/Megatron-LM/issues/{}"


def token_client(user) -> APIClient:
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {Token.objects.create(user=user).key}")
    return client


def issue(number: int, **fields) -> dict:
    return {
        "url": URL.format(number),
        "title": f"训练时显存溢出 #{number}",
        "body": "Out of memory with `--fp16` and <script>alert(1)</script>",
        "author": "volunteer-dev",
        "created_at": "2024-05-01T10:00:00Z",
        "updated_at": "2024-05-02T10:00:00Z",
        "comments": [
            {"author": "maintainer", "body": "Which version?", "created_at": "2024-05-01T11:00Z"},
            {
                "id": 1000 + number,
                "author": "volunteer-dev",
                "body": "0.9",
                "created_at": "2024-05-01T12:00Z",
            },
        ],
        **fields,
    }


def jsonl(*records: dict) -> bytes:
    return "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records).encode()


@pytest.fixture(autouse=True)
def files_in_tmp(settings, tmp_path):
    settings.VAR_DIR = tmp_path  # where queued files wait


@pytest.fixture
def admin_api(personas):
    return token_client(personas["admin"])


def post_file(api, project, name: str, data: bytes, run_on_commit):
    with run_on_commit(execute=True):
        upload = SimpleUploadedFile(name, data, content_type="application/octet-stream")
        return api.post(
            f"/api/projects/{project.slug}/item-imports/", {"file": upload}, format="multipart"
        )


def test_a_jsonl_file_becomes_items_with_their_text_and_comments(
    admin_api, project, eager_tasks, django_capture_on_commit_callbacks
):
    response = post_file(
        admin_api,
        project,
        "issues.jsonl",
        jsonl(issue(1), issue(2, comments=[]), issue(3, state="closed", labels=["bug"])),
        django_capture_on_commit_callbacks,
    )
    assert response.status_code == 201, response.content
    job_url = f"/api/projects/{project.slug}/item-imports/{response.json()['id']}/"
    job = admin_api.get(job_url).json()
    assert job["status"] == "done", job
    assert (job["records_total"], job["issues_created"], job["items_added"]) == (3, 3, 3)
    assert job["progress"]["fraction"] == 1.0
    assert job["problems"] == []

    stored = Issue.objects.get(number="1")
    assert stored.title == "训练时显存溢出 #1"
    assert stored.author == "volunteer-dev"
    assert stored.comment_count == 2
    assert stored.fetched_at is not None  # no background fetch will overwrite the file's text
    assert sorted(stored.comments.values_list("body", flat=True)) == ["0.9", "Which version?"]
    assert Issue.objects.get(number="3").labels == ["bug"]
    stages = set(project.items.values_list("stage", flat=True))
    assert stages == {Stage.CANDIDATE if project.screening_enabled else Stage.OPEN}

    # The same file again: nothing new, nothing duplicated.
    again = post_file(
        admin_api,
        project,
        "issues.jsonl",
        jsonl(issue(1), issue(2, comments=[]), issue(3, state="closed", labels=["bug"])),
        django_capture_on_commit_callbacks,
    )
    second = admin_api.get(
        f"/api/projects/{project.slug}/item-imports/{again.json()['id']}/"
    ).json()
    assert (second["status"], second["issues_created"], second["items_added"]) == ("done", 0, 0)
    assert Comment.objects.count() == 4  # issues 1 and 3, two each
    assert project.items.count() == 3


def test_a_bad_json_file_adds_nothing_and_names_each_line_and_field(
    admin_api, project, eager_tasks, django_capture_on_commit_callbacks
):
    records = [
        issue(1),
        issue(2, created_at="yesterday"),
        {"url": "https://github.com/NVIDIA/Megatron-LM/pull/7"},
        issue(4, comments=[{"body": 5}]),
        issue(1),
        issue(6, titel="typo"),
    ]
    text = "[\n" + ",\n".join(json.dumps(r, ensure_ascii=False) for r in records) + "\n]\n"
    response = post_file(
        admin_api, project, "issues.json", text.encode(), django_capture_on_commit_callbacks
    )
    job = admin_api.get(
        f"/api/projects/{project.slug}/item-imports/{response.json()['id']}/"
    ).json()
    assert job["status"] == "failed"
    where = [(p["path"], p["line"], p["column"]) for p in job["problems"]]
    assert where == [
        ("issues.json", 3, "created_at"),
        ("issues.json", 4, "url"),
        ("issues.json", 5, "comments[0].body"),
        ("issues.json", 6, "url"),
        ("issues.json", 7, "titel"),
    ]
    messages = [p["message"] for p in job["problems"]]
    assert "'yesterday' is not a date and time" in messages[0]
    assert "pull request" in messages[1]
    assert messages[3] == "duplicate of line 2"
    assert job["error"].startswith("5 problem(s); nothing was imported: issues.json, line 3")
    assert Issue.objects.count() == 0
    assert project.items.count() == 0


def test_broken_json_is_reported_at_its_line(
    admin_api, project, eager_tasks, django_capture_on_commit_callbacks
):
    text = jsonl(issue(1)) + b'{"url": "' + URL.format(2).encode() + b'", "title": }\n'
    response = post_file(admin_api, project, "cut.jsonl", text, django_capture_on_commit_callbacks)
    job = ItemImport.objects.get(pk=response.json()["id"])
    assert job.status == JobStatus.FAILED
    assert job.problems[0]["line"] == 2
    assert job.problems[0]["message"].startswith("not JSON: Expecting value")
    assert project.items.count() == 0


def test_bytes_that_are_not_utf8_are_refused_at_once_with_their_line(admin_api, project):
    data = jsonl(issue(1)) + '{"url": "x", "title": "caf\xe9"}\n'.encode("latin-1")
    upload = SimpleUploadedFile("latin.jsonl", data)
    response = admin_api.post(
        f"/api/projects/{project.slug}/item-imports/", {"file": upload}, format="multipart"
    )
    assert response.status_code == 400
    assert response.json()["where"] == {"path": "latin.jsonl", "line": 2, "column": None}
    assert ItemImport.objects.count() == 0


def test_a_raw_nul_in_the_file_is_refused_with_its_line(admin_api, project):
    data = jsonl(issue(1)) + b'{"url": "\x00"}\n'
    upload = SimpleUploadedFile("nul.jsonl", data)
    response = admin_api.post(
        f"/api/projects/{project.slug}/item-imports/", {"file": upload}, format="multipart"
    )
    assert response.status_code == 400
    assert response.json()["where"]["line"] == 2
    assert "NUL" in response.json()["detail"]


@pytest.mark.parametrize(("who", "code"), [("volunteer_a", 403), ("lead", 403), ("outsider", 404)])
def test_only_project_admins_import(project, personas, who, code):
    api = token_client(personas[who])
    response = api.post(
        f"/api/projects/{project.slug}/item-imports/",
        {"text": jsonl(issue(1)).decode(), "name": "a.jsonl"},
        format="json",
    )
    assert response.status_code == code
    assert ItemImport.objects.count() == 0
    assert api.get(f"/api/projects/{project.slug}/item-imports/").status_code == code


def queued(project, data: bytes, name: str = "a.jsonl") -> ItemImport:
    """A job as the API queues it, its task not sent."""
    return item_import_start(
        project=project, user=None, name=name, blocks=[data], enqueue=False
    ).job


def test_a_job_whose_worker_went_silent_is_swept_up_and_finished(project, personas, settings):
    job = queued(project, jsonl(issue(1)))
    assert jobs_stale(ItemImport) == []  # fresh: a worker may still take it
    past = timezone.now() - timedelta(seconds=settings.JOB_STALE_SECONDS + 1)
    ItemImport.objects.filter(pk=job.pk).update(status=JobStatus.RUNNING, heartbeat_at=past)
    assert jobs_stale(ItemImport) == [job.pk]

    finished = item_import_run(job_id=job.pk)  # what the re-sent task calls
    assert finished.status == JobStatus.DONE
    assert finished.file == ""  # the file is not kept once it is in
    assert not (item_import_dir() / job.file).exists()
    assert project.items.count() == 1
    assert item_import_run(job_id=job.pk).finished_at == finished.finished_at  # left alone


def test_the_schema_documents_the_script_routes(admin_api):
    schema = admin_api.get("/api/schema/", HTTP_ACCEPT="application/vnd.oai.openapi+json").json()
    paths = schema["paths"]
    imports = paths["/api/projects/{slug}/item-imports/"]
    assert set(imports["post"]["requestBody"]["content"]) == {
        "application/json",
        "multipart/form-data",
    }
    assert "/api/projects/{slug}/item-imports/{id}/" in paths
    file_route = paths["/api/projects/{slug}/export-jobs/{id}/file/"]["get"]
    assert "text/csv" in file_route["responses"]["200"]["content"]
    problem = schema["components"]["schemas"]["ProblemOut"]["properties"]
    assert set(problem) == {"path", "line", "column", "message"}


def test_line_separators_inside_strings_do_not_split_a_jsonl_record():
    from ingest.issue_files import issue_file_parse

    text = jsonl(issue(1, title="第一行\u2028第二行"), issue(2)).decode()
    assert "\u2028" in text  # written raw, as JSON allows
    records, errors = issue_file_parse(text=text, name="sep.jsonl")
    assert errors == []
    assert [(r.line, r.issue.title) for r in records] == [
        (1, "第一行\u2028第二行"),
        (2, issue(2)["title"]),
    ]


def test_a_harvested_issue_with_newer_text_keeps_it(
    admin_api, project, eager_tasks, django_capture_on_commit_callbacks
):
    Issue.objects.create(
        host="github",
        owner="NVIDIA",
        repo="Megatron-LM",
        number="1",
        url=URL.format(1),
        title="As the tracker has it now",
        updated_at=timezone.now(),
        fetched_at=timezone.now(),
    )
    response = post_file(
        admin_api, project, "old.jsonl", jsonl(issue(1)), django_capture_on_commit_callbacks
    )
    assert ItemImport.objects.get(pk=response.json()["id"]).status == JobStatus.DONE
    assert Issue.objects.get(number="1").title == "As the tracker has it now"
    assert project.items.count() == 1


def test_the_sweep_task_sends_stale_imports_and_exports_again(
    project, eager_tasks, settings, tmp_path
):
    from annotation.models import ExportJob
    from annotation.tasks import jobs_resume_stale

    settings.VAR_DIR = tmp_path  # where the export's file goes
    job = queued(project, jsonl(issue(1)))
    export = ExportJob.objects.create(project=project, format="study")
    # fresh: left to workers (every kind of job the sweep knows: none sent)
    nothing: dict[str, list[int]] = {kind: [] for kind in jobs_resume_stale()}
    assert nothing.keys() >= {"exports", "item_imports", "label_imports", "duplicate_indexes"}
    assert jobs_resume_stale() == nothing
    past = timezone.now() - timedelta(seconds=settings.JOB_STALE_SECONDS + 1)
    ItemImport.objects.filter(pk=job.pk).update(created_at=past)
    ExportJob.objects.filter(pk=export.pk).update(created_at=past)

    assert jobs_resume_stale() == {**nothing, "exports": [export.pk], "item_imports": [job.pk]}
    assert ItemImport.objects.get(pk=job.pk).status == JobStatus.DONE
    assert ExportJob.objects.get(pk=export.pk).status == JobStatus.DONE
    assert project.items.count() == 1


def test_imported_text_reaches_volunteers_sanitized(
    admin_api, project, personas, eager_tasks, django_capture_on_commit_callbacks
):
    project.screening_enabled = False
    project.save(update_fields=["screening_enabled"])
    hostile = issue(1, body='<img src=x onerror="alert(1)"> <script>alert(2)</script> **加粗**')
    post_file(admin_api, project, "x.jsonl", jsonl(hostile), django_capture_on_commit_callbacks)

    item = token_client(personas["volunteer_a"]).post(f"/api/projects/{project.slug}/next-item/")
    assert item.status_code == 200
    body = item.json()["body_html"]
    assert "onerror" not in body
    assert "<script" not in body
    assert "<strong>加粗</strong>" in body
    assert item.json()["issue"]["url"] == URL.format(1)


def test_the_progress_answer_says_where_the_job_is(admin_api, project, settings):
    job = ItemImport.objects.create(project=project, name="a.jsonl")
    url = f"/api/projects/{project.slug}/item-imports/{job.pk}/"
    assert admin_api.get(url).json()["progress"] == {
        "fraction": 0.0,
        "step": "Queued: waiting for a worker.",
    }
    past = timezone.now() - timedelta(seconds=settings.JOB_STALE_SECONDS + 60)
    ItemImport.objects.filter(pk=job.pk).update(created_at=past)
    assert "no worker has taken it" in admin_api.get(url).json()["progress"]["step"]
    ItemImport.objects.filter(pk=job.pk).update(status=JobStatus.RUNNING, records_checked=1500)
    assert admin_api.get(url).json()["progress"]["step"] == "Checking: 1,500 issues read."
    ItemImport.objects.filter(pk=job.pk).update(records_total=2000)
    running = admin_api.get(url).json()
    assert running["is_active"] is True
    assert running["progress"]["step"] == "Writing 2,000 issues as items."
    listed = admin_api.get(f"/api/projects/{project.slug}/item-imports/").json()
    assert [j["id"] for j in listed] == [job.pk]
    assert "file" not in listed[0]


def test_the_command_imports_good_files_and_names_the_problems_of_bad_ones(project, tmp_path):
    from io import StringIO

    from django.core.management import CommandError, call_command

    good, bad = tmp_path / "good.jsonl", tmp_path / "bad.jsonl"
    good.write_bytes(jsonl(issue(1), issue(2)))
    bad.write_bytes(jsonl(issue(3), issue(4, created_at="soon")))
    out, err = StringIO(), StringIO()
    with pytest.raises(CommandError, match="1 of 2 file"):
        call_command("import_items", "--project", project.slug, good, bad, stdout=out, stderr=err)
    assert f"{good}: 2 issues, 2 new to Concord, 2 new items" in out.getvalue()
    assert f"{bad}, line 2, created_at: 'soon' is not a date and time" in err.getvalue()
    assert sorted(project.items.values_list("issue__number", flat=True)) == ["1", "2"]


# -- Issues are shared: a file may not change the text of an issue another project labels.

ISSUED = datetime(2024, 5, 1, 10, tzinfo=UTC)  # issue()'s created_at


def held_issue(number: int, holder, **fields) -> Issue:
    """An issue as its tracker has it, an item of `holder`."""
    from annotation.models import Item

    text = {
        "title": "As the tracker has it",
        "body": "The tracker's body",
        "updated_at": timezone.now() - timedelta(days=365),
    }
    stored = Issue.objects.create(
        host="github",
        owner="NVIDIA",
        repo="Megatron-LM",
        number=str(number),
        url=URL.format(number),
        fetched_at=timezone.now(),
        **{**text, **fields},
    )
    Item.objects.create(project=holder, issue=stored)
    return stored


def test_an_issue_another_project_holds_keeps_its_text_and_the_job_says_so(
    admin_api, project, eager_tasks, django_capture_on_commit_callbacks
):
    from tests.factories import ProjectFactory

    other = ProjectFactory(taxonomy=project.taxonomy)
    labelled = held_issue(1, other)
    Comment.objects.create(host="github", comment_id=1001, issue=labelled, body="The tracker's")
    older = held_issue(3, other)
    later = (timezone.now() + timedelta(days=1)).isoformat()
    same = issue(4, comments=[], updated_at=later)
    held_issue(4, other, **{k: same[k] for k in ("title", "body", "author")}, created_at=ISSUED)
    file = jsonl(
        issue(1, title="Rewritten", body="Rewritten", updated_at=later),
        issue(2),  # nobody holds it: taken as the file has it
        issue(3, title="An older copy", updated_at="2020-01-01T00:00:00Z"),  # nothing to say
        same,  # the same text, touched later: nothing to say either
    )
    response = post_file(admin_api, project, "b.jsonl", file, django_capture_on_commit_callbacks)

    job = admin_api.get(
        f"/api/projects/{project.slug}/item-imports/{response.json()['id']}/"
    ).json()
    assert job["status"] == "done", job
    assert job["problems"] == [
        {
            "path": "b.jsonl",
            "line": 1,
            "column": "url",
            "message": f"kept the text of an issue another project holds: {URL.format(1)}",
        }
    ]
    assert "1 kept their text" in job["progress"]["step"]
    labelled.refresh_from_db()
    assert (labelled.title, labelled.body) == ("As the tracker has it", "The tracker's body")
    assert list(labelled.comments.values_list("comment_id", "body")) == [(1001, "The tracker's")]
    assert Issue.objects.get(pk=older.pk).title == "As the tracker has it"
    assert Issue.objects.get(number="2").title == issue(2)["title"]
    held = sorted(project.items.values_list("issue__number", flat=True))
    assert held == ["1", "2", "3", "4"]  # the kept issues are items all the same
    assert other.items.count() == 3


def test_an_issue_only_the_importing_project_holds_takes_newer_text(
    admin_api, project, eager_tasks, django_capture_on_commit_callbacks
):
    mine = held_issue(1, project)
    later = (timezone.now() + timedelta(days=1)).isoformat()
    file = jsonl(issue(1, title="Newer", updated_at=later))
    response = post_file(admin_api, project, "a.jsonl", file, django_capture_on_commit_callbacks)

    job = ItemImport.objects.get(pk=response.json()["id"])
    assert (job.status, job.problems) == (JobStatus.DONE, [])
    mine.refresh_from_db()
    assert mine.title == "Newer"
    assert mine.comments.count() == 2


def test_a_comment_id_held_on_another_issue_fails_the_file_and_moves_nothing(
    admin_api, project, eager_tasks, django_capture_on_commit_callbacks
):
    elsewhere = held_issue(9, project)
    Comment.objects.create(host="github", comment_id=555, issue=elsewhere, body="original")
    later = (timezone.now() + timedelta(days=1)).isoformat()
    taken = {"id": 555, "body": "taken over", "updated_at": later}
    file = jsonl(issue(2), issue(1, comments=[taken]))
    response = post_file(admin_api, project, "c.jsonl", file, django_capture_on_commit_callbacks)

    job = ItemImport.objects.get(pk=response.json()["id"])
    assert job.status == JobStatus.FAILED
    assert [(p["path"], p["line"], p["column"]) for p in job.problems] == [
        ("c.jsonl", 2, "comments[0].id")
    ]
    assert "another issue" in job.problems[0]["message"]
    note = Comment.objects.get(comment_id=555)
    assert (note.issue_id, note.body) == (elsewhere.pk, "original")
    assert Issue.objects.count() == 1  # issues 1 and 2 were not even created
    assert project.items.count() == 1  # only the one it held


# -- Issue 25: the file is read as a stream and written a chunk at a time, all in one transaction.


@pytest.fixture
def small_pieces(monkeypatch):
    """Blocks and chunks so small that a few records span many of each."""
    from ingest import issue_files

    monkeypatch.setattr(issue_files, "BLOCK", 50)
    monkeypatch.setattr(issue_files, "CHUNK", 2)


def test_a_file_whose_last_record_is_bad_imports_nothing_and_names_where(
    admin_api, project, eager_tasks, small_pieces, django_capture_on_commit_callbacks
):
    records = [issue(n) for n in range(1, 8)] + [issue(8, comments=[{"body": 5}])]
    text = "[\n" + ",\n".join(json.dumps(r, ensure_ascii=False) for r in records) + "\n]\n"
    response = post_file(
        admin_api, project, "late.json", text.encode(), django_capture_on_commit_callbacks
    )
    job = ItemImport.objects.get(pk=response.json()["id"])
    assert job.status == JobStatus.FAILED
    assert [(p["path"], p["line"], p["column"]) for p in job.problems] == [
        ("late.json", 9, "comments[0].body")
    ]
    assert (Issue.objects.count(), Comment.objects.count(), project.items.count()) == (0, 0, 0)
    assert job.file == ""
    assert list(item_import_dir().iterdir()) == []


def test_a_failure_after_some_chunks_are_written_takes_them_all_back(
    project, small_pieces, monkeypatch
):
    from annotation.projects import item_imports

    written = []

    def add_then_fail(**kwargs):
        written.append(kwargs["issue_ids"])
        if len(written) == 3:
            raise RuntimeError("the database went away")
        return real_add(**kwargs)

    real_add = item_imports.project_items_add
    monkeypatch.setattr(item_imports, "project_items_add", add_then_fail)
    job = item_import_run(job_id=queued(project, jsonl(*[issue(n) for n in range(1, 8)])).pk)

    assert len(written) == 3  # two chunks were in when the third failed
    assert job.status == JobStatus.FAILED
    assert job.error == "The import stopped on an unexpected error; nothing was added."
    assert (Issue.objects.count(), Comment.objects.count(), project.items.count()) == (0, 0, 0)
    assert job.file == ""  # a failed job is over: its file is not left behind
    assert list(item_import_dir().iterdir()) == []


def stored_state(project) -> tuple:
    issues = list(
        Issue.objects.order_by("number").values_list("number", "title", "body", "comment_count")
    )
    comments = list(Comment.objects.order_by("comment_id").values_list("comment_id", "body"))
    items = list(project.items.order_by("pk").values_list("issue__number", "stage"))
    return issues, comments, items


def test_a_file_in_small_pieces_is_stored_as_the_file_in_one_piece(project, monkeypatch, settings):
    from annotation.models import Item
    from ingest import issue_files

    records = [issue(n, body=f"第 {n} 行\u2028" * n) for n in range(1, 12)]
    data = b"\xef\xbb\xbf" + json.dumps(records, ensure_ascii=False, indent=2).encode()
    states = []
    for block, chunk in ((1 << 30, 1 << 30), (7, 3)):
        monkeypatch.setattr(issue_files, "BLOCK", block)
        monkeypatch.setattr(issue_files, "CHUNK", chunk)
        job = item_import_run(job_id=queued(project, data, "a.json").pk)
        assert (job.status, job.records_total, job.items_added) == (JobStatus.DONE, 11, 11)
        states.append(stored_state(project))
        Item.objects.all().delete()
        Comment.objects.all().delete()
        Issue.objects.all().delete()
    assert states[0] == states[1]
    assert [number for number, _ in states[0][2]] == [str(n) for n in range(1, 12)]


# -- In the reader's language: a job's errors are stored as text, written by a worker that reads
# nobody's request, so the job keeps the language it was queued in and the worker writes in it.

BAD_DATE = jsonl(issue(1), issue(2, created_at="yesterday"))
# Chinese punctuation is what the catalog writes (RUF001 takes it for a confusable ASCII one).
NOT_A_DATE_ZH = "'yesterday' 不是日期时间，应形如 2024-05-01T10:00:00Z"  # noqa: RUF001
WHERE_ZH = "issues.jsonl，第 2 行，created_at 列："  # noqa: RUF001


def test_a_bad_file_sent_from_the_chinese_interface_is_reported_in_chinese(
    admin_api, project, eager_tasks, django_capture_on_commit_callbacks
):
    admin_api.cookies["django_language"] = "zh-hans"
    response = post_file(
        admin_api, project, "issues.jsonl", BAD_DATE, django_capture_on_commit_callbacks
    )
    job = admin_api.get(
        f"/api/projects/{project.slug}/item-imports/{response.json()['id']}/"
    ).json()
    assert job["status"] == "failed"
    assert job["problems"] == [
        {"path": "issues.jsonl", "line": 2, "column": "created_at", "message": NOT_A_DATE_ZH}
    ]
    told = f"1 个问题；没有导入任何内容：{WHERE_ZH}{NOT_A_DATE_ZH}"  # noqa: RUF001
    assert job["error"] == told
    assert job["progress"]["step"] == f"失败：{told}"  # noqa: RUF001


@pytest.mark.parametrize(
    ("queued_in", "worker_in", "told"),
    [
        ("zh-hans", "en", f"{WHERE_ZH}{NOT_A_DATE_ZH}"),
        (
            "en",
            "zh-hans",
            "issues.jsonl, line 2, column created_at: 'yesterday' is not a date and time such as"
            " 2024-05-01T10:00:00Z",
        ),
    ],
    ids=["queued-in-chinese", "queued-in-english"],
)
def test_the_worker_reports_in_the_language_the_job_was_queued_in(
    project, personas, queued_in, worker_in, told
):
    from annotation.projects.tasks import item_import_run as task

    with translation.override(queued_in):
        queued = item_import_start(
            project=project,
            user=personas["admin"],
            name="issues.jsonl",
            blocks=[BAD_DATE],
            enqueue=False,
        )
    with translation.override(worker_in):
        task(queued.job.pk)  # what the worker does with the message
        assert translation.get_language() == worker_in  # and its own language is back
    job = ItemImport.objects.get(pk=queued.job.pk)
    assert (job.language, job.status) == (queued_in, JobStatus.FAILED)
    assert job.error.endswith(told)
