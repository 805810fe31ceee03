"""Every page of the URL conf, as each kind of person, in the Chinese interface: no English left
but data. What a page shows that people wrote or the study named (issue titles and text,
category names and examples, user, project, repository and file names, codes) is data and is
taken out first, by value from the database; Markdown written by people (`.markdown`), code and
keys (`code`, `kbd`, `textarea`) and text marked as another language (`lang="en"`, such as the
English name beside a Chinese one) are data by the page's own markup. The words left must be
Chinese, numbers, or a short list of names nobody translates (Concord, GitHub, CSV, Cohen …).

The test client reads the HTML the server sends: the words a browser shows, and the tooltips,
labels and placeholders. What scripts write later comes from the same catalog (label.html's
`page_text`). Each page's width and numbers are checked in a real browser
(tests/browser/test_every_page.py)."""

from __future__ import annotations

import re
import zoneinfo
from html.parser import HTMLParser

import pytest

from tests.pages import pages_for
from tests.test_role_matrix import role_world

PEOPLE = ("anonymous", "outsider", "volunteer", "lead", "admin", "staff")
CHINESE = {"accept-language": "zh-CN,zh;q=0.9"}
# Names and abbreviations a Chinese interface keeps as they are: the product, the forges, file
# formats and protocols, statisticians' names, keys on the keyboard, and the languages' own
# names on the switch.
NAMES = {
    "Concord",
    "GitHub",
    "Gitee",
    "API",
    "CSV",
    "JSON",
    "JSONL",
    "URL",
    "URLs",
    "SVG",
    "PNG",
    "ZIP",
    "Excel",
    "Markdown",
    "README",
    "UTF",
    "BOM",
    "Cohen",
    "Fleiss",
    "Krippendorff",
    "Kappa",
    "kappa",
    "Alpha",
    "alpha",
    "Landis",
    "Koch",
    "Nee",
    "UTC",
    "ISO",
    "NFKC",
    "PR",
    "Python",
    "Redis",
    "LabelJ",
    "LabelK",
    "LabelN",
    "Enter",
    "Esc",
    "Tab",
    "Shift",
    "Token",
    "Django",
    "Celery",
    "English",
    "Cohen's",
    # qualitative-analysis tools and their exchange standard (REFI-QDA), file kinds by suffix
    "REFI-QDA",
    "NVivo",
    "ATLAS",
    "ti",
    "MAXQDA",
    "zip",
    "txt",
    "md",
    "docx",
    "qdc",
    "qdpx",
}
# Where a page shows data by its markup: people's Markdown, code, keys, form text being edited,
# and text declared to be in another language.
DATA_TAGS = {"script", "style", "code", "kbd", "textarea", "pre"}
DATA_CLASSES = {"markdown"}
VOID = {"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source", "wbr"}
SHOWN_ATTRIBUTES = ("title", "aria-label", "placeholder", "alt")
# Words of two letters or more: a single letter is notation (k labels, n=80, Table I).
WORD = re.compile(r"[A-Za-z][A-Za-z'\u2019]+(?:-[A-Za-z]+)*")
# Elements inside a line of text: their words are read with the line's (a title with its
# matched keywords marked is one title).
INLINE = {"a", "abbr", "b", "bdi", "em", "i", "label", "mark", "small", "span", "strong", "time"}
# Shown as written, not words: links and paths, file names, identifiers (column and setting
# names such as Issue_URL, Label7, GITHUB_TOKEN), ISO weeks, and a value cut short ("Dep...").
CODES = re.compile(
    r"(?:https?:/)?/[\w/.?=&#%*-]*"
    r"|[\w.*/-]+\.(?:csv|zip|jsonl?|txt|xlsx|svg|png)\b"
    r"|\b[\w.-]+/[\w.*-]+"  # owner/repo, Asia/Shanghai
    r"|<[\w ]+>"  # a placeholder: <repo>, <framework>
    r"|\b\w*[_\d]\w*\b"
    r"|\b\d{4}-W\d{2}\b"
)
CUT = re.compile(r"(\w[\w ,.'/-]*?)(?:\.\.\.|…)$")


class ShownText(HTMLParser):
    """The text a person reads on the page, outside the elements that hold data by markup."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.open: list[bool] = []  # for each open element: is it (inside) data?
        self.texts: list[str] = []
        self.line: list[str] = []  # the text read since the last block element

    def end_line(self) -> None:
        text = " ".join("".join(self.line).split())
        if text:
            self.texts.append(text)
        self.line = []

    def close(self) -> None:
        super().close()
        self.end_line()

    def handle_starttag(self, tag: str, attrs: list) -> None:
        if tag not in INLINE:
            self.end_line()
        attributes = dict(attrs)
        data = bool(self.open and self.open[-1]) or self.is_data(tag, attributes)
        if not data:
            self.texts += [attributes[a] for a in SHOWN_ATTRIBUTES if attributes.get(a)]
            if tag == "input" and attributes.get("type") in ("submit", "button"):
                self.texts.append(attributes.get("value") or "")
        if tag not in VOID:
            self.open.append(data)

    def handle_endtag(self, tag: str) -> None:
        if tag not in INLINE:
            self.end_line()
        if tag not in VOID and self.open:
            self.open.pop()

    def handle_data(self, data: str) -> None:
        if not (self.open and self.open[-1]):
            self.line.append(data)

    @staticmethod
    def is_data(tag: str, attributes: dict) -> bool:
        classes = set((attributes.get("class") or "").split())
        language = attributes.get("lang")
        return (
            tag in DATA_TAGS
            or bool(classes & DATA_CLASSES)
            or (language is not None and not language.startswith("zh"))
        )


def data_values() -> dict[str, list[str]]:
    """What the database holds that pages show as written, by its first Latin-letter word
    (values with none add no English), longest first so a name holding another goes whole."""
    from django.contrib.auth import get_user_model

    from annotation.models import Annotation, ItemImport, Post, Project, Proposal
    from ingest.models import Issue, KeywordSet, Source
    from taxonomy.interviews.models import CodedPassage, Transcript
    from taxonomy.models import Example, Node, Taxonomy

    values: set[str] = set()
    columns = [
        (get_user_model(), ("username",)),
        (Project, ("name", "slug")),
        (Taxonomy, ("name", "version")),
        (Node, ("code", "name", "study_name", "definition", "name_zh", "definition_zh")),
        (Example, ("text",)),
        (Issue, ("owner", "repo", "number", "title", "author", "url")),
        (Source, ("owner", "repo")),
        (KeywordSet, ("name",)),
        (ItemImport, ("name",)),
        (Annotation, ("summary",)),
        (Post, ("text",)),
        (Proposal, ("name", "definition", "reason")),
        (Transcript, ("name",)),
        (CodedPassage, ("note",)),
    ]
    columns.append((get_user_model(), ("first_name", "last_name")))
    for model, fields in columns:
        for row in model.objects.values_list(*fields):
            values.update(" ".join(str(v).split()) for v in row if v)
    for keywords in KeywordSet.objects.values_list("keywords", flat=True):
        values.update(keywords)
    for text in Transcript.objects.values_list("text", flat=True):  # an interview, as said
        values.update(" ".join(line.split()) for line in text.splitlines() if line.strip())
    for owner, repo in Issue.objects.values_list("owner", "repo").distinct():
        values.add(f"{owner}/{repo}")
    for name, version in Taxonomy.objects.values_list("name", "version"):
        values.add(f"{name} v{version}")
    for first, last in get_user_model().objects.values_list("first_name", "last_name"):
        values.add(f"{first} {last}".strip())
    values |= zoneinfo.available_timezones()  # the time zone list of a source's form
    by_word: dict[str, list[str]] = {}
    for value in sorted(values, key=len, reverse=True):
        first = WORD.search(value)
        if first:
            by_word.setdefault(first.group(), []).append(value)
    return by_word


def english_left(text: str, data: dict[str, list[str]]) -> list[str]:
    """The Latin-letter words of `text` once data values and kept names are taken out."""
    candidates = {value for word in WORD.findall(text) for value in data.get(word, ())}
    cut = CUT.search(text)
    for value in sorted(candidates, key=len, reverse=True):
        text = text.replace(value, " ")
        if cut and value.startswith(cut.group(1).split(" ", 1)[-1]):
            text = text.replace(cut.group(0).split(" ", 1)[-1], " ")  # a name cut short
    text = CODES.sub(" ", text)
    return [word for word in WORD.findall(text) if word not in NAMES]


def untranslated_on(html: str, data: dict[str, list[str]]) -> list[str]:
    parser = ShownText()
    parser.feed(html)
    parser.close()
    return [text for text in parser.texts if english_left(text, data)]


@pytest.fixture
def data_world(personas, labeled_project, settings, tmp_path):
    settings.VAR_DIR = tmp_path
    objects, people = role_world(personas, labeled_project)
    return objects, people, data_values()


@pytest.mark.parametrize("person", PEOPLE)
def test_every_page_reads_in_chinese(client, data_world, person):
    objects, people, data = data_world
    if people[person] is not None:
        client.force_login(people[person])
    urls = pages_for(person, objects, public=person == "anonymous")
    assert urls, f"no pages for {person}"
    problems = []
    for url in urls:
        response = client.get(url, headers=CHINESE)
        assert response.status_code == 200, f"{person} {url}: {response.status_code}"
        assert 'lang="zh-hans"' in response.text, f"{person} {url}: not in Chinese"
        problems += [f"{url}: {text!r}" for text in untranslated_on(response.text, data)]
    assert not problems, f"English shown to {person} in the Chinese interface:\n" + "\n".join(
        dict.fromkeys(problems)
    )


def test_the_welcome_after_signing_up_through_an_invitation_is_in_chinese(
    client, personas, project
):
    from annotation.projects.members import invitation_create

    token = invitation_create(project=project, inviter=personas["admin"])[1]
    form = {
        "username": "xiaoming",
        "email": "xiaoming@example.org",
        "password1": "Lantern-Quiet-9481",
        "password2": "Lantern-Quiet-9481",
    }
    page = client.post(f"/join/{token}/", form, headers=CHINESE, follow=True)
    assert f"欢迎加入 {project.name}" in page.text
