"""Every URL in the URL conf x every kind of person: anonymous, a member of another project, a
volunteer, a lead, a project admin and a site admin (staff). The rules are a table; a URL without
a rule fails the test, so a new endpoint cannot ship without deciding who may use it.

The check is on access only: a person allowed in may still get 400 (an empty POST) or 405 (GET on
a POST-only action), but never 401/403/404; a person kept out gets 401/403/404 or a redirect to the
sign-in page, and nothing is changed.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass
from datetime import date

import pytest
from django.urls import URLPattern, URLResolver, get_resolver, reverse

from ingest.models import HarvestRun, KeywordSet, Source
from tests.conftest import rows_only

PEOPLE = ("anonymous", "outsider", "volunteer", "lead", "admin", "staff")
# Who gets in, by the least role a URL needs. Project roles rank volunteer < lead < admin; staff
# (a site admin) may do everything. "outsider" is a lead of another project: project URLs answer
# 404 to them, so a project's existence is not revealed.
ALLOWED = {
    "public": set(PEOPLE),
    "signed-in": {"outsider", "volunteer", "lead", "admin", "staff"},
    "volunteer": {"volunteer", "lead", "admin", "staff"},
    "lead": {"lead", "admin", "staff"},
    "admin": {"admin", "staff"},
    "staff": {"staff"},
    # taxonomy curation: a lead or admin of any project using the taxonomy (the outsider leads
    # another project on the same taxonomy), and staff
    "curator": {"outsider", "lead", "admin", "staff"},
}


@dataclass(frozen=True)
class Rule:
    least: str  # a key of ALLOWED
    method: str = "get"
    kwargs: str = ""  # which object fills the URL: see `url_kwargs`


RULES: dict[str, Rule] = {
    "login": Rule("public"),
    "logout": Rule("public", method="post"),
    "set_language": Rule("public", method="post"),
    "api-token": Rule("signed-in"),
    "single-keys": Rule("signed-in", method="post"),
    "schema": Rule("signed-in"),
    "api-docs": Rule("signed-in"),
    "api-root": Rule("signed-in"),
    # taxonomy: readable by everyone signed in
    "taxonomy-list": Rule("signed-in"),
    "taxonomy-detail": Rule("signed-in", kwargs="taxonomy"),
    "api-taxonomy-list": Rule("signed-in"),
    "api-taxonomy-detail": Rule("signed-in", kwargs="taxonomy"),
    "api-taxonomy-tree": Rule("signed-in", kwargs="taxonomy"),
    "node-list": Rule("signed-in"),
    "node-detail": Rule("signed-in", kwargs="node"),
    # projects
    "home": Rule("signed-in"),
    "project-detail": Rule("volunteer", kwargs="project"),
    "project-items-from-source": Rule("lead", kwargs="project"),
    "project-create": Rule("staff"),
    "project-edit": Rule("admin", kwargs="project"),
    "project-archive": Rule("admin", method="post", kwargs="project"),
    "api-projects": Rule("signed-in"),
    "api-project": Rule("volunteer", kwargs="project"),
    "api-project-archive": Rule("admin", method="post", kwargs="project"),
    # members (annotation/projects/member_views.py, api.py): the project's admins; the join page
    # an invitation link opens is public (it signs people up); password pages are Django's
    "project-members": Rule("admin", kwargs="project"),
    "project-invite": Rule("admin", method="post", kwargs="project"),
    "project-member-change": Rule("admin", method="post", kwargs="membership"),
    "api-members": Rule("admin", kwargs="project"),
    "api-member": Rule("admin", method="patch", kwargs="membership"),
    "api-invitations": Rule("admin", method="post", kwargs="project"),
    "join": Rule("public", kwargs="invitation"),
    "taxonomy-upload": Rule("curator"),
    # a node of the taxonomy as loaded is shared by every project using it: only staff change it
    # (a project's own nodes, added through proposals, are its leads': tests/test_write_gate.py)
    "taxonomy-node-edit": Rule("staff", kwargs="node"),
    "taxonomy-node-retire": Rule("staff", method="post", kwargs="node"),
    "project-label-imports": Rule("admin", kwargs="project"),
    "project-label-import": Rule("admin", kwargs="label_import"),
    "api-label-imports": Rule("admin", method="post", kwargs="project"),
    "api-label-import": Rule("admin", kwargs="label_import"),
    # the replication package's import (issue 28): admins
    "project-package-imports": Rule("admin", kwargs="project"),
    "project-package-import": Rule("admin", kwargs="package_import"),
    "api-package-imports": Rule("admin", method="post", kwargs="project"),
    "api-package-import": Rule("admin", kwargs="package_import"),
    # interviews (annotation/interviews/): leads and admins
    "interviews": Rule("lead", kwargs="project"),
    "interview-imports": Rule("lead", kwargs="project"),
    "interview-import": Rule("lead", kwargs="interview_import"),
    "interview-code-map": Rule("lead", method="post", kwargs="project"),
    "interview-quotes": Rule("lead", kwargs="project"),
    "api-interview-imports": Rule("lead", method="post", kwargs="project"),
    "api-interview-import": Rule("lead", kwargs="interview_import"),
    "api-interview-quotes": Rule("lead", kwargs="project"),
    "api-interview-code-map": Rule("lead", method="post", kwargs="project"),
    "triangulation": Rule("lead", kwargs="project"),
    "triangulation-csv": Rule("lead", kwargs="project"),
    "api-triangulation": Rule("lead", kwargs="project"),
    "interview-participant": Rule("lead", kwargs="participant"),
    "interview-rankings-import": Rule("lead", method="post", kwargs="project"),
    "api-participant-ranking": Rule("lead", kwargs="participant"),
    "api-rankings-import": Rule("lead", method="post", kwargs="project"),
    # a participant's one-time ranking link is public: they need no account
    "ranking-link": Rule("public", kwargs="ranking_link"),
    "interview-codebook-qdc": Rule("lead", kwargs="project"),
    # coding transcripts: every member codes (blind); leads upload, assign and export
    "interview-transcripts": Rule("volunteer", kwargs="project"),
    "interview-transcript": Rule("volunteer", kwargs="transcript"),
    "transcript-join": Rule("volunteer", method="post", kwargs="transcript"),
    "transcript-assign": Rule("lead", method="post", kwargs="transcript"),
    "transcript-code": Rule("volunteer", method="post", kwargs="transcript"),
    "transcript-uncode": Rule("volunteer", method="post", kwargs="transcript"),
    "transcript-done": Rule("volunteer", method="post", kwargs="transcript"),
    "coded-passages-csv": Rule("lead", kwargs="project"),
    "transcripts-qdpx": Rule("lead", kwargs="project"),
    "transcript-settle": Rule("lead", method="post", kwargs="transcript"),
    "final-codes-csv": Rule("lead", kwargs="project"),
    "api-interview-transcript": Rule("volunteer", kwargs="transcript"),
    "api-transcript-passages": Rule("volunteer", method="post", kwargs="transcript"),
    # near-duplicate issues (annotation/duplicates/): the lead's queue, pairs and index; an item's
    # duplicates for every member (volunteers see only revealed ones: tests/test_blindness.py)
    "duplicates": Rule("lead", kwargs="project"),
    "duplicate-rebuild": Rule("lead", method="post", kwargs="project"),
    "duplicate-compare": Rule("lead", kwargs="pair"),
    "not-duplicate": Rule("lead", method="post", kwargs="pair"),
    "api-duplicates": Rule("lead", kwargs="project"),
    "api-duplicate-index": Rule("lead", kwargs="project"),
    "api-not-duplicate": Rule("lead", method="post", kwargs="pair"),
    "api-item-duplicates": Rule("volunteer", kwargs="item"),
    "password_change": Rule("signed-in"),
    "password_change_done": Rule("signed-in"),
    "password_reset": Rule("public"),
    "password_reset_done": Rule("public"),
    "password_reset_confirm": Rule("public", kwargs="password_reset"),
    "password_reset_complete": Rule("public"),
    "project-agreement": Rule("lead", kwargs="project"),
    "project-agreement-chart": Rule("lead", kwargs="project"),
    "api-project-agreement": Rule("lead", kwargs="project"),
    # reports (annotation/reporting/urls.py, annotation/reporting/api_urls.py): leads and admins
    "project-reports": Rule("lead", kwargs="project"),
    "project-reports-confusion": Rule("lead", kwargs="project"),
    "project-reports-distribution": Rule("lead", kwargs="project"),
    "project-reports-volunteers": Rule("lead", kwargs="project"),
    "project-reports-items": Rule("lead", kwargs="project"),
    "project-report-chart": Rule("lead", kwargs="report_chart"),
    "api-report-agreement": Rule("lead", kwargs="project"),
    "api-report-confusion": Rule("lead", kwargs="project"),
    "api-report-distribution": Rule("lead", kwargs="project"),
    # exports: project admins and staff only
    "project-exports": Rule("admin", kwargs="project"),
    "project-export-job": Rule("admin", kwargs="export_job"),
    "project-export-download": Rule("admin", kwargs="export_job"),
    "api-project-export": Rule("admin", kwargs="export"),
    "api-project-export-jobs": Rule("admin", method="post", kwargs="project"),
    "api-project-export-job": Rule("admin", kwargs="export_job"),
    "api-project-export-file": Rule("admin", kwargs="export_job"),
    # items with their text from a JSON/JSONL file: project admins and staff
    "api-item-imports": Rule("admin", kwargs="project"),
    "api-item-import": Rule("admin", kwargs="item_import"),
    # a URL list's issues as items (it creates issues too): admins; a source's: leads, as the page
    "project-items-from-url-list": Rule("admin", kwargs="project"),
    "api-items-from-url-list": Rule("admin", method="post", kwargs="project"),
    "api-items-from-source": Rule("lead", method="post", kwargs="project"),
    # the lead's work (annotation/review/urls.py, annotation/review/api_urls.py); discussion,
    # proposals, pilot examples and own statistics are open to every member
    "disputed-queue": Rule("lead", kwargs="project"),
    "item-resolve": Rule("lead", kwargs="item"),
    "item-reopen": Rule("lead", method="post", kwargs="item"),
    "item-discussion": Rule("volunteer", kwargs="item"),
    "project-pilot": Rule("volunteer", kwargs="project"),
    "proposal-list": Rule("volunteer", kwargs="project"),
    "proposal-new": Rule("volunteer", kwargs="project"),
    "proposal-vote": Rule("volunteer", method="post", kwargs="proposal"),
    "proposal-add-node": Rule("lead", method="post", kwargs="proposal"),
    "proposal-send-back": Rule("lead", method="post", kwargs="proposal"),
    "project-stats": Rule("volunteer", kwargs="project"),
    "api-disputed": Rule("lead", kwargs="project"),
    "api-item-review": Rule("lead", kwargs="item"),
    "api-item-resolve": Rule("lead", method="post", kwargs="item"),
    "api-item-reopen": Rule("lead", method="post", kwargs="item"),
    "api-item-posts": Rule("volunteer", kwargs="item"),
    "api-pilot": Rule("lead", method="post", kwargs="project"),
    "api-proposals": Rule("volunteer", kwargs="project"),
    "api-proposal-vote": Rule("volunteer", method="post", kwargs="proposal"),
    "api-proposal-add-node": Rule("lead", method="post", kwargs="proposal"),
    "api-proposal-send-back": Rule("lead", method="post", kwargs="proposal"),
    "api-stats": Rule("volunteer", kwargs="project"),
    # the volunteer's work (annotation/labeling/, annotation/screening/: urls.py, api_urls.py); an
    # empty form is refused with 400 (or a message and a redirect) once access is granted
    "label-next": Rule("volunteer", kwargs="project"),
    "label-categories": Rule("volunteer", kwargs="project"),
    "label-item": Rule("volunteer", method="post", kwargs="item"),
    "label-skip": Rule("volunteer", method="post", kwargs="item"),
    "label-unskip": Rule("volunteer", method="post", kwargs="item"),
    "my-labels": Rule("volunteer", kwargs="project"),
    "screen-next": Rule("volunteer", kwargs="project"),
    "screen-vote": Rule("volunteer", method="post", kwargs="item"),
    "screening-disputes": Rule("lead", kwargs="project"),
    "screening-decide": Rule("lead", method="post", kwargs="item"),
    "api-next-item": Rule("volunteer", method="post", kwargs="project"),
    "api-annotation": Rule("volunteer", method="put", kwargs="item"),
    # a skip too is of an item handed out: the world's candidate is held by each
    "api-skip": Rule("volunteer", method="post", kwargs="candidate"),
    "api-my-annotations": Rule("volunteer", kwargs="project"),
    "api-screening-next": Rule("volunteer", method="post", kwargs="project"),
    # a vote goes only on a candidate handed to the voter: the world's candidate is held by each
    "api-screening-vote": Rule("volunteer", method="post", kwargs="candidate"),
    "api-screening-decision": Rule("lead", method="post", kwargs="item"),
    # ingest: sources and keyword sets are site-wide, so only staff
    "ingest-sources": Rule("staff"),
    "ingest-source-create": Rule("staff"),
    "ingest-source-detail": Rule("staff", kwargs="source"),
    "ingest-source-harvest": Rule("staff", method="post", kwargs="source"),
    "ingest-run-detail": Rule("staff", kwargs="run"),
    "ingest-run-cancel": Rule("staff", method="post", kwargs="run"),
    "ingest-keyword-sets": Rule("staff"),
    "ingest-keyword-set-create": Rule("staff"),
    "ingest-keyword-set-edit": Rule("staff", kwargs="keyword_set"),
    "ingest-keyword-set-preview": Rule("staff", kwargs="keyword_set"),
    "ingest-url-lists": Rule("staff"),
    "api-url-lists": Rule("staff", method="post"),
    "source-list": Rule("staff"),
    "source-detail": Rule("staff", kwargs="source"),
    "source-harvest": Rule("staff", method="post", kwargs="source"),
    "harvest-run-list": Rule("staff"),
    "harvest-run-detail": Rule("staff", kwargs="run"),
    "harvest-run-cancel": Rule("staff", method="post", kwargs="run"),
    "keyword-set-list": Rule("staff"),
    "keyword-set-detail": Rule("staff", kwargs="keyword_set"),
}
UNNAMED = {"admin/login/"}  # the throttled sign-in page again, under the admin's path


def url_names() -> set[str]:
    """Every named URL outside the Django admin (which checks staff itself)."""
    names = set()

    def walk(patterns, prefix=""):
        for pattern in patterns:
            if isinstance(pattern, URLResolver):
                if pattern.namespace != "admin":
                    walk(pattern.url_patterns, prefix + str(pattern.pattern))
            elif isinstance(pattern, URLPattern):
                if pattern.name:
                    names.add(pattern.name)
                else:
                    assert prefix + str(pattern.pattern) in UNNAMED, f"unnamed URL {pattern}"

    walk(get_resolver().url_patterns)
    return names


def test_every_url_has_a_rule():
    missing = url_names() - set(RULES)
    assert not missing, f"URLs without an access rule in tests/test_role_matrix.py: {missing}"
    assert not set(RULES) - url_names(), "rules for URLs that no longer exist"


def finished_export(project) -> int:
    """A done export job with its file (under VAR_DIR), so its download URL has something to
    serve."""
    from annotation.reporting.export_jobs import export_job_run, export_job_start
    from annotation.reporting.exports import export_options

    options = export_options(project, format="study")
    job = export_job_start(project=project, user=None, options=options, enqueue=False)
    return export_job_run(job_id=job.pk).pk


def handed_candidate(project, people) -> int:
    """A screening candidate reserved for each person (a vote or a skip needs the hand-out)."""
    from datetime import timedelta

    from django.utils import timezone

    from annotation.models import Item, Reservation, Stage
    from tests.factories import IssueFactory

    item = Item.objects.create(project=project, issue=IssueFactory(), stage=Stage.CANDIDATE)
    until = timezone.now() + timedelta(minutes=30)
    for person in people.values():
        if person is not None:
            Reservation.objects.create(item=item, volunteer=person, expires_at=until)
    return item.pk


def item_import(project) -> int:
    from annotation.models import ItemImport

    return ItemImport.objects.create(project=project, name="issues.jsonl").pk


def disputed_item(project, personas) -> int:
    """An item whose three labels disagree (revealed, so volunteers may discuss it)."""
    from tests.annotation.lead_helpers import labeled_item
    from tests.factories import MembershipFactory, UserFactory

    third = UserFactory(username="volunteer_c")
    MembershipFactory(project=project, user=third)
    people = [personas["volunteer_a"], personas["volunteer_b"], third]
    return labeled_item(project, people, ["C.1", "C.1", "C.2"]).pk


def open_proposal(project, personas) -> int:
    from annotation.review.proposals import proposal_create

    parent = project.taxonomy.nodes.get(code="C")
    return proposal_create(
        project=project, proposer=personas["lead"], parent=parent, name="Proposed"
    ).pk


def invitation_token(project, personas) -> str:
    from annotation.projects.members import invitation_create

    return invitation_create(project=project, inviter=personas["admin"])[1]


def label_import(project, personas) -> int:
    """A finished label import of one small file, so its page has a report to show."""
    from annotation.projects.label_imports import Upload, label_import_queue, label_import_run

    text = b"Issue_URL,Label1,Final_Label\nhttps://github.com/NVIDIA/Megatron-LM/issues/9,C.1,C.1\n"
    queued = label_import_queue(
        project=project,
        user=personas["admin"],
        uploads=[Upload("a.csv", text)],
        refuse_repeats=False,
        enqueue=False,
    )
    return label_import_run(job_id=queued.job.pk).pk


def package_import(project) -> int:
    from annotation.models import PackageImport

    return PackageImport.objects.create(project=project, name="package.zip", status="done").pk


def interview_participant(project, creator) -> tuple[int, str]:
    """Participant U1 of the project and a one-time ranking link for them (its token)."""
    from annotation.interviews.priorities import ranking_link_create
    from taxonomy.interviews.models import Participant

    participant = Participant.objects.create(project=project, code="U1", kind="user")
    return participant.pk, ranking_link_create(participant=participant, creator=creator)[1]


def interview_transcript(project) -> dict:
    """A transcript of the project to code: its URL kwargs."""
    from taxonomy.interviews.models import Transcript

    text = "Q: What broke?\nA: The loss went flat after the upgrade.\n"
    transcript = Transcript.objects.create(project=project, name="U1.txt", text=text)
    return {"slug": project.slug, "pk": transcript.pk}


def interview_import(project) -> int:
    from taxonomy.interviews.models import InterviewImportJob

    return InterviewImportJob.objects.create(project=project, status="done").pk


def duplicate_pair(project) -> dict:
    """Two items the near-duplicate index paired: the URL kwargs of the pair."""
    from annotation.models import DuplicatePair, Item, Stage
    from tests.factories import IssueFactory

    a, b = (
        Item.objects.create(project=project, issue=IssueFactory(), stage=Stage.OPEN)
        for _ in range(2)
    )
    DuplicatePair.objects.create(project=project, item_a=a, item_b=b, similarity=0.9)
    return {"slug": project.slug, "a": a.pk, "b": b.pk}


def role_world(personas, project) -> tuple[dict, dict]:
    """(objects, people): the kwargs filling each Rule's URL, and each of PEOPLE signed in (None
    for anonymous). Shared with the hostile-input tests and the form fuzzer. Files (a finished
    export's) go under VAR_DIR: set it to a directory of the test's own first."""
    from tests.factories import UserFactory

    source = Source.objects.create(
        host="github",
        owner="NVIDIA",
        repo="Megatron-LM",
        created_from=date(2024, 1, 1),
        created_until=date(2024, 12, 31),
    )
    run = HarvestRun.objects.create(source=source, status="done", cursor={"phase": "done"})
    objects = {
        "project": {"slug": project.slug},
        "taxonomy": {"pk": project.taxonomy_id},
        "node": {"pk": project.taxonomy.nodes.first().pk},
        "source": {"pk": source.pk},
        "run": {"pk": run.pk},
        "keyword_set": {"pk": KeywordSet.objects.create(name="pytorch", keywords=["llm"]).pk},
        "export": {"slug": project.slug, "export_format": "study"},
        "export_job": {"slug": project.slug, "pk": finished_export(project)},
        "item": {"slug": project.slug, "item_id": disputed_item(project, personas)},
        "proposal": {"slug": project.slug, "pk": open_proposal(project, personas)},
        "report_chart": {"slug": project.slug, "name": "confusion"},
        "item_import": {"slug": project.slug, "pk": item_import(project)},
        "membership": {
            "slug": project.slug,
            "pk": project.memberships.get(user=personas["volunteer_b"]).pk,
        },
        "invitation": {"token": invitation_token(project, personas)},
        "label_import": {"slug": project.slug, "pk": label_import(project, personas)},
        "interview_import": {"slug": project.slug, "pk": interview_import(project)},
        "package_import": {"slug": project.slug, "pk": package_import(project)},
        "pair": duplicate_pair(project),
        "password_reset": {"uidb64": "MQ", "token": "set-password"},
        "": {},
    }
    people = {
        "anonymous": None,
        "outsider": personas["outsider"],
        "volunteer": personas["volunteer_a"],
        "lead": personas["lead"],
        "admin": personas["admin"],
        "staff": UserFactory(username="site-admin", is_staff=True, is_superuser=True),
    }
    objects["candidate"] = {"slug": project.slug, "item_id": handed_candidate(project, people)}
    participant, ranking_token = interview_participant(project, personas["lead"])
    objects["participant"] = {"slug": project.slug, "pk": participant}
    objects["ranking_link"] = {"token": ranking_token}
    objects["transcript"] = interview_transcript(project)
    return objects, people


KEPT_OUT = {401, 403, 404}


class TestRoleMatrix:
    """One world for the class's tests (`class_rows`); each test's requests are rolled back."""

    @pytest.fixture(scope="class")
    @rows_only
    def shared_world(self, class_rows):
        project, personas = class_rows
        return role_world(personas, project)

    @pytest.fixture
    def world(self, shared_world, db):
        return copy.deepcopy(shared_world)

    @pytest.mark.parametrize("name", sorted(RULES))
    def test_role_matrix(self, name, world, client):
        objects, people = world
        rule = RULES[name]
        url = reverse(name, kwargs=objects[rule.kwargs])
        for person in PEOPLE:
            client.logout()
            if people[person] is not None:
                client.force_login(people[person])
            response = getattr(client, rule.method)(url)
            signed_in_page = response.status_code == 302 and "/accounts/login/" in response.get(
                "Location", ""
            )
            kept_out = response.status_code in KEPT_OUT or signed_in_page
            assert response.status_code < 500, f"{person} on {name}: {response.status_code}"
            if rule.least == "public":
                continue  # signing in and out: their answer (a redirect to sign-in) is the point
            if person in ALLOWED[rule.least]:
                assert not kept_out, f"{person} kept out of {name} ({response.status_code})"
            else:
                assert kept_out, f"{person} let into {name} ({response.status_code})"
