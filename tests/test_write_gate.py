"""Every write of Concord, enumerated (annotation.gate): each route that changes a project, and so
the write service behind it, is refused in an archived project, refused to the people of other
projects and refused to each role that may not make it — with a VALID payload, so a refusal is
the gate's and not the input validation's.

- `WRITES` lists every project write route: its method, the object filling its URL, the kind of
  write (gate.Write) and a function building a valid payload (form data for pages, JSON for the
  API, files where the route takes them). `test_every_write_route_is_listed` walks the URL conf
  and sends every route every method as site staff: a route that takes a write method (answers
  anything but 405), or that writes on GET, must be in WRITES, in `SITE_WIDE_WRITES` (writes
  that belong to no project) or in `READS_ANY_METHOD` (views that answer any method as a read,
  and are checked to write nothing). A new write route fails there until it is listed with a
  payload, and the tests below then hold it to the gate.
- For each WRITES entry (parametrized by route and method, so a failure names it):
  `valid`: the least role makes the write in the open project: it succeeds and writes (this is
    what proves the payload valid);
  `archived`: in an archived project nobody makes it: 409 from the API, or a page saying the
    project is archived and read only, and nothing written (audit rows included). Restoring the
    project, and exports, are the exceptions: they still work for those allowed;
  `outsiders`: a lead and an admin of another project on the same taxonomy are refused (and an
    admin of the other project is refused this project's object under the URL of their own);
  `roles`: every role below the least is refused.
  Each attempt starts from the same state: it runs in a transaction rolled back afterwards.

Writes are watched on the database connection (`WriteWatch`): every INSERT/UPDATE/DELETE that
Django's cursor runs (connection.execute_wrapper), and, as a second net, PostgreSQL's own
per-table counts for the transaction (pg_stat_xact_user_tables). A write that is rolled back later
in the request still counts: the gate is asked before the first write.
"""

from __future__ import annotations

import copy
import html
import json
import re
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import pytest
from django.contrib.messages import constants as levels
from django.contrib.messages import get_messages
from django.core.files.uploadedfile import SimpleUploadedFile
from django.db import DatabaseError, connection, transaction
from django.test import Client
from django.urls import reverse
from django.utils import timezone

from annotation.gate import ARCHIVED, POLICIES, Write
from annotation.models import (
    Item,
    Membership,
    Project,
    ProjectNode,
    ProposalStatus,
    Role,
    Skip,
    Stage,
)
from ingest.models import Source
from tests.conftest import needs_postgres, rows_only
from tests.factories import PASSWORD, IssueFactory, MembershipFactory, UserFactory
from tests.test_role_matrix import (
    ALLOWED,
    PEOPLE,
    RULES,
    duplicate_pair,
    role_world,
    url_names,
)

# ---------------------------------------------------------------- watching the database

# Tables whose writes are not the project's: the visitor's session row (signing in, and the
# one-time messages a page shows, live there); the agreement figures' tallies, derived from the
# labels, which a read that finds them stale rebuilds (annotation.figures.tallies) as a cache
# would, in an archived project too.
IGNORED_TABLES = {"django_session", "annotation_figurestate", "annotation_figuretally"}
# The scratch tables ingest.services.insert_rows fills by COPY before one INSERT into the real
# table (which is watched): temporary, dropped at commit.
SCRATCH_PREFIX = "concord_insert_"
_WRITE = re.compile(
    r"\b(?:INSERT\s+INTO|DELETE\s+FROM|UPDATE|MERGE\s+INTO|TRUNCATE(?:\s+TABLE)?)\s+"
    r"(?:ONLY\s+)?\"?(\w+)\"?",
    re.IGNORECASE,
)
# What `UPDATE` is followed by when it is not a statement: SELECT ... FOR UPDATE [OF|SKIP
# LOCKED|NOWAIT], INSERT ... ON CONFLICT DO UPDATE SET.
_NOT_TABLES = {"set", "of", "skip", "nowait"}


def tables_written_by(sql: str) -> set[str]:
    return {t for t in _WRITE.findall(sql) if t.lower() not in _NOT_TABLES}


def _counted(table: str) -> bool:
    return table not in IGNORED_TABLES and not table.startswith(SCRATCH_PREFIX)


def _xact_counts() -> Counter:
    """Rows inserted, updated or deleted per table by this transaction so far (PostgreSQL's
    own count, whatever ran the statement)."""
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT relname, n_tup_ins + n_tup_upd + n_tup_del FROM pg_stat_xact_user_tables"
        )
        return Counter({name: int(n) for name, n in cursor.fetchall()})


class WriteWatch:
    """The tables a block of code wrote, and how many rows: `with WriteWatch() as watch: ...`,
    then `watch.written` (table -> rows), ignoring IGNORED_TABLES."""

    def __init__(self) -> None:
        self.statements: Counter = Counter()  # from the SQL Django's cursor ran
        self.counted: Counter = Counter()  # from pg_stat_xact_user_tables
        self._wrapper: Any = None
        self._before: Counter = Counter()

    def __call__(self, execute, sql, params, many, context):
        result = execute(sql, params, many, context)
        tables = tables_written_by(sql) if isinstance(sql, str) else set()
        if tables:
            rows = context["cursor"].rowcount
            for table in tables:
                # rowcount -1: not known (count it); 0: the statement changed nothing
                self.statements[table] += 1 if rows is None or rows < 0 else rows
        return result

    def __enter__(self) -> WriteWatch:
        self._before = _xact_counts()
        self._wrapper = connection.execute_wrapper(self)
        self._wrapper.__enter__()
        return self

    def __exit__(self, *exc) -> None:
        self._wrapper.__exit__(*exc)
        try:
            after = _xact_counts()
        except DatabaseError:  # the request left the transaction aborted: the SQL alone tells
            return
        after.subtract(self._before)
        self.counted = +after

    @property
    def written(self) -> dict[str, int]:
        tables = {t for t, n in self.statements.items() if n} | set(self.counted)
        return {
            t: max(self.statements.get(t, 0), self.counted.get(t, 0))
            for t in sorted(tables)
            if _counted(t)
        }


def test_the_watch_sees_writes(personas, project):
    """WriteWatch itself: ORM writes, a hand-written statement (a DELETE inside WITH before an
    INSERT), a write rolled back later, and the session ignored."""
    from annotation.labeling.assignment import reserve_if_room
    from annotation.models import Reservation

    needs_postgres(connection)
    item = Item.objects.create(project=project, issue=IssueFactory(), stage=Stage.OPEN)
    volunteer = personas["volunteer_a"]
    with WriteWatch() as nothing:
        list(Item.objects.filter(pk=item.pk).select_for_update())
    assert nothing.written == {}
    with WriteWatch() as raw:
        now = timezone.now()
        reserve_if_room(item=item, volunteer=volunteer, now=now, minutes=5, room=None)
    assert raw.written == {"annotation_reservation": 1}
    with WriteWatch() as rolled_back, transaction.atomic():
        Reservation.objects.filter(item=item).delete()
        transaction.set_rollback(True)
    assert rolled_back.written == {"annotation_reservation": 1}
    with WriteWatch() as session:
        Client().force_login(volunteer)
    assert set(session.written) <= {"auth_user"}  # last_login; the session row is ignored


# ---------------------------------------------------------------- the world


@dataclass
class World:
    project: Project
    other: Project  # where the outsiders are a lead and an admin, on the same taxonomy
    people: dict[str, Any]  # PEOPLE_HERE -> user (None: anonymous)
    targets: dict[str, dict]  # which object fills the URL -> its URL kwargs
    ids: dict[str, int] = field(default_factory=dict)
    archived: bool = False  # the state the current attempt runs in


# The role matrix's people, and an admin of the other project besides its lead ("outsider").
OUTSIDERS = ("outsider", "outsider_admin")
PEOPLE_HERE = (*PEOPLE, "outsider_admin")


def node_id(project: Project, code: str) -> int:
    return project.taxonomy.nodes.get(code=code).pk


def accepted_proposal(project: Project, people, name: str, item: Item | None = None):
    """A proposal of volunteer_b's that every member approved."""
    from annotation.review.proposals import electorate, proposal_create, proposal_vote

    parent = project.taxonomy.nodes.get(code="C")
    proposal = proposal_create(
        project=project, proposer=people["volunteer_b"], parent=parent, name=name, item=item
    )
    for member in electorate(project):
        proposal_vote(proposal=proposal, member=member, approve=True)
    proposal.refresh_from_db()
    assert proposal.status == ProposalStatus.ACCEPTED, name
    return proposal


def build_world(personas, project) -> World:
    """A project with an item in every stage a write needs, proposals open and accepted, a
    category of its own (ProjectNode), a spare member, an invitation and a harvested source."""
    from annotation.projects.members import invitation_create
    from annotation.review.proposals import proposal_add_node, proposal_create
    from tests.annotation.lead_helpers import labeled_item

    needs_postgres(connection)
    other = Project.objects.get(slug="other")
    volunteer_c = UserFactory(username="volunteer_c")
    MembershipFactory(project=project, user=volunteer_c)
    outsider_admin = UserFactory(username="outsider_admin")
    MembershipFactory(project=other, user=outsider_admin, role=Role.ADMIN)
    staff = UserFactory(username="site-admin", is_staff=True, is_superuser=True)
    people = {
        "anonymous": None,
        "outsider": personas["outsider"],
        "outsider_admin": outsider_admin,
        "volunteer": personas["volunteer_a"],
        "lead": personas["lead"],
        "admin": personas["admin"],
        "staff": staff,
        "volunteer_b": personas["volunteer_b"],
    }
    trio = [personas["volunteer_b"], volunteer_c, personas["admin"]]

    def item(stage: str) -> Item:
        return Item.objects.create(project=project, issue=IssueFactory(), stage=stage)

    open_item = item(Stage.OPEN)
    item(Stage.OPEN)  # a second, so a pilot or a claim has a choice
    candidate = item(Stage.CANDIDATE)
    screening_dispute = item(Stage.SCREENING_DISPUTE)
    disputed = labeled_item(project, trio, ["C.1", "C.1", "C.2"])
    assert disputed.stage == Stage.DISPUTED
    final = labeled_item(project, trio, ["C.1", "C.1", "C.1"])
    assert final.stage == Stage.FINAL
    sent_back = labeled_item(project, trio, ["C.2", "C.2", "C.1"])
    open_proposal = proposal_create(
        project=project,
        proposer=people["volunteer_b"],
        parent=project.taxonomy.nodes.get(code="C"),
        name="Still open",
    )
    to_add = accepted_proposal(project, people, "To be added")
    to_send_back = accepted_proposal(project, people, "Sends back", item=sent_back)
    own = accepted_proposal(project, people, "Our own category")
    own_node = proposal_add_node(proposal=own, lead=people["lead"])
    assert ProjectNode.objects.filter(project=project, node=own_node).exists()
    source = Source.objects.create(
        host="github",
        owner="NVIDIA",
        repo="Megatron-LM",
        created_from=timezone.now().date(),
        created_until=timezone.now().date(),
    )
    for number in ("7001", "7002"):
        IssueFactory(number=number, source=source)
    _invitation, token = invitation_create(project=project, inviter=people["admin"])
    slug = project.slug
    from tests.test_role_matrix import interview_participant, interview_transcript

    participant, ranking_token = interview_participant(project, people["lead"])
    targets = {
        "project": {"slug": slug},
        "open_item": {"slug": slug, "item_id": open_item.pk},
        "candidate": {"slug": slug, "item_id": candidate.pk},
        "screening_dispute": {"slug": slug, "item_id": screening_dispute.pk},
        "disputed": {"slug": slug, "item_id": disputed.pk},
        "final": {"slug": slug, "item_id": final.pk},
        "open_proposal": {"slug": slug, "pk": open_proposal.pk},
        "accepted_proposal": {"slug": slug, "pk": to_add.pk},
        "send_back_proposal": {"slug": slug, "pk": to_send_back.pk},
        "membership": {"slug": slug, "pk": project.memberships.get(user=volunteer_c).pk},
        "project_node": {"pk": own_node.pk},
        "invitation": {"token": token},
        "participant": {"slug": slug, "pk": participant},
        "ranking_link": {"token": ranking_token},
        "pair": duplicate_pair(project),
        "transcript": interview_transcript(project),
    }
    ids = {"source": source.pk, "open_item": open_item.pk, "candidate": candidate.pk}
    return World(project=project, other=other, people=people, targets=targets, ids=ids)


@pytest.fixture(scope="class")
@rows_only
def shared_world(class_rows) -> World:
    """One world for a test class (`class_rows`): each attempt runs in a transaction of its own,
    rolled back, so every test starts from the same state."""
    project, personas = class_rows
    return build_world(personas, project)


@pytest.fixture
def world(shared_world, db) -> World:
    return copy.deepcopy(shared_world)


# ---------------------------------------------------------------- payloads


@dataclass(frozen=True)
class Body:
    kind: str  # "none", "form" (pages; multipart, files allowed), "json"
    data: Any = None


def form(**data) -> Body:
    return Body("form", data)


def js(data) -> Body:
    return Body("json", data)


NONE = Body("none")
LABEL_FILE = (
    b"Issue_URL,Label1,Final_Label\nhttps://github.com/NVIDIA/Megatron-LM/issues/9,C.1,C.1\n"
)
URL_LIST = "https://github.com/NVIDIA/Megatron-LM/issues/4244\n"
ISSUE_RECORD = {
    "url": "https://github.com/NVIDIA/Megatron-LM/issues/4243",
    "title": "OOM with --fp16",
    "body": "Out of memory with `--fp16`.",
    "author": "volunteer-dev",
    "created_at": "2024-05-01T10:00:00Z",
    "updated_at": "2024-05-02T10:00:00Z",
    "comments": [],
}


INTERVIEW_CODEBOOK = (
    b"Participant,Type,Experience Level,Framework Context,Prompt Category,Thematic Quote,"
    b"Linked Taxonomy Node(s),Research Insight\n"
    b'U1,User,Beginner,PyTorch,Setup,"Loss went flat.","C.4, B.5",Stability matters\n'
)


def codebook_file() -> SimpleUploadedFile:
    return SimpleUploadedFile("CodeBook.csv", INTERVIEW_CODEBOOK, content_type="text/csv")


def with_interviews(body: Body) -> Callable[[World, Any], Body]:
    """`body`, once the project holds a quote linking B.5, a code its taxonomy lacks."""

    def payload(w: World, user) -> Body:
        from annotation.gate import OPERATOR
        from annotation.interviews.services import InterviewFile, interviews_import

        codebook = InterviewFile("CodeBook.csv", INTERVIEW_CODEBOOK)
        interviews_import(project=w.project, actor=OPERATOR, codebook=codebook)
        return body

    return payload


RANKINGS = b"Participant,Rank,Category\nU1,1,C.4\nU1,2,C.9\n"


def rankings_file() -> SimpleUploadedFile:
    return SimpleUploadedFile("rankings.csv", RANKINGS, content_type="text/csv")


def transcript_file() -> SimpleUploadedFile:
    return SimpleUploadedFile("U2.txt", b"Q: Why?\nA: It hangs.\n", content_type="text/plain")


def coding(body: Body | Callable[[World, Any], Body]) -> Callable[[World, Any], Body]:
    """`body` (or what it builds), once the person codes the transcript."""

    def payload(w: World, user) -> Body:
        from taxonomy.interviews.models import TranscriptCoder

        if user is not None:
            TranscriptCoder.objects.get_or_create(
                transcript_id=w.targets["transcript"]["pk"], coder=user
            )
        return body(w, user) if callable(body) else body

    return payload


def own_passage(w: World, user) -> Body:
    """The id of a passage the person coded (any id for nobody)."""
    from taxonomy.interviews.models import CodedPassage

    if user is None:
        return form(passage="1")
    passage = CodedPassage.objects.create(
        transcript_id=w.targets["transcript"]["pk"],
        coder=user,
        node_id=node_id(w.project, "C.1"),
        start=0,
        end=5,
    )
    return form(passage=str(passage.pk))


def coders_done(body: Body) -> Callable[[World, Any], Body]:
    """`body`, once two coders of the transcript are done (its disagreements may be settled)."""

    def payload(w: World, user) -> Body:
        from taxonomy.interviews.models import TranscriptCoder

        for coder in (w.people["volunteer"], w.people["lead"]):
            TranscriptCoder.objects.create(
                transcript_id=w.targets["transcript"]["pk"], coder=coder, done_at=timezone.now()
            )
        return body

    return payload


def label_file() -> SimpleUploadedFile:
    return SimpleUploadedFile("labels.csv", LABEL_FILE, content_type="text/csv")


def package_zip() -> bytes:
    """A replication package of one label file."""
    import io
    import zipfile

    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        archive.writestr("Issue Report/Megatron-LM.csv", LABEL_FILE)
    return buffer.getvalue()


def package_file() -> SimpleUploadedFile:
    return SimpleUploadedFile("package.zip", package_zip(), content_type="application/zip")


def url_list_file() -> SimpleUploadedFile:
    return SimpleUploadedFile("issues.txt", URL_LIST.encode(), content_type="text/plain")


def settings_form(w: World, user) -> Body:
    """The settings page's form as the page shows it, with a new name."""
    from annotation.projects.forms import ProjectForm

    initial = ProjectForm(instance=Project.objects.get(pk=w.project.pk)).initial
    data = {}
    for name, value in initial.items():
        if isinstance(value, bool):
            if value:
                data[name] = "on"
        else:
            data[name] = "" if value is None else value
    return form(**{**data, "name": "Renamed"})


def reserved(body: Body, item: str = "open_item") -> Callable[[World, Any], Body]:
    """`body`, once the item is reserved for the person (as "next item" would have)."""

    def payload(w: World, user) -> Body:
        from tests.annotation.labeling_helpers import hand_out

        if user is not None:
            hand_out(Item.objects.get(pk=w.ids[item]), user)
        return body

    return payload


def skipped(body: Body) -> Callable[[World, Any], Body]:
    """`body`, once the person has skipped the open item."""

    def payload(w: World, user) -> Body:
        if user is not None:
            Skip.objects.create(item_id=w.ids["open_item"], volunteer=user, reason="unclear")
        return body

    return payload


def join_body(w: World, user) -> Body:
    """Signed in: one click. Anonymous: the sign-up form."""
    if user is not None:
        return NONE
    return form(
        username="joiner", email="joiner@example.org", password1=PASSWORD, password2=PASSWORD
    )


def fixed(body: Body) -> Callable[[World, Any], Body]:
    return lambda w, user: body


@dataclass(frozen=True)
class Entry:
    target: str  # a key of World.targets
    payload: Callable[[World, Any], Body]  # a valid request for this person (state set up)
    write: Write | None  # the gate's kind of write (None: no role of the project applies)
    least: str = ""  # a key of role matrix ALLOWED; "" means RULES[name].least


def _c(w: World) -> str:
    return str(node_id(w.project, "C"))


def _c1(w: World) -> str:
    return str(node_id(w.project, "C.1"))


# (url name, method) -> how to make that write. Pages registered with GET in the role matrix
# that take a POST are here by their POST; label-next and screen-next are here by their GET,
# which hands out (reserves) an item.
WRITES: dict[tuple[str, str], Entry] = {
    # settings, archive
    ("project-edit", "post"): Entry("project", settings_form, Write.SETTINGS),
    # (the role matrix's rule for api-project is its GET, open to every member)
    ("api-project", "patch"): Entry(
        "project", fixed(js({"name": "Renamed"})), Write.SETTINGS, "admin"
    ),
    ("project-archive", "post"): Entry(
        "project", lambda w, u: form(archive="0" if w.archived else "1"), Write.ARCHIVE
    ),
    ("api-project-archive", "post"): Entry(
        "project", lambda w, u: js({"archived": not w.archived}), Write.ARCHIVE
    ),
    # members and invitations
    ("project-members", "post"): Entry(
        "project", fixed(form(people="newcomer", role="volunteer")), Write.MEMBERS
    ),
    ("api-members", "post"): Entry(
        "project", fixed(js({"people": ["newcomer"], "role": "volunteer"})), Write.MEMBERS
    ),
    ("project-invite", "post"): Entry(
        "project", fixed(form(role="volunteer", days="7")), Write.MEMBERS
    ),
    ("api-invitations", "post"): Entry(
        "project", fixed(js({"role": "volunteer", "days": 7})), Write.MEMBERS
    ),
    ("project-member-change", "post"): Entry(
        "membership", fixed(form(role="lead", column="", action="save")), Write.MEMBERS
    ),
    ("api-member", "patch"): Entry("membership", fixed(js({"role": "lead"})), Write.MEMBERS),
    ("api-member", "delete"): Entry("membership", fixed(NONE), Write.MEMBERS),
    # an invitation link is public (it signs people up), but joins nobody into an archived project
    ("join", "post"): Entry("invitation", join_body, None),
    # the project's own category (added through a proposal): its leads curate it. The role
    # matrix's rule for these routes is about a shared node (staff only).
    ("taxonomy-node-edit", "post"): Entry(
        "project_node", fixed(form(definition="Sharper", examples="one\ntwo")), Write.CURATE, "lead"
    ),
    ("taxonomy-node-retire", "post"): Entry(
        "project_node", fixed(form(retire="1")), Write.CURATE, "lead"
    ),
    # items and label files
    ("project-label-imports", "post"): Entry(
        "project", lambda w, u: form(label_files=label_file()), Write.LABELS_IMPORT
    ),
    ("api-label-imports", "post"): Entry(
        "project", lambda w, u: form(files=label_file()), Write.LABELS_IMPORT
    ),
    # the replication package: the upload queues the job (which is tested below as a job)
    ("project-package-imports", "post"): Entry(
        "project", lambda w, u: form(package=package_file()), Write.PACKAGE_IMPORT
    ),
    ("api-package-imports", "post"): Entry(
        "project", lambda w, u: form(file=package_file()), Write.PACKAGE_IMPORT
    ),
    ("api-item-imports", "post"): Entry(
        "project",
        fixed(js({"name": "issues.jsonl", "text": json.dumps(ISSUE_RECORD) + "\n"})),
        Write.ITEMS_IMPORT,
    ),
    ("project-items-from-url-list", "post"): Entry(
        "project", lambda w, u: form(file=url_list_file(), keyword_set=""), Write.ITEMS_IMPORT
    ),
    ("api-items-from-url-list", "post"): Entry(
        "project", fixed(js({"text": URL_LIST})), Write.ITEMS_IMPORT
    ),
    ("project-items-from-source", "post"): Entry(
        "project", lambda w, u: form(source=w.ids["source"], which="all"), Write.ITEMS_FROM_SOURCE
    ),
    ("api-items-from-source", "post"): Entry(
        "project",
        lambda w, u: js({"source": w.ids["source"], "which": "all"}),
        Write.ITEMS_FROM_SOURCE,
    ),
    # interviews: leads import them (a job) and map the codes their taxonomy lacks
    ("interview-imports", "post"): Entry(
        "project", lambda w, u: form(codebook=codebook_file()), Write.INTERVIEWS
    ),
    ("api-interview-imports", "post"): Entry(
        "project", lambda w, u: form(codebook=codebook_file()), Write.INTERVIEWS
    ),
    ("interview-code-map", "post"): Entry(
        "project", with_interviews(form(code="B.5", node="B.2")), Write.INTERVIEWS
    ),
    ("api-interview-code-map", "post"): Entry(
        "project", with_interviews(js({"code": "B.5", "node": "B.2"})), Write.INTERVIEWS
    ),
    # near-duplicate issues: the lead rebuilds the index (a job) and marks pairs not duplicates
    ("duplicate-rebuild", "post"): Entry("project", fixed(NONE), Write.DUPLICATES),
    ("api-duplicate-index", "post"): Entry("project", fixed(NONE), Write.DUPLICATES),
    ("not-duplicate", "post"): Entry("pair", fixed(NONE), Write.DUPLICATES),
    ("api-not-duplicate", "post"): Entry("pair", fixed(NONE), Write.DUPLICATES),
    # practitioner priorities: leads fill them in or import them; a participant's one-time
    # link (public: no account) carries its creator's authority
    ("interview-participant", "post"): Entry(
        "participant", fixed(form(action="save", **{"rank-C-1": "C.4"})), Write.INTERVIEWS
    ),
    ("api-participant-ranking", "put"): Entry(
        "participant", fixed(js({"ranking": {"C": ["C.4"]}})), Write.INTERVIEWS
    ),
    ("interview-rankings-import", "post"): Entry(
        "project", lambda w, u: form(rankings=rankings_file()), Write.INTERVIEWS
    ),
    ("api-rankings-import", "post"): Entry(
        "project", lambda w, u: form(rankings=rankings_file()), Write.INTERVIEWS
    ),
    ("ranking-link", "post"): Entry("ranking_link", fixed(form(**{"rank-C-1": "C.4"})), None),
    # coding transcripts: leads upload and assign; every member codes a transcript they joined
    ("interview-transcripts", "post"): Entry(
        "project", lambda w, u: form(transcript=transcript_file()), Write.INTERVIEWS, "lead"
    ),
    ("transcript-assign", "post"): Entry(
        "transcript", lambda w, u: form(username=w.people["volunteer"].username), Write.INTERVIEWS
    ),
    ("transcript-join", "post"): Entry("transcript", fixed(NONE), Write.CODE),
    ("transcript-code", "post"): Entry(
        "transcript", coding(form(start="19", end="56", node_code="C.1")), Write.CODE
    ),
    ("transcript-uncode", "post"): Entry("transcript", coding(own_passage), Write.CODE),
    ("api-transcript-passages", "post"): Entry(
        "transcript", coding(js({"start": 19, "end": 56, "node": "C.1"})), Write.CODE
    ),
    ("transcript-done", "post"): Entry("transcript", coding(NONE), Write.CODE),
    ("transcript-settle", "post"): Entry(
        "transcript", coders_done(form(line="2", node_code="C.1", keep="1")), Write.INTERVIEWS
    ),
    # exports (they read the project; the job row is theirs)
    ("project-exports", "post"): Entry("project", fixed(form(format="study")), Write.EXPORT),
    ("api-project-export-jobs", "post"): Entry(
        "project", fixed(js({"format": "study"})), Write.EXPORT
    ),
    # the lead's work
    ("item-resolve", "post"): Entry(
        "disputed", lambda w, u: form(node=_c1(w), reason="Most said so"), Write.RESOLVE
    ),
    ("api-item-resolve", "post"): Entry(
        "disputed", fixed(js({"node": "C.1", "reason": "Most said so"})), Write.RESOLVE
    ),
    ("item-reopen", "post"): Entry("final", fixed(form(reason="A second look")), Write.RESOLVE),
    ("api-item-reopen", "post"): Entry(
        "final", fixed(js({"reason": "A second look"})), Write.RESOLVE
    ),
    ("project-pilot", "post"): Entry(
        "project", fixed(form(action="start", n="1")), Write.PILOT, "lead"
    ),
    ("api-pilot", "post"): Entry("project", fixed(js({"action": "start", "n": 1})), Write.PILOT),
    ("proposal-add-node", "post"): Entry("accepted_proposal", fixed(NONE), Write.PROPOSAL_SETTLE),
    ("api-proposal-add-node", "post"): Entry(
        "accepted_proposal", fixed(NONE), Write.PROPOSAL_SETTLE
    ),
    ("proposal-send-back", "post"): Entry("send_back_proposal", fixed(NONE), Write.PROPOSAL_SETTLE),
    ("api-proposal-send-back", "post"): Entry(
        "send_back_proposal", fixed(NONE), Write.PROPOSAL_SETTLE
    ),
    ("screening-decide", "post"): Entry(
        "screening_dispute", fixed(form(decision="open")), Write.SCREEN_DECIDE
    ),
    ("api-screening-decision", "post"): Entry(
        "screening_dispute", fixed(js({"relevant": True})), Write.SCREEN_DECIDE
    ),
    # every member's: discussion, proposals
    ("item-discussion", "post"): Entry("disputed", fixed(form(text="Why C.2?")), Write.DISCUSS),
    ("api-item-posts", "post"): Entry("disputed", fixed(js({"text": "Why C.2?"})), Write.DISCUSS),
    ("proposal-new", "post"): Entry(
        "project",
        lambda w, u: form(parent=_c(w), name="Missing category", reason="Nothing fits"),
        Write.PROPOSE,
    ),
    ("api-proposals", "post"): Entry(
        "project", fixed(js({"parent": "C", "name": "Missing category"})), Write.PROPOSE
    ),
    ("proposal-vote", "post"): Entry("open_proposal", fixed(form(approve="1")), Write.PROPOSE),
    ("api-proposal-vote", "post"): Entry(
        "open_proposal", fixed(js({"approve": True})), Write.PROPOSE
    ),
    # labeling
    ("label-next", "get"): Entry("project", fixed(NONE), Write.LABEL),
    ("api-next-item", "post"): Entry("project", fixed(js({})), Write.LABEL),
    ("label-item", "post"): Entry(
        "open_item", reserved(form(node="C.1", summary="Loss is NaN")), Write.LABEL
    ),
    ("api-annotation", "put"): Entry(
        "open_item", reserved(js({"node": "C.1", "summary": "Loss is NaN"})), Write.LABEL
    ),
    ("label-skip", "post"): Entry("open_item", reserved(form(reason="Unclear")), Write.LABEL),
    ("api-skip", "post"): Entry("open_item", reserved(js({"reason": "Unclear"})), Write.LABEL),
    ("label-unskip", "post"): Entry("open_item", skipped(NONE), Write.LABEL),
    ("api-skip", "delete"): Entry("open_item", skipped(NONE), Write.LABEL),
    # screening
    ("screen-next", "get"): Entry("project", fixed(NONE), Write.SCREEN),
    ("api-screening-next", "post"): Entry("project", fixed(NONE), Write.SCREEN),
    ("screen-vote", "post"): Entry(
        "candidate", reserved(form(verdict="relevant"), "candidate"), Write.SCREEN
    ),
    ("api-screening-vote", "post"): Entry(
        "candidate", reserved(js({"relevant": True}), "candidate"), Write.SCREEN
    ),
}
# Still allowed in an archived project, to those the role allows: restoring it (the payload
# then restores), and exports.
WHILE_ARCHIVED = {
    key for key, entry in WRITES.items() if entry.write in (Write.ARCHIVE, Write.EXPORT)
}

# Writes that belong to no project, so no project's gate applies: the visitor's own session and
# account, creating a project (there is none yet), a new taxonomy version (shared by projects),
# and ingest (sources, harvests, keyword sets, URL lists: site-wide, site staff only).
SITE_WIDE_WRITES = {
    "login": "signs in (session, last_login)",
    "logout": "signs out",
    "set_language": "the language cookie",
    "api-token": "the person's own API token",
    "single-keys": "the person's own keyboard setting",
    "password_change": "the person's own password",
    "password_reset": "sends a reset e-mail",
    "password_reset_confirm": "the person's own password",
    "project-create": "a new project (site staff)",
    "api-projects": "a new project (site staff)",
    "taxonomy-upload": "a new taxonomy version, shared by projects",
    "ingest-source-create": "ingest (site-wide)",
    "ingest-source-harvest": "ingest (site-wide)",
    "ingest-run-cancel": "ingest (site-wide)",
    "ingest-keyword-sets": "ingest (site-wide): a keyword file",
    "ingest-keyword-set-create": "ingest (site-wide)",
    "ingest-keyword-set-edit": "ingest (site-wide)",
    "ingest-keyword-set-preview": "ingest (site-wide): POST previews, writes nothing",
    "ingest-url-lists": "ingest (site-wide)",
    "ingest-source-detail": "ingest (site-wide)",
    "api-url-lists": "ingest (site-wide)",
    "source-list": "ingest (site-wide): POST creates a source",
    "source-harvest": "ingest (site-wide)",
    "harvest-run-cancel": "ingest (site-wide)",
    "keyword-set-list": "ingest (site-wide): POST creates a keyword set",
    "keyword-set-detail": "ingest (site-wide): PUT, PATCH, DELETE",
}
# Views with no method check: a method that is not theirs in WRITES renders the page as GET
# would (a read). Checked to write nothing with each method.
READS_ANY_METHOD = {
    "home",
    "project-detail",
    "taxonomy-list",
    "taxonomy-detail",
    "ingest-sources",
    "ingest-run-detail",
    "disputed-queue",
    "proposal-list",
    "project-stats",
    "project-agreement",
    "project-agreement-chart",
    "project-reports",
    "project-reports-confusion",
    "project-reports-distribution",
    "project-reports-volunteers",
    "project-reports-items",
    "project-report-chart",
    "project-export-job",
    "project-export-download",
    "project-label-import",
    "project-package-import",
    "interviews",
    "interview-import",
    "interview-quotes",
    "triangulation",
    "triangulation-csv",
    "interview-codebook-qdc",
    "interview-participant",
    "ranking-link",
    "interview-transcript",
    "coded-passages-csv",
    "transcripts-qdpx",
    "final-codes-csv",
    "duplicates",
    "duplicate-compare",
    # pages whose POST is in WRITES; their other methods read
    "join",
    "project-edit",
    "project-members",
    "project-exports",
    "project-label-imports",
    "interview-imports",
    "interview-transcripts",
    "project-items-from-source",
    "project-items-from-url-list",
    "project-pilot",
    "item-resolve",
    "item-discussion",
    "proposal-new",
    "taxonomy-node-edit",
}

WRITE_METHODS = ("post", "put", "patch", "delete")


def least_of(key: tuple[str, str]) -> str:
    return WRITES[key].least or RULES[key[0]].least


def allowed(key: tuple[str, str]) -> set[str]:
    """Who may make the write; the other project's admin stands where its lead does."""
    people = set(ALLOWED[least_of(key)])
    return people | {"outsider_admin"} if "outsider" in people else people


def least_person(key: tuple[str, str]) -> str:
    """The person holding just the least role a write needs."""
    return next(p for p in PEOPLE if p in allowed(key) and p not in OUTSIDERS)


# ---------------------------------------------------------------- one attempt


@dataclass
class Outcome:
    person: str
    status: int
    written: dict[str, int]
    said: str  # the page's messages and the API's detail
    successes: list[str]
    errors: list[str]
    page_text: str
    location: str = ""
    error: str = ""  # an exception the view let through (500)
    reason: str = ""  # the Concord-Reason header of a hand-out that handed nothing out

    def __str__(self) -> str:
        wrote = ", ".join(f"{t}({n})" for t, n in self.written.items()) or "nothing"
        text = f"{self.person}: {self.status}, wrote {wrote}"
        if self.error:
            text += f", raised {self.error}"
        if self.said:
            text += f", said {self.said[:200]!r}"
        return text


def send(client: Client, method: str, url: str, body: Body):
    call = getattr(client, method)
    if body.kind == "json":
        return call(url, data=json.dumps(body.data), content_type="application/json")
    if body.kind == "form":
        return call(url, data=body.data)
    return call(url)


def _text(response) -> str:
    if response.streaming:
        return ""
    content = response.content.decode("utf-8", "replace")
    if response.get("Content-Type", "").startswith("application/json"):
        return content
    content = re.sub(r"<script\b.*?</script>", " ", content, flags=re.S | re.I)
    return " ".join(html.unescape(re.sub(r"<[^>]+>", " ", content)).split())


def _detail(response) -> str:
    if response.streaming or not response.get("Content-Type", "").startswith("application/json"):
        return ""
    try:
        body = json.loads(response.content)
    except ValueError:
        return ""
    return str(body.get("detail", "")) if isinstance(body, dict) else ""


def attempt(
    w: World, key: tuple[str, str], person: str, *, archived: bool = False, slug: str = ""
) -> Outcome:
    """`person` sends the route its valid payload, in a transaction rolled back afterwards:
    state set up for them first, the project archived if asked, the URL's project slug replaced
    by `slug` if given."""
    name, method = key
    entry = WRITES[key]
    user = w.people[person]
    with transaction.atomic():
        w.archived = archived
        body = entry.payload(w, user)
        if archived:
            Project.objects.filter(pk=w.project.pk).update(archived_at=timezone.now())
        kwargs = dict(w.targets[entry.target])
        if slug:
            kwargs["slug"] = slug
        client = Client(raise_request_exception=False)
        if user is not None:
            client.force_login(user)
        with WriteWatch() as watch:
            response = send(client, method, reverse(name, kwargs=kwargs), body)
        outcome = outcome_of(person, response, watch)
        transaction.set_rollback(True)
    w.archived = False
    return outcome


def outcome_of(person: str, response, watch: WriteWatch) -> Outcome:
    messages = list(get_messages(response.wsgi_request))
    said = [str(m) for m in messages]
    detail = _detail(response)
    error = ""
    if getattr(response, "exc_info", None):
        exc = response.exc_info[1]
        error = f"{type(exc).__name__}: {exc}"
    return Outcome(
        person=person,
        status=response.status_code,
        written=watch.written,
        said="; ".join(t for t in [*said, detail] if t),
        successes=[str(m) for m in messages if m.level == levels.SUCCESS],
        errors=[str(m) for m in messages if m.level >= levels.WARNING],
        page_text=_text(response),
        location=response.get("Location", ""),
        error=error,
        reason=response.get("Concord-Reason", ""),
    )


# ---------------------------------------------------------------- judging an answer


def is_api(key: tuple[str, str]) -> bool:
    return key[0].startswith("api-")


def _says_archived(text: str) -> bool:
    """The gate's own refusal (annotation.gate.ARCHIVED), not just any mention of archiving."""
    return " ".join(str(ARCHIVED).split()) in " ".join(text.split())


def succeeded(key, o: Outcome) -> bool:
    """It worked: a success (or a redirect) without an error message, and something written."""
    if o.status >= 400 or o.error or not o.written:
        return False
    return is_api(key) or not o.errors


# The API's hand-outs ("next item", "next candidate") answer an archived project as they answer
# any project with nothing for the volunteer: 204 and the reason (the page shows its words), not
# an error; what matters is that nothing is reserved.
HANDOUTS = {("api-next-item", "post"), ("api-screening-next", "post")}


def refused_as_archived(key, o: Outcome) -> bool:
    """409 from the API saying the project is archived; a page saying it is archived and read
    only (a 409, or a message beside a redirect or the form), and no success."""
    if o.written or o.error or o.status >= 500:
        return False
    if key in HANDOUTS:
        return o.status == 204 and o.reason == "archived"
    if is_api(key):
        return o.status == 409 and _says_archived(o.said)
    return not o.successes and _says_archived(" ".join([o.said, o.page_text]))


KEPT_OUT = {401, 403, 404}


def refused_for_role(key, o: Outcome) -> bool:
    """Kept out: 401/403/404, or sent to sign in; and nothing written."""
    if o.written or o.error:
        return False
    return o.status in KEPT_OUT or (o.status == 302 and "/accounts/login/" in o.location)


# ---------------------------------------------------------------- the tests

KEYS = sorted(WRITES)


def _id(key: tuple[str, str]) -> str:
    return f"{key[0]}:{key[1].upper()}"


def _check(problems: list[str], key) -> None:
    assert not problems, f"{_id(key)}:\n  " + "\n  ".join(problems)


def _outsider_keys() -> list:
    return [k for k in KEYS if not set(OUTSIDERS) & allowed(k)]


def _below(key) -> list[str]:
    return [p for p in PEOPLE if p not in allowed(key) and p not in OUTSIDERS]


class TestEveryWrite:
    """Each write route against the gate, from one world (`shared_world`)."""

    @pytest.mark.parametrize("key", KEYS, ids=_id)
    def test_valid(self, key, world):
        """The least role's valid payload succeeds in the open project and writes: the refusals
        below are the gate's, not validation's."""
        o = attempt(world, key, least_person(key))
        _check([] if succeeded(key, o) else [f"not a successful write: {o}"], key)

    @pytest.mark.parametrize("key", KEYS, ids=_id)
    def test_archived(self, key, world):
        """In an archived project every person is refused (by role, or as archived) and nothing is
        written; restoring and exporting still work for those allowed."""
        problems = []
        for person in PEOPLE_HERE:
            o = attempt(world, key, person, archived=True)
            if person in allowed(key) and key in WHILE_ARCHIVED:
                if not succeeded(key, o):
                    problems.append(f"should still work while archived: {o}")
            elif person in allowed(key):
                if not refused_as_archived(key, o):
                    problems.append(f"not refused as archived: {o}")
            elif not (refused_for_role(key, o) or refused_as_archived(key, o)):
                problems.append(f"not refused: {o}")
        _check(problems, key)

    @pytest.mark.parametrize("key", _outsider_keys(), ids=_id)
    def test_outsiders(self, key, world):
        """A lead and an admin of another project are refused and write nothing; so is the other
        project's admin who puts this project's object under their own project's URL."""
        problems = []
        for person in OUTSIDERS:
            o = attempt(world, key, person)
            if not refused_for_role(key, o):
                problems.append(f"not refused: {o}")
        kwargs = world.targets[WRITES[key].target]
        if "slug" in kwargs and len(kwargs) > 1:  # an object of the project, beside its slug
            o = attempt(world, key, "outsider_admin", slug=world.other.slug)
            o.person = f"outsider_admin under /{world.other.slug}/"
            if not refused_for_role(key, o):
                problems.append(f"not refused: {o}")
        _check(problems, key)

    @pytest.mark.parametrize("key", [k for k in KEYS if _below(k)], ids=_id)
    def test_roles_below_the_least(self, key, world):
        problems = []
        for person in _below(key):
            o = attempt(world, key, person)
            if not refused_for_role(key, o):
                problems.append(f"not refused: {o}")
        _check(problems, key)


def test_each_write_needs_the_role_its_gate_policy_names():
    """WRITES' least role (the role matrix's, or the entry's own) is the gate's policy."""
    wrong = {
        _id(key): (least_of(key), POLICIES[entry.write].least)
        for key, entry in WRITES.items()
        if entry.write is not None and least_of(key) != POLICIES[entry.write].least
    }
    assert not wrong, f"least role here vs the gate's policy: {wrong}"


# The routes are walked in parts, so the parallel runs of `make test` share the walk.
ROUTE_PARTS = 3


@pytest.mark.slow
@pytest.mark.parametrize("part", range(ROUTE_PARTS), ids=lambda part: f"part{part + 1}")
@pytest.mark.parametrize("archived", [False, True], ids=["open", "archived"])
def test_every_write_route_is_listed(archived, part, personas, project, settings, tmp_path):
    """Every route x every method, as site staff with an empty body: a route that takes a write
    method (anything but 405), or that writes on GET, is in WRITES, SITE_WIDE_WRITES or
    READS_ANY_METHOD; and each listed write is a route that takes its method."""
    needs_postgres(connection)
    # hundreds of requests a second as one person: past the API's rate limit, which is not what
    # this walk is about (a 429 would hide whether the route takes the method)
    rates = {"burst": None, "sustained": None}
    settings.REST_FRAMEWORK = {**settings.REST_FRAMEWORK, "DEFAULT_THROTTLE_RATES": rates}
    settings.VAR_DIR = tmp_path
    objects, people = role_world(personas, project)
    if archived:
        Project.objects.filter(pk=project.pk).update(archived_at=timezone.now())
    names = url_names()
    unlisted, read_but_wrote, not_taken = [], [], []
    for name in sorted(names)[part::ROUTE_PARTS]:
        url = reverse(name, kwargs=objects[RULES[name].kwargs])
        for method in ("get", *WRITE_METHODS):
            with transaction.atomic():
                client = Client(raise_request_exception=False)
                client.force_login(people["staff"])
                with WriteWatch() as watch:
                    response = getattr(client, method)(url)
                transaction.set_rollback(True)
            written = watch.written
            taken = response.status_code != 405
            what = f"{method.upper()} {name} ({response.status_code}, wrote {written or 'nothing'})"
            if (name, method) in WRITES:
                if not taken:
                    not_taken.append(what)
                continue
            if name in SITE_WIDE_WRITES:
                continue
            if method == "get":
                if written:
                    unlisted.append(what)
                continue
            if name in READS_ANY_METHOD:
                if written:
                    read_but_wrote.append(what)
                continue
            if taken or written:
                unlisted.append(what)
    for name, _method in WRITES:
        assert name in names, f"WRITES lists {name}, which is not in the URL conf"
    for name in (*SITE_WIDE_WRITES, *READS_ANY_METHOD):
        assert name in names, f"{name} is listed here but is not in the URL conf"
    assert not unlisted, (
        "routes that take a write method (or write on GET) but are in neither WRITES (with a "
        "valid payload) nor SITE_WIDE_WRITES nor READS_ANY_METHOD:\n  " + "\n  ".join(unlisted)
    )
    assert not read_but_wrote, "listed as reads, but wrote:\n  " + "\n  ".join(read_but_wrote)
    assert not not_taken, "WRITES lists methods these routes do not take:\n  " + "\n  ".join(
        not_taken
    )


# ---------------------------------------------------------------- commands and background jobs
#
# The same writes reach a project from the shell and from the workers. Commands act as the
# operator (no role asked, the project's state is); a job queued by a person asks the gate again,
# as that person, when it runs: a project archived, or a role lost, meanwhile is not written.

PROJECT_APPS = {"annotation", "ingest", "taxonomy", "concord"}


def _labels_command(w: World, folder) -> list[str]:
    path = folder / "labels.csv"
    path.write_bytes(LABEL_FILE)
    return ["--project", w.project.slug, str(path)]


def _items_command(w: World, folder) -> list[str]:
    path = folder / "issues.jsonl"
    path.write_text(json.dumps(ISSUE_RECORD) + "\n")
    return ["--project", w.project.slug, str(path)]


def _interviews_command(w: World, folder) -> list[str]:
    path = folder / "CodeBook.csv"
    path.write_bytes(INTERVIEW_CODEBOOK)
    return ["--project", w.project.slug, str(path)]


# command -> its arguments for a valid run (files written to the folder given)
def empty_project(w: World) -> None:
    """A package goes into an empty project: the world's project becomes a new one (made in the
    attempt's transaction, rolled back with it), which the archived attempt archives."""
    w.project = Project.objects.create(name="Empty", slug="empty", taxonomy=w.project.taxonomy)
    Membership.objects.create(project=w.project, user=w.people["admin"], role=Role.ADMIN)


def _package_command(w: World, folder) -> list[str]:
    empty_project(w)
    path = folder / "package.zip"
    path.write_bytes(package_zip())
    return ["--project", w.project.slug, str(path)]


def _duplicates_command(w: World, folder) -> list[str]:
    return ["--project", w.project.slug, "--build"]


WRITE_COMMANDS: dict[str, Callable[[World, Any], list[str]]] = {
    "near_duplicates": _duplicates_command,
    "import_labels": _labels_command,
    "import_interviews": _interviews_command,
    "import_items": _items_command,
    "import_package": _package_command,
}
OTHER_COMMANDS = {
    "agreement": "reads a project (a report)",
    "triangulation": "reads a project (a report)",
    "export": "an export: reads the project, allowed while archived",
    "export_package": "an export: reads the project, allowed while archived",
    "archive_project": "an export of the whole project: reads it, allowed while archived",
    "restore_project": "a new project from an archive (site-wide); refuses a slug in use",
    "create_project": "a new project (site-wide)",
    "setup_demo": "its own demo project, created or refreshed (a development tool)",
    "harvest": "ingest (site-wide)",
    "import_keywords": "ingest (site-wide)",
    "import_urls": "ingest (site-wide)",
    "load_taxonomy": "a new taxonomy version, shared by projects",
}


def _label_job(w: World) -> int:
    from annotation.projects.label_imports import Upload, label_import_queue

    queued = label_import_queue(
        project=w.project,
        user=w.people["admin"],
        uploads=[Upload("labels.csv", LABEL_FILE)],
        refuse_repeats=False,
        enqueue=False,
    )
    return queued.job.pk


def _label_job_run(job_id: int) -> str:
    from annotation.models import LabelImportJob
    from annotation.projects.label_imports import label_import_run

    label_import_run(job_id=job_id)
    job = LabelImportJob.objects.get(pk=job_id)
    return " ".join([job.status, job.error, json.dumps(job.report, ensure_ascii=False)])


def _item_job(w: World) -> int:
    from annotation.projects.item_imports import item_import_start

    queued = item_import_start(
        project=w.project,
        user=w.people["admin"],
        name="issues.jsonl",
        blocks=[json.dumps(ISSUE_RECORD).encode() + b"\n"],
        enqueue=False,
    )
    return queued.job.pk


def _item_job_run(job_id: int) -> str:
    from annotation.models import ItemImport
    from annotation.projects.item_imports import item_import_run

    item_import_run(job_id=job_id)
    job = ItemImport.objects.get(pk=job_id)
    return " ".join([job.status, job.error, json.dumps(job.problems, ensure_ascii=False)])


def _interview_job(w: World) -> int:
    from annotation.interviews.jobs import interview_import_queue
    from annotation.interviews.services import InterviewFile

    codebook = InterviewFile("CodeBook.csv", INTERVIEW_CODEBOOK)
    queued = interview_import_queue(
        project=w.project, user=w.people["admin"], files={"codebook": codebook}, enqueue=False
    )
    return queued.job.pk


def _interview_job_run(job_id: int) -> str:
    from annotation.interviews.jobs import interview_import_run
    from taxonomy.interviews.models import InterviewImportJob

    interview_import_run(job_id=job_id)
    job = InterviewImportJob.objects.get(pk=job_id)
    return " ".join([job.status, job.error, json.dumps(job.report, ensure_ascii=False)])


def _package_job(w: World) -> int:
    from annotation.package.jobs import package_import_queue

    empty_project(w)
    queued = package_import_queue(
        project=w.project,
        user=w.people["admin"],
        name="package.zip",
        data=package_zip(),
        enqueue=False,
    )
    return queued.job.pk


def _package_job_run(job_id: int) -> str:
    from annotation.models import PackageImport
    from annotation.package.jobs import package_import_run

    package_import_run(job_id=job_id)
    job = PackageImport.objects.get(pk=job_id)
    return " ".join([job.status, job.error, json.dumps(job.report, ensure_ascii=False)])


def _duplicate_job(w: World) -> int:
    from annotation.duplicates.index import duplicate_index_queue

    return duplicate_index_queue(project=w.project, actor=w.people["admin"]).pk


def _duplicate_job_run(job_id: int) -> str:
    from annotation.duplicates.index import duplicate_index_run

    job = duplicate_index_run(job_id=job_id)
    assert job is not None
    return " ".join([job.status, job.error])


@dataclass(frozen=True)
class Job:
    queue: Callable[[World], int]  # queued by the project's admin in the open project: the id
    run: Callable[[int], str]  # runs it as the worker would; what the job row says after
    table: str  # its own row's table: its bookkeeping (claimed, failed) is not the project's
    least: str = Role.ADMIN  # the role its gate policy asks (named in the refusal)


# Celery task -> how to queue and run it
WRITE_JOBS: dict[str, Job] = {
    "annotation.tasks.label_import_run": Job(
        _label_job, _label_job_run, "annotation_labelimportjob"
    ),
    "annotation.tasks.item_import_run": Job(_item_job, _item_job_run, "annotation_itemimport"),
    "annotation.tasks.package_import_run": Job(
        _package_job, _package_job_run, "annotation_packageimport"
    ),
    "annotation.tasks.interview_import_run": Job(
        _interview_job, _interview_job_run, "interviews_interviewimportjob", Role.LEAD
    ),
    "annotation.duplicates.tasks.duplicate_index_run": Job(
        _duplicate_job, _duplicate_job_run, "annotation_duplicateindex", Role.LEAD
    ),
}
OTHER_TASKS = {
    "concord.health": "the workers' health probe: writes nothing",
    "concord.password_reset_mail": "sends a password-reset e-mail: no project write",
    "annotation.tasks.export_job_run": "an export: reads the project, allowed while archived",
    "annotation.tasks.export_files_expire": "removes expired export files",
    "annotation.tasks.figures_compact_crowded": "sums the agreement tallies' rows: no change",
    "annotation.tasks.figures_rebuild": "rebuilds the tallies from the labels, as a read does",
    "annotation.tasks.jobs_resume_stale": "sends stale jobs again (they ask the gate when run)",
    "ingest.tasks.harvest_continue": "ingest (site-wide)",
    "ingest.tasks.harvest_resume_stale": "ingest (site-wide)",
    "ingest.tasks.details_resume_stale": "ingest (site-wide)",
    "ingest.tasks.issues_fetch_details": "ingest (site-wide)",
}


def _commands() -> set[str]:
    from django.core.management import get_commands

    return {name for name, app in get_commands().items() if app in PROJECT_APPS}


def _tasks() -> set[str]:
    from concord import celery_app

    celery_app.loader.import_default_modules()
    return {name for name in celery_app.tasks if not name.startswith("celery.")}


def test_every_command_and_task_is_listed():
    """A new command or task that may write a project fails here until it is tested below."""
    commands = _commands()
    assert commands == set(WRITE_COMMANDS) | set(OTHER_COMMANDS), (
        f"commands not listed: {sorted(commands - set(WRITE_COMMANDS) - set(OTHER_COMMANDS))}; "
        f"listed but gone: {sorted((set(WRITE_COMMANDS) | set(OTHER_COMMANDS)) - commands)}"
    )
    tasks = _tasks()
    assert tasks == set(WRITE_JOBS) | set(OTHER_TASKS), (
        f"tasks not listed: {sorted(tasks - set(WRITE_JOBS) - set(OTHER_TASKS))}; "
        f"listed but gone: {sorted((set(WRITE_JOBS) | set(OTHER_TASKS)) - tasks)}"
    )


def run_command(w: World, name: str, folder, *, archived: bool) -> tuple[dict[str, int], str]:
    """The command's writes and everything it said (output, or the error it ended with)."""
    from io import StringIO

    from django.core.management import call_command

    out = StringIO()
    with transaction.atomic():
        args = WRITE_COMMANDS[name](w, folder)
        if archived:
            Project.objects.filter(pk=w.project.pk).update(archived_at=timezone.now())
        with WriteWatch() as watch:
            try:
                call_command(name, *args, stdout=out, stderr=out)
            except Exception as exc:  # a refusal may end the command
                out.write(f"\n{type(exc).__name__}: {exc}")
        transaction.set_rollback(True)
    return watch.written, out.getvalue()


def run_job(w: World, task: str, *, then: str) -> tuple[dict[str, int], str]:
    """Queue the job in the open project, then (`then`) archive the project, demote the admin
    who queued it to volunteer, or nothing; run it. Its writes beyond its own row, and what its
    row says."""
    job = WRITE_JOBS[task]
    with transaction.atomic():
        job_id = job.queue(w)
        if then == "archived":
            Project.objects.filter(pk=w.project.pk).update(archived_at=timezone.now())
        elif then == "role lost":
            Membership.objects.filter(project=w.project, user=w.people["admin"]).update(
                role=Role.VOLUNTEER
            )
        with WriteWatch() as watch:
            said = job.run(job_id)
        transaction.set_rollback(True)
    return {t: n for t, n in watch.written.items() if t != job.table}, said


class TestCommandsAndJobs:
    """Each write command and job against the gate, from one world (`shared_world`)."""

    @pytest.mark.parametrize("name", sorted(WRITE_COMMANDS))
    def test_command(self, name, world, tmp_path):
        """In the open project the command writes; in an archived one it says so and writes
        nothing."""
        written, said = run_command(world, name, tmp_path, archived=False)
        assert written, (
            f"{name} wrote nothing in the open project (the arguments are wrong): {said}"
        )
        written, said = run_command(world, name, tmp_path, archived=True)
        said = said[-300:]
        assert not written, f"{name} wrote {written} in an archived project; it said {said!r}"
        assert _says_archived(said), f"{name} in an archived project did not say so: {said!r}"

    @pytest.mark.parametrize("task", sorted(WRITE_JOBS))
    def test_job(self, task, world):
        written, said = run_job(world, task, then="")
        assert written, f"{task} wrote nothing in the open project (the job is wrong): {said}"
        problems = []
        written, said = run_job(world, task, then="archived")
        if written or not _says_archived(said):
            problems.append(f"project archived after queueing: wrote {written}, job says {said!r}")
        written, said = run_job(world, task, then="role lost")
        if written or f"needs the {Role(WRITE_JOBS[task].least).label.lower()} role" not in said:
            problems.append(
                f"queued by an admin now a volunteer: wrote {written}, job says {said!r}"
            )
        assert not problems, f"{task}:\n  " + "\n  ".join(problems)
