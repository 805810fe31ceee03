"""The replication package, in and out (issue 28): the study's four shipped repositories and a
package written by hand with every oddity come back byte for byte; a bad package changes
nothing and names each problem's file and line; the yearly lists set the study's years; the page
and the API run both directions as background jobs."""

from __future__ import annotations

import dataclasses
import hashlib
import io
import zipfile
from pathlib import Path

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.core.management import CommandError, call_command
from django.utils import translation
from rest_framework.test import APIClient

from annotation.gate import OPERATOR
from annotation.interviews.services import interviews_import
from annotation.models import (
    ExportFormat,
    ExportJob,
    Item,
    JobStatus,
    PackageFile,
    PackageImport,
    Project,
)
from annotation.package.jobs import package_import_run
from annotation.reporting.export_jobs import export_job_run
from annotation.reporting.exports import export_options, repository_rows
from annotation.review.services import item_reopen, item_resolve
from ingest.models import Issue, KeywordSet
from taxonomy.interviews.files import codebook_parse
from tests.annotation.test_interviews import study_files
from tests.conftest import STUDY

MEGATRON = "https://github.com/NVIDIA/Megatron-LM/issues/"
MINDSPEED = "https://gitee.com/ascend/MindSpeed/issues/"

# A package written by hand with what real files do: a byte-order mark, \r\n, \r and \n line
# endings, quoted cells, a repository spelled in another case, a blank line, a repeated row with
# its own labels, a blank Final_Label the labels settle, a last line without its line ending, an
# empty yearly list, a URL listed twice in one list and again in another, and a carried CSV with
# quoted commas and CJK text.
ODD = {
    "Issue Report/Megatron-LM.csv": (
        "\ufeffIssue_URL,Label1,Label2,Label3,Final_Label\r\n"
        f'"{MEGATRON}1",C.1,C.1,C.2,C.1\r\n'
        f"{MEGATRON.lower()}2,A.3,A.3,A.3,\r\n"
        "\r\n"
        f"{MEGATRON}1,C.2,C.2,C.2,C.2\r\n"
        f'"{MEGATRON}3","C.9",C.9,C.9,C.9'
    ),
    "Issue Report/MindSpeed.csv": (
        "Issue_URL,Label1,Label2,Label3,Final_Label\n"
        f"{MINDSPEED}IBDZ87,B.2,B.2,B.1,B.2\n"
        f"{MINDSPEED}IBDZ88,C.5,C.5,C.5,C.5\n"
    ),
    "Issue Report/Megatron-LM_2023.txt": f"{MEGATRON}1\r{MEGATRON}1\r\r{MEGATRON.lower()}2",
    "Issue Report/Megatron-LM_2024.txt": "",
    "Issue Report/Megatron-LM_2025.txt": f"\ufeff{MEGATRON}3\r\n{MEGATRON}2\r\n",
    "Issue Report/MindSpeed_2024.txt": f"{MINDSPEED}IBDZ87\n{MINDSPEED}IBDZ88\n",
    "bug_symptoms.csv": (
        "rootcause,subcategory,symptoms\r\n"
        '"Model, training","Loss is NaN","NaN loss, 梯度爆炸、溢出"\r\n'
    ),
    "filter_keywords": "pytorch_keywords = [\n  'llm', 'LLM', \"gpt\",\n]\n",
}


def write_package(folder: Path, files: dict[str, str | bytes]) -> Path:
    for name, text in files.items():
        path = folder / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(text if isinstance(text, bytes) else text.encode("utf-8"))
    return folder


def zipped(files: dict[str, str]) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        for name, text in files.items():
            archive.writestr(name, text.encode("utf-8"))
    return buffer.getvalue()


def run(command: str, *args: str) -> str:
    out = io.StringIO()
    call_command(command, *args, stdout=out, stderr=out)
    return out.getvalue()


def files_under(folder: Path) -> dict[str, bytes]:
    return {
        p.relative_to(folder).as_posix(): p.read_bytes()
        for p in sorted(folder.rglob("*"))
        if p.is_file()
    }


@pytest.mark.django_db(transaction=False)
def test_the_shipped_repositories_round_trip_byte_for_byte(study_taxonomy, tmp_path):
    said = run("import_package", str(STUDY), "--project", "llm")
    assert "issue-lists/MindSpeed_2023.txt: year_list, rows 0" in said
    assert "k set to 7" in said
    project = Project.objects.get(slug="llm")
    assert project.items.count() == 1114 + 1826 + 1780 + 80
    run("export_package", "--project", "llm", "-o", str(tmp_path / "out"))
    run("export_package", "--project", "llm", "-o", str(tmp_path / "out.zip"))

    out = files_under(tmp_path / "out")
    for path in [*STUDY.glob("labels/*.csv"), *STUDY.glob("issue-lists/*.txt")]:
        name = path.relative_to(STUDY).as_posix()
        assert out[name] == path.read_bytes(), name
    assert out["issue-lists/MindSpeed_2023.txt"] == b""
    for carried in ["filter_keywords", "taxonomy.csv", "study-details/bug_symptoms.csv"]:
        assert out[carried] == (STUDY / carried).read_bytes()
    assert "Interviews: 19 participants, 19 quotes, 36 links" in said
    for path in sorted((STUDY / "interviews").iterdir()):  # kept as they came, and read
        assert out[f"interviews/{path.name}"] == path.read_bytes(), path.name
    assert project.participants.count() == 19
    with zipfile.ZipFile(tmp_path / "out.zip") as archive:
        assert {name: archive.read(name) for name in archive.namelist()} == out
    for line in out["SHA256SUMS"].decode().splitlines():
        digest, name = line.split("  ", 1)
        assert hashlib.sha256(out[name]).hexdigest() == digest
    readme = out["README.md"].decode()
    assert "| C Bug | 2802 | 0.588 | 0.585 to 0.591 | moderate |" in readme
    assert "| NVIDIA/Megatron-LM | github | 373 | 572 | 169 | 1114 | 120 | 355 | 639 |" in readme


def test_a_package_with_every_oddity_round_trips(study_taxonomy, tmp_path):
    write_package(tmp_path / "in", ODD)
    said = run("import_package", str(tmp_path / "in"), "--project", "odd")
    assert "Issue Report/Megatron-LM.csv: line 5 repeats 2 (kept)" in said
    said_2023 = (
        "Issue Report/Megatron-LM_2023.txt: line 2 repeats Issue Report/Megatron-LM_2023.txt:1"
    )
    assert said_2023 in said
    # listed again in a later list: where it was first listed, in the other file
    said_2025 = (
        "Issue Report/Megatron-LM_2025.txt: line 2 repeats Issue Report/Megatron-LM_2023.txt:4"
    )
    assert said_2025 in said
    run("export_package", "--project", "odd", "-o", str(tmp_path / "out"))
    out = files_under(tmp_path / "out")
    for name, text in ODD.items():
        assert out[name] == text.encode("utf-8"), name
    assert KeywordSet.objects.get(name="pytorch").keywords == ["llm", "gpt"]


def test_a_projects_interviews_go_out_in_the_package_and_come_back_in(study_taxonomy, tmp_path):
    write_package(tmp_path / "in", ODD)
    run("import_package", str(tmp_path / "in"), "--project", "odd")
    project = Project.objects.get(slug="odd")
    interviews_import(project=project, actor=OPERATOR, **study_files())  # on the Interviews page
    run("export_package", "--project", "odd", "-o", str(tmp_path / "out.zip"))
    with zipfile.ZipFile(tmp_path / "out.zip") as archive:
        codebook = archive.read("interviews/CodeBook.csv")
        guideline = archive.read("interviews/Interview GuideLine.md")
        assert "interviews/Interviewee Background.xlsx" not in archive.namelist()
    study = STUDY / "interviews"
    assert _quotes(codebook, "CodeBook.csv") == _quotes(
        (study / "CodeBook.csv").read_bytes(), "CodeBook.csv"
    )
    assert guideline == (study / "Interview GuideLine.md").read_bytes()

    said = run("import_package", str(tmp_path / "out.zip"), "--project", "again")
    assert "Interviews: 19 participants, 19 quotes, 36 links" in said
    again = Project.objects.get(slug="again")
    assert again.participants.count() == project.participants.count() == 19
    run("export_package", "--project", "again", "-o", str(tmp_path / "again.zip"))
    with zipfile.ZipFile(tmp_path / "again.zip") as archive:
        assert archive.read("interviews/CodeBook.csv") == codebook  # as it came, byte for byte


def _quotes(data: bytes, name: str) -> list[tuple]:
    """A codebook's rows as the import reads them, without the line each came from."""
    parsed = codebook_parse(data, name)
    assert parsed.errors == []
    return [dataclasses.replace(row, line=0) for row in parsed.rows]


def test_a_changed_final_label_is_written_in_the_files_own_dialect(
    study_taxonomy, tmp_path, django_user_model
):
    write_package(tmp_path / "in", ODD)
    run("import_package", str(tmp_path / "in"), "--project", "odd")
    project = Project.objects.get(slug="odd")
    lead = django_user_model.objects.create(username="lead-odd")
    project.memberships.create(user=lead, role="lead")
    item = Item.objects.get(project=project, issue__number="3")
    item = item_reopen(item=item, lead=lead, reason="a second look")
    item_resolve(
        item=item, lead=lead, node=project.taxonomy.nodes.get(code="C.1"), reason="it is C.1"
    )
    run("export_package", "--project", "odd", "-o", str(tmp_path / "out"))
    written = (tmp_path / "out" / "Issue Report/Megatron-LM.csv").read_bytes().decode("utf-8")
    before, _, _ = ODD["Issue Report/Megatron-LM.csv"].rpartition("\r\n")
    assert written == f"{before}\r\n{MEGATRON}3,C.9,C.9,C.9,C.1"  # only the changed row


def test_the_yearly_lists_set_the_study_year(study_taxonomy, tmp_path):
    write_package(tmp_path / "in", ODD)
    run("import_package", str(tmp_path / "in"), "--project", "odd")
    project = Project.objects.get(slug="odd")
    assert not Issue.objects.filter(created_at__isnull=False).exists()  # the tracker's is unknown
    rows = list(repository_rows(project, export_options(project, format="repositories")))
    header, megatron = rows[0], next(r for r in rows if r[0] == "NVIDIA/Megatron-LM")
    assert dict(zip(header, megatron, strict=True))["2023"] == "2"
    assert dict(zip(header, megatron, strict=True))["2025"] == "1"


def test_a_bad_package_changes_nothing_and_names_every_problem(study_taxonomy, tmp_path):
    files = {
        **ODD,
        "Issue Report/Bad.csv": (
            f"Issue_URL,Label1,Label2,Label3,Final_Label\n{MEGATRON}7,C.1,C.1,C.1,C.1\n"
            f"{MEGATRON}8,C.99,C.1,C.1,C.1\n"
        ),
        "Issue Report/Bad_2024.txt": f"{MEGATRON}7\nhttps://example.org/nothing\n",
    }
    write_package(tmp_path / "in", files)
    issues_before = Issue.objects.count()
    err = io.StringIO()
    with pytest.raises(CommandError, match="nothing was imported"):
        call_command("import_package", str(tmp_path / "in"), "--project", "bad", stderr=err)
    assert "Issue Report/Bad.csv, line 3, column Label1: unknown taxonomy code 'C.99'" in (
        err.getvalue()
    )
    assert not Project.objects.filter(slug="bad").exists()  # the project made for it is gone
    assert Issue.objects.count() == issues_before
    assert not PackageFile.objects.exists()


def test_the_year_list_problems_are_named_by_file_and_line(study_taxonomy, tmp_path):
    files = {**ODD, "Issue Report/Megatron-LM_2024.txt": f"{MEGATRON}1\n{MEGATRON}99\n"}
    write_package(tmp_path / "in", files)
    err = io.StringIO()
    with pytest.raises(CommandError):
        call_command("import_package", str(tmp_path / "in"), "--project", "bad", stderr=err)
    assert "Issue Report/Megatron-LM_2024.txt, line 2: " in err.getvalue()
    assert "is in no label file of the package" in err.getvalue()


def test_a_checksum_that_does_not_match_refuses_the_package(study_taxonomy, tmp_path):
    digest = hashlib.sha256(b"something else").hexdigest()
    files = {**ODD, "SHA256SUMS": f"{digest}  Issue Report/MindSpeed.csv\n"}
    write_package(tmp_path / "in", files)
    err = io.StringIO()
    with pytest.raises(CommandError):
        call_command("import_package", str(tmp_path / "in"), "--project", "bad", stderr=err)
    assert "SHA256SUMS, line 1: Issue Report/MindSpeed.csv does not match its checksum" in (
        err.getvalue()
    )


def test_a_zip_reaching_outside_is_refused(study_taxonomy, tmp_path):
    (tmp_path / "evil.zip").write_bytes(zipped({**ODD, "../evil.csv": "x"}))
    with pytest.raises(CommandError, match="points outside the package"):
        run("import_package", str(tmp_path / "evil.zip"), "--project", "bad")


def test_a_file_damaged_inside_the_zip_is_named_and_nothing_is_written(study_taxonomy, tmp_path):
    """Files are read from the zip as the import reaches them: one whose bytes no longer match
    the zip's CRC fails the import there, by name, and the files written before it go too."""
    package = zipped(ODD)
    assert package.count(b"IBDZ88,C.5") == 1  # stored, not deflated: the bytes can be changed
    (tmp_path / "damaged.zip").write_bytes(package.replace(b"IBDZ88,C.5", b"IBDZ88,C.6"))
    damaged = r"Issue Report/MindSpeed\.csv in the package is damaged"
    with pytest.raises(CommandError, match=damaged):
        run("import_package", str(tmp_path / "damaged.zip"), "--project", "bad")
    assert not Project.objects.filter(slug="bad").exists()
    assert not PackageFile.objects.exists()
    assert not Issue.objects.filter(url__startswith=MEGATRON).exists()  # read before MindSpeed


def test_a_project_holding_items_takes_no_package(labeled_project, tmp_path):
    write_package(tmp_path / "in", ODD)
    with pytest.raises(CommandError, match="a package goes into a new or empty project"):
        run("import_package", str(tmp_path / "in"), "--project", labeled_project.slug)


def test_the_api_imports_and_exports_a_package(project, personas, settings, tmp_path):
    settings.VAR_DIR = tmp_path
    api = APIClient()
    api.force_authenticate(personas["volunteer_a"])
    upload = SimpleUploadedFile("odd.zip", zipped(ODD), content_type="application/zip")
    base = f"/api/projects/{project.slug}"
    assert api.post(f"{base}/package-imports/", {"file": upload}).status_code == 403

    api.force_authenticate(personas["admin"])
    upload = SimpleUploadedFile("odd.zip", zipped(ODD), content_type="application/zip")
    queued = api.post(f"{base}/package-imports/", {"file": upload})
    assert queued.status_code == 202, queued.json()
    package_import_run(job_id=queued.json()["id"])  # what the worker does with the task
    job = api.get(f"{base}/package-imports/{queued.json()['id']}/").json()
    assert job["status"] == JobStatus.DONE, job
    assert [f["path"] for f in job["report"]["files"]][:2] == [
        "Issue Report/Megatron-LM.csv",
        "Issue Report/MindSpeed.csv",
    ]
    assert job["report"]["files"][0]["repeats"] == [
        {"line": 5, "first_line": 2, "labels_differ": True}
    ]

    assert api.get(f"{base}/exports/package/").status_code == 404  # a zip: a job, not a stream
    started = api.post(f"{base}/export-jobs/", {"format": ExportFormat.PACKAGE}, format="json")
    assert started.status_code in (201, 202), started.json()
    export_job_run(job_id=started.json()["id"])
    done = ExportJob.objects.get(pk=started.json()["id"])
    assert done.status == JobStatus.DONE
    assert done.file.endswith(".zip")
    response = api.get(f"{base}/export-jobs/{done.pk}/file/")
    assert response["Content-Type"] == "application/zip"
    with zipfile.ZipFile(io.BytesIO(b"".join(response.streaming_content))) as archive:
        for name, text in ODD.items():
            assert archive.read(name) == text.encode("utf-8"), name


def test_a_refused_package_is_reported_by_file_and_line_on_its_page(
    client, project, personas, settings, tmp_path
):
    settings.VAR_DIR = tmp_path
    client.force_login(personas["admin"])
    bad = {**ODD, "Issue Report/MindSpeed.csv": "Issue_URL,Label1,Final_Label\nnot a url,C.1,C.1\n"}
    upload = SimpleUploadedFile("bad.zip", zipped(bad), content_type="application/zip")
    response = client.post(f"/projects/{project.slug}/package/", {"package": upload})
    assert response.status_code == 302
    job = PackageImport.objects.get()
    package_import_run(job_id=job.pk)
    page = client.get(response["Location"]).content.decode()
    assert "Refused, nothing imported" in page
    assert '<td>Issue Report/MindSpeed.csv</td><td class="num">2</td><td>Issue_URL</td>' in page
    assert not project.items.exists()
    assert not (tmp_path / "package-imports" / job.file).exists()  # cleaned up


def test_a_list_of_issues_without_labels_leaves_k_to_the_label_files(project, tmp_path):
    project.overlap_k = 5
    project.save()
    files = {**ODD, "Issue Report/Later.csv": f"Issue_URL\n{MEGATRON}50\n"}
    write_package(tmp_path / "in", files)
    said = run("import_package", str(tmp_path / "in"), "--project", project.slug)
    assert "k set to 3, the label files' Label columns." in said
    project.refresh_from_db()
    assert project.overlap_k == 3
    assert project.items.filter(issue__number="50", label_count=0).exists()


# -- In the reader's language (#26): a refused package's problems are stored by a worker that
# reads nobody's request, so the job keeps the language it was queued in and is written in it.

# Chinese punctuation is what the catalog writes (RUF001 takes it for a confusable ASCII one).
PROBLEMS_IN = {
    "en": [
        f"{MINDSPEED}IBDZ99 is in no label file of the package",
        "pytorch_keywords may hold only quoted words and phrases",
        "'Robot' is neither 'User' nor 'Developer'",
    ],
    "zh-hans": [
        f"{MINDSPEED}IBDZ99 不在包内任何标注文件中",
        "pytorch_keywords 只能包含带引号的词和短语",
        "'Robot' 既不是 'User' 也不是 'Developer'",
    ],
}
REFUSED_IN = {"en": "3 problem(s); nothing was imported:", "zh-hans": "3 个问题；未导入任何内容："}  # noqa: RUF001
WORKER_IN = {"en": "zh-hans", "zh-hans": "en"}  # the worker's own language is the other one


@pytest.mark.parametrize("language", ["en", "zh-hans"])
def test_a_refused_package_is_reported_in_the_language_it_was_sent_in(
    client, project, personas, settings, tmp_path, language
):
    settings.VAR_DIR = tmp_path
    bad = {
        **ODD,
        "Issue Report/MindSpeed_2024.txt": f"{MINDSPEED}IBDZ87\n{MINDSPEED}IBDZ99\n",
        "filter_keywords": "pytorch_keywords = [llm]\n",
        "interviews/CodeBook.csv": (
            "Participant,Type,Experience Level,Framework Context,Prompt Category,"
            "Thematic Quote,Linked Taxonomy Node(s),Research Insight\nU1,Robot,B,P,S,Q,A.1,I\n"
        ),
    }
    client.force_login(personas["admin"])
    client.cookies["django_language"] = language
    upload = SimpleUploadedFile("bad.zip", zipped(bad), content_type="application/zip")
    response = client.post(f"/projects/{project.slug}/package/", {"package": upload})
    job = PackageImport.objects.get()
    with translation.override(WORKER_IN[language]):
        package_import_run(job_id=job.pk)  # what the worker does with the task
    job.refresh_from_db()
    assert (job.language, job.status) == (language, JobStatus.FAILED)
    assert job.error == REFUSED_IN[language]
    errors = job.report["errors"]
    assert [(e["file"], e["line"], e["column"]) for e in errors] == [
        ("Issue Report/MindSpeed_2024.txt", 2, None),  # the year list (package.imports)
        ("filter_keywords", 1, None),  # ingest.keywords
        ("interviews/CodeBook.csv", 2, "Type"),  # taxonomy.interviews.files
    ]
    assert [e["message"] for e in errors] == PROBLEMS_IN[language]
    page = client.get(response["Location"]).content.decode()
    assert PROBLEMS_IN[language][2].replace("'", "&#x27;") in page
