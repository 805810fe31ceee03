"""The study's interviews (issue 27): the codebook, background sheet and guideline imported by
the command, the browser (a background job with its report) and the API; codes the taxonomy
lacks kept unresolved, reported by file, line and value, and mapped by a lead; the quotes page
and API searched and filtered. Expectations are read from the study's own files."""

from __future__ import annotations

import csv
import io
from io import StringIO

import openpyxl
import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.core.management import CommandError, call_command
from django.utils import translation
from rest_framework.test import APIClient

from annotation.gate import OPERATOR
from annotation.interviews.jobs import interview_import_queue, interview_import_run
from annotation.interviews.services import InterviewFile, interviews_import, unresolved_code_map
from annotation.projects.importers import ImportFailed
from concord.job_rows import JobStatus
from taxonomy.interviews.files import node_codes
from taxonomy.interviews.models import Participant, Quote, QuoteLink
from tests.conftest import STUDY

INTERVIEWS = STUDY / "interviews"
CODEBOOK = INTERVIEWS / "CodeBook.csv"
BACKGROUND = INTERVIEWS / "Interviewee Background.xlsx"
GUIDELINE = INTERVIEWS / "Interview GuideLine.md"
HEADER = (
    "Participant,Type,Experience Level,Framework Context,Prompt Category,Thematic Quote,"
    "Linked Taxonomy Node(s),Research Insight\n"
)


def codebook_rows() -> list[tuple[int, dict]]:
    """The study codebook's rows with the line each starts on."""
    text = CODEBOOK.read_text(encoding="utf-8")
    reader = csv.DictReader(io.StringIO(text, newline=""))
    rows, start = [], 2
    for row in reader:
        rows.append((start, row))
        start = reader.line_num + 1
    return rows


def study_files() -> dict[str, InterviewFile]:
    return {
        "codebook": InterviewFile(CODEBOOK.name, CODEBOOK.read_bytes()),
        "background": InterviewFile(BACKGROUND.name, BACKGROUND.read_bytes()),
        "guideline": InterviewFile(GUIDELINE.name, GUIDELINE.read_bytes()),
    }


def study_import(project):
    files = study_files()
    return interviews_import(project=project, actor=OPERATOR, **files)


@pytest.fixture
def var_dir(settings, tmp_path):
    settings.VAR_DIR = tmp_path
    return tmp_path


def test_the_study_codebook_imports_every_participant_quote_and_link(project):
    rows = codebook_rows()
    codes_in_taxonomy = set(project.taxonomy.nodes.values_list("code", flat=True))
    unknown = [
        (line, code)
        for line, row in rows
        for code in node_codes(row["Linked Taxonomy Node(s)"])
        if code not in codes_in_taxonomy
    ]
    out = StringIO()
    call_command(
        "import_interviews",
        "--project",
        project.slug,
        str(CODEBOOK),
        "--background",
        str(BACKGROUND),
        "--guideline",
        str(GUIDELINE),
        stdout=out,
    )
    # the study's figures (datasets README): 19 participants, 11 users and 8 developers
    assert Participant.objects.filter(project=project).count() == 19
    assert Participant.objects.filter(project=project, kind="user").count() == 11
    assert Participant.objects.filter(project=project, kind="developer").count() == 8
    assert Quote.objects.filter(participant__project=project).count() == len(rows)
    links = QuoteLink.objects.filter(quote__participant__project=project)
    expected_links = sum(len(node_codes(r["Linked Taxonomy Node(s)"])) for _, r in rows)
    assert links.count() == expected_links
    assert sorted(links.filter(node=None).values_list("code", flat=True)) == sorted(
        code for _, code in unknown
    )
    assert {"B.5", "C.11"} == {code for _, code in unknown}
    said = out.getvalue()
    for line, code in unknown:
        assert f"CodeBook.csv, line {line}, column Linked Taxonomy Node(s): {code}" in said
    assert f"{len(unknown)} unresolved" in said
    assert project.interview_guide.text.startswith(GUIDELINE.read_text(encoding="utf-8")[:40])


def test_background_rows_follow_the_codebook_order_with_merged_cells_filled(project):
    study_import(project)
    sheet = openpyxl.load_workbook(BACKGROUND).worksheets[0]
    merged = next(r for r in sheet.merged_cells.ranges if r.max_row - r.min_row >= 2)
    shared = str(sheet.cell(merged.min_row, merged.min_col).value).strip()
    # the sheet lists users first (rows 2..12): row r is user U(r-1)
    covered = [f"U{r - 1}" for r in range(merged.min_row, merged.max_row + 1)]
    duties = set(
        Participant.objects.filter(project=project, code__in=covered).values_list(
            "duties", flat=True
        )
    )
    assert duties == {shared}
    first = Participant.objects.get(project=project, code="U1")
    role, gender, years = (sheet.cell(2, c).value for c in (1, 2, 3))
    assert first.role == role.partition("-")[2].strip()
    assert (first.gender, first.years) == (gender, years)
    developer = Participant.objects.get(project=project, code="D1")
    assert developer.role == sheet.cell(13, 1).value.partition("-")[2].strip()
    assert not Participant.objects.filter(project=project, duties="").exists()


def test_importing_again_changes_nothing_and_keeps_a_leads_mapping(project, personas):
    first = study_import(project)
    assert first.participants_created == 19
    unresolved_code_map(project=project, actor=personas["lead"], code="C.11", node_code="C.10")
    again = study_import(project)
    assert (again.participants_created, again.quotes_created) == (0, 0)
    assert Quote.objects.filter(participant__project=project).count() == first.quotes
    mapped = QuoteLink.objects.filter(quote__participant__project=project, code="C.11")
    assert {link.node.code for link in mapped} == {"C.10"}
    assert all(link.mapped_by == personas["lead"] for link in mapped)


def test_a_bad_codebook_names_file_line_and_column_and_writes_nothing(project):
    bad = (
        HEADER
        + 'U1,User,Beginner,PyTorch,Setup,"Fine quote",A.1,Insight\n'
        + 'U2,Visitor,Beginner,PyTorch,Setup,"Another",A.1,Insight\n'
        + "U3,User,Beginner,PyTorch,Setup,,A.1,Insight\n"
        + 'U1,Developer,Beginner,PyTorch,Setup,"Third",C.1,Insight\n'
    ).encode()
    with pytest.raises(ImportFailed) as failed:
        interviews_import(project=project, actor=OPERATOR, codebook=InterviewFile("book.csv", bad))
    said = [str(e) for e in failed.value.errors]
    assert "book.csv, line 3, column Type: 'Visitor' is neither 'User' nor 'Developer'" in said
    assert "book.csv, line 4, column Thematic Quote: empty; every row needs it" in said
    assert any(s.startswith("book.csv, line 5, column Type: 'Developer' for U1") for s in said)
    assert not Participant.objects.filter(project=project).exists()


def test_a_codebook_without_its_columns_or_not_utf8_is_refused(project):
    with pytest.raises(ImportFailed) as failed:
        interviews_import(
            project=project,
            actor=OPERATOR,
            codebook=InterviewFile("book.csv", b"Participant,Type\nU1,User\n"),
        )
    assert "missing column(s): Thematic Quote, Linked Taxonomy Node(s)" in str(failed.value)
    latin1 = (HEADER + "U1,User,B,PyTorch,S,caf\xe9,A.1,I\n").encode("latin-1")
    with pytest.raises(ImportFailed) as failed:
        interviews_import(project=project, actor=OPERATOR, codebook=InterviewFile("b.csv", latin1))
    assert "b.csv, line 2: not UTF-8 text" in str(failed.value)


def test_a_background_sheet_with_other_counts_is_refused_not_guessed(project):
    book = openpyxl.Workbook()
    sheet = book.active
    sheet.append(["Roles", "Gender", "Experience Years for LLMs", "Responsibilities"])
    sheet.append(["LLM User-Student", "Male", "2 years", "Fine-tuning"])
    sheet.append(["Astronaut-Pilot", "Male", "2 years", "Flying"])
    data = io.BytesIO()
    book.save(data)
    with pytest.raises(ImportFailed) as failed:
        interviews_import(
            project=project,
            actor=OPERATOR,
            codebook=InterviewFile(CODEBOOK.name, CODEBOOK.read_bytes()),
            background=InterviewFile("people.xlsx", data.getvalue()),
        )
    assert "people.xlsx, line 3, column A: 'Astronaut-Pilot' names neither" in str(failed.value)
    with pytest.raises(ImportFailed) as failed:
        interviews_import(
            project=project,
            actor=OPERATOR,
            codebook=InterviewFile(CODEBOOK.name, CODEBOOK.read_bytes()),
            background=InterviewFile("people.xlsx", b"not a workbook"),
        )
    assert "people.xlsx, line 1: not an .xlsx workbook" in str(failed.value)
    assert not Participant.objects.filter(project=project).exists()


def test_the_command_says_what_is_wrong(project, tmp_path):
    path = tmp_path / "book.csv"
    path.write_bytes((HEADER + "U1,Robot,B,P,S,Q,A.1,I\n").encode())
    with pytest.raises(CommandError, match=r"book\.csv, line 2, column Type"):
        call_command("import_interviews", "--project", project.slug, str(path))
    with pytest.raises(CommandError, match="no project with slug 'nope'"):
        call_command("import_interviews", "--project", "nope", str(path))


def test_upload_page_queues_a_job_whose_page_reports_counts_and_unresolved_codes(
    client, personas, project, var_dir
):
    client.force_login(personas["lead"])
    response = client.post(
        f"/projects/{project.slug}/interviews/import/",
        {
            "codebook": SimpleUploadedFile(CODEBOOK.name, CODEBOOK.read_bytes()),
            "background": SimpleUploadedFile(BACKGROUND.name, BACKGROUND.read_bytes()),
        },
    )
    assert response.status_code == 302
    job_id = int(response["Location"].rstrip("/").rsplit("/", 1)[1])
    job = interview_import_run(job_id=job_id)  # what the worker does with the task
    assert job is not None
    assert job.status == JobStatus.DONE
    page = client.get(response["Location"]).content.decode()
    assert "19 participants (11 users, 8 developers)" in page
    assert '<td class="code">C.11</td>' in page
    assert '<td class="code">B.5</td>' in page
    assert not list(var_dir.glob("interview-imports/*/*")), "the uploads are removed when done"


def test_a_refused_upload_lists_its_problems_on_the_job_page(client, personas, project, var_dir):
    client.force_login(personas["lead"])
    bad = (HEADER + "U1,Robot,B,P,S,Q,A.1,I\n").encode()
    response = client.post(
        f"/projects/{project.slug}/interviews/import/",
        {"codebook": SimpleUploadedFile("book.csv", bad)},
    )
    job = interview_import_run(job_id=int(response["Location"].rstrip("/").rsplit("/", 1)[1]))
    assert job is not None
    assert job.status == JobStatus.FAILED
    page = client.get(response["Location"]).content.decode()
    assert "Refused, nothing written" in page
    assert "&#x27;Robot&#x27; is neither" in page


def test_volunteers_may_not_import_or_read_interviews(client, personas, project, var_dir):
    client.force_login(personas["volunteer_a"])
    for url in ("", "import/", "quotes/"):
        assert client.get(f"/projects/{project.slug}/interviews/{url}").status_code == 403
    response = client.post(
        f"/projects/{project.slug}/interviews/import/",
        {"codebook": SimpleUploadedFile(CODEBOOK.name, CODEBOOK.read_bytes())},
    )
    assert response.status_code == 403


def test_the_api_imports_in_the_background_and_reports(personas, project, var_dir):
    api = APIClient()
    api.force_authenticate(personas["lead"])
    with CODEBOOK.open("rb") as codebook:
        response = api.post(
            f"/api/projects/{project.slug}/interviews/imports/",
            {"codebook": codebook},
            format="multipart",
        )
    assert response.status_code == 202, response.content
    job_id = response.json()["id"]
    interview_import_run(job_id=job_id)
    report = api.get(f"/api/projects/{project.slug}/interviews/imports/{job_id}/").json()
    assert report["status"] == "done"
    assert (report["report"]["users"], report["report"]["developers"]) == (11, 8)
    assert {u["value"] for u in report["report"]["unresolved"]} == {"B.5", "C.11"}


def test_the_job_is_queued_through_the_gate_and_runs_once(personas, project, var_dir):
    queued = interview_import_queue(
        project=project, user=personas["lead"], files=study_files(), enqueue=False
    )
    assert interview_import_run(job_id=queued.job.pk).status == JobStatus.DONE
    interview_import_run(job_id=queued.job.pk)  # a redelivery: the done job is left alone
    assert Participant.objects.filter(project=project).count() == 19


def test_a_lead_maps_an_unresolved_code_on_the_overview(client, personas, project):
    study_import(project)
    client.force_login(personas["lead"])
    page = client.get(f"/projects/{project.slug}/interviews/").content.decode()
    assert 'id="unresolved-codes"' in page
    assert "C.11" in page
    response = client.post(
        f"/projects/{project.slug}/interviews/map/", {"code": "C.11", "node": "C.99"}, follow=True
    )
    assert "C.99 is no category of this project." in response.content.decode()
    client.post(f"/projects/{project.slug}/interviews/map/", {"code": "C.11", "node": "C.3"})
    links = QuoteLink.objects.filter(quote__participant__project=project, code="C.11")
    assert {link.node.code for link in links} == {"C.3"}
    response = client.post(
        f"/projects/{project.slug}/interviews/map/", {"code": "C.4", "node": "C.3"}, follow=True
    )
    assert "C.4 is a category of this taxonomy already." in response.content.decode()


def test_the_api_maps_a_code(personas, project):
    study_import(project)
    api = APIClient()
    api.force_authenticate(personas["lead"])
    url = f"/api/projects/{project.slug}/interviews/code-map/"
    response = api.post(url, {"code": "B.5", "node": "B.2"}, format="json")
    assert response.json() == {"code": "B.5", "node": "B.2", "links": 1}


# ---------------------------------------------------------------- quotes


def _quotes(client, project, **params) -> str:
    return client.get(f"/projects/{project.slug}/interviews/quotes/", params).content.decode()


def test_quotes_filter_by_node_participant_type_and_framework(client, personas, project):
    study_import(project)
    rows = codebook_rows()
    client.force_login(personas["lead"])
    with_c4 = [r for _, r in rows if "C.4" in node_codes(r["Linked Taxonomy Node(s)"])]
    page = _quotes(client, project, node="C.4")
    assert f"{len(with_c4)} quote" in page
    developers_on_deepspeed = [
        r
        for _, r in rows
        if r["Type"] == "Developer" and "deepspeed" in r["Framework Context"].lower()
    ]
    page = _quotes(client, project, kind="developer", framework="DeepSpeed")
    assert f"{len(developers_on_deepspeed)} quote" in page
    for row in developers_on_deepspeed:
        assert f"<strong>{row['Participant']}</strong>" in page
    # a type's code finds the quotes linked to its themes
    bugs = [
        r
        for _, r in rows
        if any(c.startswith("C.") for c in node_codes(r["Linked Taxonomy Node(s)"]))
    ]
    assert f"{len(bugs)} quote" in _quotes(client, project, node="C")
    assert "No quote matches these filters." in _quotes(client, project, q="no such words here")


def test_quotes_page_empty_state_and_pages_keeping_the_filters(client, personas, project):
    client.force_login(personas["lead"])
    assert 'id="no-quotes"' in _quotes(client, project)
    lines = [f'U{n},User,B,PyTorch,S,"Quote number {n:02d}",C.4,I\n' for n in range(1, 26)]
    lines.append('D1,Developer,A,MindSpore,S,"Developer quote",C.4,I\n')
    book = (HEADER + "".join(lines)).encode()
    interviews_import(project=project, actor=OPERATOR, codebook=InterviewFile("b.csv", book))
    first = _quotes(client, project, kind="user")
    assert "25 quotes" in first
    assert "Page 1 of 2" in first
    assert 'href="?kind=user&amp;page=2"' in first
    second = _quotes(client, project, kind="user", page=2)
    assert second.count('class="card quote"') == 25 - 20
    assert "Developer quote" not in second
    assert 'href="?kind=user&amp;page=1" rel="prev"' in second


def test_quote_text_is_shown_escaped(client, personas, project):
    hostile = (HEADER + 'U1,User,B,P,S,"<script>alert(1)</script>",A.1,"<b>bold</b>"\n').encode()
    interviews_import(project=project, actor=OPERATOR, codebook=InterviewFile("x.csv", hostile))
    client.force_login(personas["lead"])
    page = _quotes(client, project)
    assert "<script>alert(1)</script>" not in page
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in page
    assert "<b>bold</b>" not in page


def test_the_quotes_api_filters_and_pages(personas, project):
    study_import(project)
    api = APIClient()
    api.force_authenticate(personas["lead"])
    body = api.get(f"/api/projects/{project.slug}/interviews/quotes/", {"kind": "user"}).json()
    results = body["results"] if isinstance(body, dict) else body
    assert {q["kind"] for q in results} == {"user"}
    assert any(link["node"] is None for q in results for link in q["links"])
    bad = api.get(f"/api/projects/{project.slug}/interviews/quotes/", {"kind": "robot"})
    assert bad.status_code == 400


# -- In the reader's language (#26): the job keeps the language its files were sent in, and the
# worker, whatever its own, writes the problems in it.

TOO_LONG = "P" * 31  # a participant code of 31 characters; the most is 30
# Chinese punctuation is what the catalog writes (RUF001 takes it for a confusable ASCII one).
BAD_ROWS_IN = {
    "en": (
        "2 problem(s) found; nothing was imported.",
        "&#x27;Robot&#x27; is neither &#x27;User&#x27; nor &#x27;Developer&#x27;",
        "31 characters; at most 30",
    ),
    "zh-hans": (
        "发现 2 个问题；未导入任何内容。",  # noqa: RUF001
        "&#x27;Robot&#x27; 既不是 &#x27;User&#x27; 也不是 &#x27;Developer&#x27;",
        "有 31 个字符；最多 30 个",  # noqa: RUF001
    ),
}


@pytest.mark.parametrize(("language", "worker_in"), [("en", "zh-hans"), ("zh-hans", "en")])
def test_a_refused_upload_is_reported_in_the_language_it_was_sent_in(
    client, personas, project, var_dir, language, worker_in
):
    client.force_login(personas["lead"])
    client.cookies["django_language"] = language
    bad = (HEADER + f"U1,Robot,B,P,S,Q,A.1,I\n{TOO_LONG},User,B,P,S,Q,A.1,I\n").encode()
    response = client.post(
        f"/projects/{project.slug}/interviews/import/",
        {"codebook": SimpleUploadedFile("book.csv", bad)},
    )
    job_id = int(response["Location"].rstrip("/").rsplit("/", 1)[1])
    with translation.override(worker_in):
        job = interview_import_run(job_id=job_id)  # what the worker does with the task
    assert job is not None
    assert (job.language, job.status) == (language, JobStatus.FAILED)
    refused, robot, too_long = BAD_ROWS_IN[language]
    assert job.error == refused
    assert [(e["line"], e["column"]) for e in job.report["errors"]] == [
        (2, "Type"),
        (3, "Participant"),
    ]
    page = client.get(response["Location"]).content.decode()
    assert robot in page
    assert too_long in page
