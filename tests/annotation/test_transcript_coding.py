"""Coding interview transcripts in the browser's pages (issue 27): two coders, each blind to the
other's codes until both are done; idempotent saves; their agreement per category and overall,
with the disagreements for the lead; the coded passages as CSV and as a REFI-QDA project;
transcripts from .txt, .md and .docx."""

from __future__ import annotations

import csv
import io
import re
import zipfile
from types import SimpleNamespace
from xml.etree import ElementTree as ET

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.utils import timezone

from annotation.interviews.coding import transcript_text
from concord.errors import ConcordError
from taxonomy.interviews.models import CodedPassage, Transcript, TranscriptCoder
from taxonomy.interviews.units import coding_agreement, transcript_units, units_covered

TEXT = (
    "Q: What went wrong?\n"
    "A: The loss went flat after the upgrade.\n"
    "\n"
    "Q: And then?\n"
    "A: =We rolled back, and the checkpoint would not load.\n"
)
VOLATILE = re.compile(r'name="csrfmiddlewaretoken" value="[^"]*"|nonce="[^"]*"')


def _offsets(words: str) -> dict:
    start = TEXT.index(words)
    return {"start": str(start), "end": str(start + len(words))}


@pytest.fixture
def transcript(client, personas, project):
    """A transcript the lead uploaded through the page."""
    client.force_login(personas["lead"])
    upload = SimpleUploadedFile("U1.txt", TEXT.replace("\n", "\r\n").encode())
    response = client.post(
        f"/projects/{project.slug}/interviews/transcripts/", {"transcript": upload}
    )
    assert response.status_code == 302
    return Transcript.objects.get(project=project)


def _url(transcript, action: str = "") -> str:
    return f"/projects/{transcript.project.slug}/interviews/transcripts/{transcript.pk}/{action}"


def _page(client, transcript) -> str:
    """The transcript page as the signed-in person sees it (the one-time messages of earlier
    posts read off first)."""
    client.get(_url(transcript))
    return VOLATILE.sub("", client.get(_url(transcript)).content.decode())


def _coded(page: str) -> str:
    """The transcript's lines and the codes table of a page (its category list left out)."""
    return page[page.index('id="transcript-lines"') :]


def test_two_coders_code_blind_then_see_their_agreement(client, personas, project, transcript):
    a, b, lead = personas["volunteer_a"], personas["volunteer_b"], personas["lead"]
    assert transcript.text == TEXT  # line ends as "\n": the offsets the browser counts in
    # the lead assigns one coder; the other volunteers
    client.post(_url(transcript, "coders/"), {"username": b.username})
    client.force_login(a)
    client.post(_url(transcript, "join/"))
    assert {c.coder for c in transcript.coders.all()} == {a, b}

    flat = _offsets("The loss went flat")
    response = client.post(_url(transcript, "code/"), {**flat, "node_code": "C.4"})
    assert response.status_code == 302
    client.post(_url(transcript, "code/"), {**flat, "node_code": "C.4"})  # a double click
    client.post(_url(transcript, "code/"), {**_offsets("checkpoint would not"), "node_code": "C.9"})
    assert CodedPassage.objects.filter(coder=a).count() == 2
    before = _page(client, transcript)

    client.force_login(b)
    # b marks other words of the same answer (they agree on the line), and a line a left alone
    client.post(_url(transcript, "code/"), {**_offsets("after the upgrade"), "node_code": "C.4"})
    client.post(
        _url(transcript, "code/"),
        {**_offsets("=We rolled back"), "node_code": "C.4", "note": "rollback"},
    )
    page = _page(client, transcript)
    assert "C.9" not in _coded(page)  # a's code on the line b coded is not shown to b
    assert "blind-notice" in page
    client.force_login(a)
    assert _page(client, transcript) == before  # nothing of b's work shows to a
    assert 'id="agreement"' not in before

    client.post(_url(transcript, "done/"))
    refused = client.post(_url(transcript, "code/"), {**flat, "node_code": "C.1"}, follow=True)
    assert "no longer changes" in refused.content.decode()
    assert not CodedPassage.objects.filter(coder=a, node__code="C.1").exists()
    assert _page(client, transcript).count("rollback") == 0  # b is not done yet

    client.force_login(b)
    client.post(_url(transcript, "done/"))
    # now everyone may see the codes: nobody joins to code with them in sight
    client.force_login(personas["admin"])
    assert "join-coding" not in client.get(_url(transcript)).content.decode()
    late = client.post(_url(transcript, "join/"), follow=True).content.decode()
    assert "it takes no new coders" in late
    client.force_login(a)
    page = client.get(_url(transcript)).content.decode()
    assert "rollback" in page  # b's note, now that both are done
    # 4 lines; C.4: a marks line 2, b lines 2 and 5 -> observed 3/4, kappa 0.5;
    # C.9: a line 5 only -> observed 3/4, kappa 0; overall: observed 6/8, kappa 1/3
    overall = re.search(r'id="agreement-overall-1">(.*?)</p>', page, re.S).group(1)
    assert "κ = 0.33" in overall
    assert "0.75 on 4 lines" in overall
    assert re.search(r"C\.4</span></td><td class=\"num\">0\.50<", page)
    disagreements = re.findall(r'<a href="#line-(\d+)">', page)
    assert disagreements == ["5", "5"]  # C.4 (b only) and C.9 (a only), both on line 5

    client.force_login(lead)
    export = client.get(f"/projects/{project.slug}/interviews/coded-passages.csv")
    rows = list(csv.DictReader(io.StringIO(export.content.decode())))
    assert len(rows) == 4
    rollback = next(r for r in rows if r["note"] == "rollback")
    assert rollback["passage"] == "'=We rolled back"  # the exports' formula guard
    assert (rollback["coder"], rollback["code"], rollback["lines"]) == (b.username, "C.4", "5")

    # the lead settles the disagreements: C.4 applies to line 5, C.9 does not
    page = client.get(_url(transcript)).content.decode()
    assert "2 disagreements to settle." in page
    client.post(_url(transcript, "settle/"), {"line": "5", "node_code": "C.4", "keep": "1"})
    client.post(_url(transcript, "settle/"), {"line": "5", "node_code": "C.9", "keep": "0"})
    page = client.get(_url(transcript)).content.decode()
    assert "2 final codes" in page
    assert "to settle" not in page
    final = client.get(f"/projects/{project.slug}/interviews/final-codes.csv").content.decode()
    rows = [(r["line"], r["code"], r["how"]) for r in csv.DictReader(io.StringIO(final))]
    assert rows == [("2", "C.4", "agreed"), ("5", "C.4", "kept")]


def test_a_lead_who_does_not_code_sees_every_code_at_once(client, personas, transcript):
    TranscriptCoder.objects.create(transcript=transcript, coder=personas["volunteer_a"])
    client.force_login(personas["volunteer_a"])
    client.post(_url(transcript, "code/"), {**_offsets("Q: And then?"), "node_code": "C.1"})
    client.force_login(personas["lead"])
    page = client.get(_url(transcript)).content.decode()
    assert "blind-notice" not in page
    assert personas["volunteer_a"].username in page
    assert "C.1" in page


def test_coding_is_refused_to_who_does_not_code_it_and_a_passage_must_have_words(
    client, personas, transcript
):
    client.force_login(personas["volunteer_a"])
    refused = client.post(
        _url(transcript, "code/"), {**_offsets("Q: And then?"), "node_code": "C.1"}, follow=True
    )
    assert "join its coders first" in refused.content.decode()
    client.post(_url(transcript, "join/"))
    blank = client.post(
        _url(transcript, "code/"), {"start": "60", "end": "61", "node_code": "C.1"}, follow=True
    )
    assert "Select a passage" in blank.content.decode()  # only the empty line's newline
    unknown = client.post(
        _url(transcript, "code/"), {**_offsets("Q: And then?"), "node_code": "Z.9"}, follow=True
    )
    assert "Z.9 is no category of this project." in unknown.content.decode()
    assert not CodedPassage.objects.exists()
    assert client.post(_url(transcript, "coders/"), {"username": "x"}).status_code == 403
    client.force_login(personas["lead"])
    early = client.post(
        _url(transcript, "settle/"), {"line": "1", "node_code": "C.1", "keep": "1"}, follow=True
    )
    assert "once every coder is done" in early.content.decode()


def test_a_transcript_comes_from_txt_md_or_docx_and_a_bad_file_is_named():
    document = io.BytesIO()
    with zipfile.ZipFile(document, "w") as archive:
        w = "http://schemas.openxmlformats.org/wordprocessingml/2006/main"
        archive.writestr(
            "word/document.xml",
            f'<w:document xmlns:w="{w}"><w:body><w:p><w:r><w:t>Q: Why?</w:t></w:r></w:p>'
            "<w:p><w:r><w:t>A: It </w:t></w:r><w:r><w:t>hangs.</w:t></w:r></w:p></w:body>"
            "</w:document>",
        )
    assert transcript_text("U1.docx", document.getvalue()) == "Q: Why?\nA: It hangs."
    assert transcript_text("U1.md", b"# U1\r\nA: yes\r\n") == "# U1\nA: yes\n"
    with pytest.raises(ConcordError, match=r"U1.pdf: a transcript is a \.txt, \.md or \.docx"):
        transcript_text("U1.pdf", b"%PDF")
    with pytest.raises(ConcordError, match=r"U1.docx: not a Word document"):
        transcript_text("U1.docx", b"not a zip")
    with pytest.raises(ConcordError, match=r"U1.txt, line 2"):
        transcript_text("U1.txt", b"fine\n\xff\n")


def test_units_are_the_non_blank_lines_and_kappa_is_cohens():
    units = transcript_units(TEXT)
    assert [u.number for u in units] == [1, 2, 4, 5]
    assert [TEXT[u.start : u.end] for u in units][2] == "Q: And then?"
    assert units_covered(units, TEXT.index("flat"), TEXT.index("And")) == [1, 2]
    result = coding_agreement(4, {"C.4": {0, 1}}, {"C.4": {0}})
    # observed 3/4; chance 1/2 * 1/4 + 1/2 * 3/4 = 1/2: kappa = (3/4 - 1/2) / (1 - 1/2)
    assert result.per_code[0].kappa == pytest.approx(0.5)
    assert [(d.unit, d.by_a) for d in result.disagreements] == [(1, True)]
    same = coding_agreement(2, {"C.4": {0, 1}}, {"C.4": {0, 1}})
    assert same.kappa is None  # every line coded by both: chance agreement is 1
    assert same.observed == 1.0


def test_the_coded_transcripts_go_out_as_a_refi_qda_project(client, personas, transcript):
    from tests.test_write_gate import with_interviews

    with_interviews(None)(SimpleNamespace(project=transcript.project), None)  # U1: C.4 and B.5
    a = personas["volunteer_a"]
    TranscriptCoder.objects.create(transcript=transcript, coder=a)
    client.force_login(a)
    words = "The loss went flat"
    client.post(_url(transcript, "code/"), {**_offsets(words), "node_code": "C.4", "note": "n"})
    client.force_login(personas["lead"])
    response = client.get(f"/projects/{transcript.project.slug}/interviews/transcripts.qdpx")
    assert response["Content-Disposition"].endswith('transcripts.qdpx"')
    with zipfile.ZipFile(io.BytesIO(response.content)) as archive:
        root = ET.fromstring(archive.read("project.qde"))  # noqa: S314 - our own output
        ns = {"q": "urn:QDA-XML:project:1.0"}
        source, quote = root.findall("q:Sources/q:TextSource", ns)
        path = source.get("plainTextPath").removeprefix("internal://")
        text = archive.read(f"sources/{path}").decode()
        quoted = quote.get("plainTextPath").removeprefix("internal://")
        assert archive.read(f"sources/{quoted}").decode() == "Loss went flat."
    assert text == TEXT
    (selection,) = source.findall("q:PlainTextSelection", ns)
    start, end = int(selection.get("startPosition")), int(selection.get("endPosition"))
    assert text[start:end] == words
    assert selection.find("q:Description", ns).text == "n"
    (user,) = root.findall("q:Users/q:User", ns)
    assert (user.get("name"), selection.get("creatingUser")) == (a.username, user.get("guid"))
    target = selection.find("q:Coding/q:CodeRef", ns).get("targetGUID")
    (code,) = [c for c in root.iterfind(".//q:CodeBook//q:Code", ns) if c.get("guid") == target]
    assert code.get("name").startswith("C.4 ")
    # the imported quote: coded with C.4 only (B.5 is not a category of the taxonomy)
    (coded,) = quote.findall("q:PlainTextSelection/q:Coding/q:CodeRef", ns)
    assert coded.get("targetGUID") == target


def test_a_lead_who_codes_is_blind_in_the_exports_too(client, personas, project, transcript):
    lead, a = personas["lead"], personas["volunteer_a"]
    for coder in (lead, a):
        TranscriptCoder.objects.create(transcript=transcript, coder=coder)
        client.force_login(coder)
        client.post(_url(transcript, "code/"), {**_offsets("Q: And then?"), "node_code": "C.1"})
    csv_url = f"/projects/{project.slug}/interviews/coded-passages.csv"
    qdpx_url = f"/projects/{project.slug}/interviews/transcripts.qdpx"

    def exported() -> tuple[set, int]:
        rows = csv.DictReader(io.StringIO(client.get(csv_url).content.decode()))
        with zipfile.ZipFile(io.BytesIO(client.get(qdpx_url).content)) as archive:
            qde = archive.read("project.qde").decode()
        return {r["coder"] for r in rows}, qde.count("<PlainTextSelection ")

    client.force_login(lead)
    assert "blind-notice" in client.get(_url(transcript)).content.decode()
    assert exported() == ({lead.username}, 1)
    for coder in (lead, a):
        client.force_login(coder)
        client.post(_url(transcript, "done/"))
    client.force_login(lead)
    assert exported() == ({lead.username, a.username}, 2)


def test_a_coded_transcripts_final_codes_count_in_the_triangulation(client, personas, project):
    from annotation.interviews.triangulation import project_triangulation
    from taxonomy.interviews.models import Participant

    d9 = Participant.objects.create(project=project, code="D9", kind="developer")
    transcript = Transcript.objects.create(project=project, participant=d9, name="D9", text=TEXT)

    def developers(code: str) -> int:
        return next(r.developers for r in project_triangulation(project).themes if r.code == code)

    coders = (personas["volunteer_a"], personas["volunteer_b"])
    for coder, code in zip(coders, ("C.4", "C.9"), strict=True):
        TranscriptCoder.objects.create(transcript=transcript, coder=coder)
        client.force_login(coder)
        client.post(_url(transcript, "code/"), {**_offsets("loss went flat"), "node_code": "C.4"})
        client.post(_url(transcript, "code/"), {**_offsets("checkpoint"), "node_code": code})
    assert developers("C.4") == 0  # not final before every coder is done
    for coder in coders:
        client.force_login(coder)
        client.post(_url(transcript, "done/"))
    assert (developers("C.4"), developers("C.9")) == (1, 0)  # C.9: one coder's, unsettled
    client.force_login(personas["lead"])
    client.post(_url(transcript, "settle/"), {"line": "5", "node_code": "C.9", "keep": "1"})
    assert developers("C.9") == 1


def test_the_api_codes_idempotently_and_answers_blind(personas, transcript):
    from rest_framework.test import APIClient

    api = APIClient()
    base = f"/api/projects/{transcript.project.slug}/interviews/transcripts/{transcript.pk}/"
    coders = (personas["volunteer_a"], personas["volunteer_b"])
    for coder in coders:
        TranscriptCoder.objects.create(transcript=transcript, coder=coder)
    api.force_authenticate(coders[0])
    start = TEXT.index("loss went flat")
    body = {"start": start, "end": start + 14, "node": "C.4", "note": "flat"}
    first = api.post(f"{base}passages/", body, format="json")
    assert first.status_code == 200
    assert first.json()["text"] == "loss went flat"
    assert api.post(f"{base}passages/", body, format="json").json()["id"] == first.json()["id"]
    unknown = api.post(f"{base}passages/", {**body, "node": "Z.9"}, format="json")
    assert unknown.status_code == 400

    api.force_authenticate(coders[1])
    seen = api.get(base).json()
    assert (seen["passages"], seen["agreement"], seen["sees_all"]) == ([], None, False)
    assert [line["number"] for line in seen["lines"]] == [1, 2, 4, 5]
    for coder in coders:
        TranscriptCoder.objects.filter(coder=coder).update(done_at=timezone.now())
    seen = api.get(base).json()
    assert [p["coder"] for p in seen["passages"]] == [coders[0].username]
    (pair,) = seen["agreement"]
    assert pair["agreement"]["per_code"][0]["code"] == "C.4"
    assert seen["final_codes"] == {"codes": [], "unsettled": 1}
