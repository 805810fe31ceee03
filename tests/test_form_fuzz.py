"""Fuzz every page's HTML forms and query parameters with hostile values (issue 12), beside the
API's schema fuzzing (tests/test_api_fuzz.py): NUL, a lone surrogate, digits that are not ASCII,
a 100 kB string, negative and huge numbers, as each role (volunteer, lead, project admin, a site
admin on the ingest pages, and an outsider: a lead of another project).

The pages come from the role matrix (tests/test_role_matrix.py RULES and its objects); each page's
forms are found by GETting it and reading its `<form>` elements, then each field is sent each
hostile value with the others at their defaults; each known query parameter is sent each value
too, as the least role that may use the page or form (LADDER). The outsider, kept out of the
project, is sent the project's pages and every form the others found. No answer may be a 5xx,
and a refused request (4xx) must have written nothing.

The requests are counted per role; each role's count must reach a floor that shows its pages were
fuzzed, and goes to the run's summary (tests/conftest.py `pytest_terminal_summary`).
"""

from __future__ import annotations

import time
from collections import Counter
from dataclasses import dataclass, field
from html.parser import HTMLParser
from urllib.parse import urlencode, urljoin, urlsplit

import pytest
from django.core.cache import cache
from django.core.files.uploadedfile import SimpleUploadedFile
from django.db import connection, transaction
from django.test import Client
from django.test.client import BOUNDARY, encode_multipart
from django.urls import reverse

from annotation.models import Item, Stage
from tests.conftest import summary_line
from tests.factories import IssueFactory
from tests.test_role_matrix import ALLOWED, RULES, role_world

pytestmark = pytest.mark.slow

HOSTILE = {
    "nul": "a\x00b",
    "surrogate": "a\ud800b",  # sent as its UTF-8-ish bytes ED A0 80, as an attacker would
    "superscript": "²",
    "arabic-indic": "٣",
    "100 kB": "x" * 100_000,
    "negative": "-1",
    "huge": "99999999999999999999999",  # past PostgreSQL's bigint
}
# Query parameters each page reads (from the views); `page` and `next` go to every page.
QUERY_PARAMS: dict[str, tuple[str, ...]] = {
    "login": ("username",),
    "project-items-from-source": ("source",),
    "disputed-queue": ("type", "theme", "repository"),
    "item-resolve": ("type", "theme", "repository"),
    "proposal-new": ("item",),
    "project-agreement": ("level", "by"),
    "project-agreement-chart": ("level", "by"),
    "project-reports": ("level",),
    "project-reports-confusion": ("level",),
    "project-reports-distribution": ("level",),
    "project-reports-volunteers": ("level",),
    "project-reports-items": ("a", "b"),
    "project-report-chart": ("level",),
}
EVERY_PAGE_PARAMS = ("page", "next")
# Fields of POST-only actions whose forms the fuzzing world may not show (an item must be in a
# given stage for its form to be drawn); the forms found on pages add to these.
POST_FIELDS: dict[str, tuple[str, ...]] = {
    "label-item": ("node", "summary", "version", "next"),
    "label-skip": ("reason",),
    "label-unskip": (),
    "screen-vote": ("verdict", "reason"),
    "screening-decide": ("decision", "reason"),
    "item-reopen": ("reason",),
    "proposal-vote": ("approve",),
    "proposal-add-node": (),
    "proposal-send-back": (),
    "ingest-source-harvest": (),
    "ingest-run-cancel": (),
    "set_language": ("language", "next"),  # the top bar's language switch, on every page
    "transcript-code": ("start", "end", "node_code", "note"),
    "transcript-uncode": ("passage",),
}
NOT_FUZZED = {"logout"}  # it would sign the fuzzing client out
# The outsider comes last: it is sent every form the others found (see pages_for).
ROLES = ("volunteer", "lead", "admin", "staff", "outsider")


@dataclass
class Form:
    action: str
    fields: dict[str, str] = field(default_factory=dict)  # name -> default value
    files: set[str] = field(default_factory=set)
    method: str = "post"


class FormReader(HTMLParser):
    """Every `<form>` of a page with its fields and their defaults (what a browser would send)."""

    def __init__(self, page_url: str) -> None:
        super().__init__(convert_charrefs=True)
        self.page_url = page_url
        self.forms: list[Form] = []
        self.form: Form | None = None
        self.textarea: str | None = None
        self.select: str | None = None
        self.radios: set[str] = set()

    def handle_starttag(self, tag, attrs):
        a = {k: v or "" for k, v in attrs}
        if tag == "form":
            action = urljoin(self.page_url, a.get("action") or self.page_url)
            self.form = Form(urlsplit(action).path, method=(a.get("method") or "get").lower())
            self.forms.append(self.form)
            self.radios = set()
            return
        if self.form is None or not a.get("name") or a["name"] == "csrfmiddlewaretoken":
            return
        name = a["name"]
        if tag == "input":
            kind = a.get("type", "text").lower()
            if kind == "file":
                self.form.files.add(name)
            elif kind in ("radio", "checkbox"):
                if "checked" in a or (kind == "radio" and name not in self.radios):
                    self.form.fields[name] = a.get("value", "on")
                self.radios.add(name)
            elif kind not in ("submit", "button", "reset", "image"):
                self.form.fields[name] = a.get("value", "")
        elif tag == "textarea":
            self.form.fields[name] = ""
            self.textarea = name
        elif tag == "select":
            self.select = name
            self.form.fields.setdefault(name, "")
        elif tag == "option" and self.select is not None:
            if "selected" in a or not self.form.fields.get(self.select):
                self.form.fields[self.select] = a.get("value", "")

    def handle_data(self, data):
        if self.form is not None and self.textarea is not None:
            self.form.fields[self.textarea] += data

    def handle_endtag(self, tag):
        if tag == "form":
            self.form = None
        elif tag == "textarea":
            self.textarea = None
        elif tag == "select":
            self.select = None


def as_bytes(value: str) -> bytes:
    return value.encode("utf-8", "surrogatepass")


# The test client encodes `data` itself when the content type is its own MULTIPART_CONTENT object;
# this equal string of our own has it send the body `multipart` made as it is.
MULTIPART = f"multipart/form-data; boundary={BOUNDARY}"


def multipart(fields: dict[str, str], files: dict[str, bytes]) -> bytes:
    """A multipart form body as a browser sends it, each field once with its value's bytes (a
    lone surrogate as its raw bytes, which Django's test client cannot encode; and given bytes, it
    would send each byte as a field of its own)."""
    raw = {f"\x01{n}\x01": as_bytes(v) for n, v in enumerate(fields.values())}
    data: dict = {name: SimpleUploadedFile("list.txt", content) for name, content in files.items()}
    data.update(zip(fields, raw, strict=True))
    body = encode_multipart(BOUNDARY, data)
    for placeholder, value in raw.items():
        body = body.replace(placeholder.encode(), value)
    return body


@dataclass
class Tally:
    role: str = ""  # whose requests are being sent
    requests: Counter = field(default_factory=Counter)  # by role, as are server_errors
    server_errors: Counter = field(default_factory=Counter)
    failures: list[str] = field(default_factory=list)
    half_written: list[str] = field(default_factory=list)


def writes_so_far() -> int:
    """Rows inserted, updated or deleted in Concord's tables by this test's transaction so far."""
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT coalesce(sum(n_tup_ins + n_tup_upd + n_tup_del), 0)"
            " FROM pg_stat_xact_user_tables"
            " WHERE relname LIKE ANY (ARRAY['annotation\\_%', 'ingest\\_%', 'taxonomy\\_%'])"
        )
        return int(cursor.fetchone()[0])


def send(client: Client, tally: Tally, what: str, method: str, url: str, **kwargs):
    """One request in a savepoint: a failing one cannot break the ones after it."""
    before = writes_so_far()
    savepoint = transaction.savepoint()
    response = getattr(client, method)(url, **kwargs)
    tally.requests[tally.role] += 1
    if response.status_code >= 500:
        tally.server_errors[tally.role] += 1
        transaction.savepoint_rollback(savepoint)
        tally.failures.append(f"{response.status_code} {what}")
        return response
    transaction.savepoint_commit(savepoint)
    if 400 <= response.status_code < 500 and writes_so_far() != before:
        tally.half_written.append(f"{response.status_code} {what}")
    return response


def fuzz_world(project) -> None:
    """Items in the stages that make the labeling and screening forms appear."""
    for _ in range(2):
        Item.objects.create(project=project, issue=IssueFactory(), stage=Stage.OPEN)
        Item.objects.create(project=project, issue=IssueFactory(), stage=Stage.CANDIDATE)
    Item.objects.create(project=project, issue=IssueFactory(), stage=Stage.SCREENING_DISPUTE)


def pages_for(role: str) -> list[str]:
    """The page routes (not the API) `role` may use. Pages that are the same for everyone signed
    in (taxonomy, sign-in, API token) are fuzzed as the volunteer only, and the site admin only
    on the staff pages (ingest): the project pages are the project admin's. The outsider gets
    the project's pages, which answer it 404, and the curators' (taxonomy upload), which it may
    use. That keeps the run within a few thousand requests."""
    names = []
    for name, rule in sorted(RULES.items()):
        if name.startswith("api-") or name in {"schema", "api-docs"} | NOT_FUZZED:
            continue
        if rule.least in ("public", "signed-in"):
            wanted = role == "volunteer"
        elif role == "staff":
            wanted = rule.least == "staff"
        elif role == "outsider":
            wanted = rule.least in ("volunteer", "lead", "admin", "curator")
        else:
            wanted = role in ALLOWED[rule.least]
        if wanted:
            names.append(name)
    return names


def add_form(forms: dict[str, Form], form: Form) -> None:
    """Keep one form per action, with every field seen for it (defaults from the page win)."""
    known = forms.setdefault(form.action, Form(form.action))
    for name, default in form.fields.items():
        if default or name not in known.fields:
            known.fields[name] = default
    known.files |= form.files


def fuzz_post(client: Client, tally: Tally, role: str, form: Form) -> None:
    for name in sorted(set(form.fields) | form.files):
        for label, value in HOSTILE.items():
            what = f"{role} POST {form.action} {name}={label}"
            if form.action == reverse("login"):
                cache.clear()  # else sign-in throttling answers before the form is read
            if form.files:  # multipart; a file field gets the value as the file's content
                files = {f: as_bytes(value) if f == name else b"# nothing\n" for f in form.files}
                fields = {**form.fields, name: value} if name in form.fields else form.fields
                body = multipart(fields, files)
                send(
                    client,
                    tally,
                    what,
                    "post",
                    form.action,
                    data=body,
                    content_type=MULTIPART,
                )
            else:
                pairs = {**form.fields, name: value}
                body = urlencode(pairs, errors="surrogatepass")
                content_type = "application/x-www-form-urlencoded"
                send(client, tally, what, "post", form.action, data=body, content_type=content_type)


@pytest.fixture
def fuzz_objects(personas, project, settings, tmp_path):
    settings.VAR_DIR = tmp_path
    objects, people = role_world(personas, project)
    fuzz_world(project)
    return objects, people


# The project's roles, each opening what the one before opens and more. A page's query parameters
# and a form are fuzzed as the first of them who may use it: the least role that gets past the
# role check reaches its logic, as the ones above would (a role kept out of a page or form gets
# the refusal tests/test_role_matrix.py and tests/test_write_gate.py check; the outsider is sent
# every form). Fuzzing each again as every role above was half this module's time (#25).
LADDER = ("volunteer", "lead", "admin")


def below(role: str) -> tuple[str, ...]:
    return LADDER[: LADDER.index(role)] if role in LADDER else ()


def fuzzed_pages(role: str) -> set[str]:
    """The pages whose query parameters are fuzzed as `role`: those no role below may open."""
    earlier = {name for lower in below(role) for name in pages_for(lower)}
    return {name for name in pages_for(role) if name not in earlier}


def floor(role: str) -> int:
    """The fewest requests `role` sends if each of its pages is got and each page fuzzed as it is
    sent each hostile value in each query parameter every page reads."""
    pages = [name for name in pages_for(role) if RULES[name].method == "get"]
    fuzzed = fuzzed_pages(role)
    return len(pages) + sum(name in fuzzed for name in pages) * len(EVERY_PAGE_PARAMS) * len(
        HOSTILE
    )


def walk(
    client: Client, tally: Tally, role: str, objects: dict, *, fuzz: set[str]
) -> dict[str, Form]:
    """GET each of `role`'s pages and read its forms (by action; the known POST-only actions
    too); on the pages named in `fuzz`, also send each query parameter the page reads each
    hostile value."""
    forms: dict[str, Form] = {}
    for name in pages_for(role):
        rule = RULES[name]
        url = reverse(name, kwargs=objects[rule.kwargs])
        if rule.method != "get":
            add_form(forms, Form(url, dict.fromkeys(POST_FIELDS.get(name, ()), "")))
            continue
        page = send(client, tally, f"{role} GET {name}", "get", url)
        reader = FormReader(url)
        if page.status_code == 200 and "html" in page.get("Content-Type", ""):
            reader.feed(page.content.decode())
        params = set(QUERY_PARAMS.get(name, ())) | set(EVERY_PAGE_PARAMS)
        for form in reader.forms:
            if form.action == reverse("logout"):
                continue
            if form.method == "get":
                params |= set(form.fields)
            else:
                add_form(forms, form)
        if name not in fuzz:
            continue
        for param in sorted(params):
            for label, value in HOSTILE.items():
                query = urlencode({param: value}, errors="surrogatepass")
                what = f"{role} GET {name} ?{param}={label}"
                send(client, tally, what, "get", f"{url}?{query}")
    return forms


def forms_seen_by(client: Client, role: str, people: dict, objects: dict) -> dict[str, Form]:
    """The forms `role` finds on its pages, by action (nothing fuzzed)."""
    client.force_login(people[role])
    forms = walk(client, Tally(role=role), role, objects, fuzz=set())
    client.logout()
    return forms


def add_forms(forms: dict[str, Form], found: dict[str, Form]) -> None:
    for form in found.values():
        add_form(forms, form)


# One test per role, so the parallel runs (make test) spread them; each has a world of its own.
@pytest.mark.parametrize("role", ROLES)
def test_every_form_and_query_parameter_survives_hostile_values(fuzz_objects, request, role):
    objects, people = fuzz_objects
    client = Client(raise_request_exception=False)
    tally = Tally(role=role)
    started = time.monotonic()
    forms: dict[str, Form] = {}
    if role == "outsider":  # kept out of the project: the forms the others see must write nothing
        for insider in ROLES:
            if insider != "outsider":
                add_forms(forms, forms_seen_by(client, insider, people, objects))
    fuzzed_below: set[str] = set()  # the forms a role below uses: fuzzed as that role
    for lower in below(role):
        fuzzed_below |= set(forms_seen_by(client, lower, people, objects))
    client.force_login(people[role])
    add_forms(forms, walk(client, tally, role, objects, fuzz=fuzzed_pages(role)))
    for form in forms.values():
        if form.action not in fuzzed_below:
            fuzz_post(client, tally, role, form)
    summary_line(
        request,
        f"form fuzz as {role}: {tally.requests[role]} requests (floor {floor(role)}), "
        f"{tally.server_errors[role]} answered 5xx, {time.monotonic() - started:.0f} s",
    )
    assert tally.requests[role] >= floor(role), f"{role}'s pages were not all fuzzed"
    assert not tally.failures, "\n".join(tally.failures[:50])
    assert not tally.half_written, "\n".join(tally.half_written[:50])
