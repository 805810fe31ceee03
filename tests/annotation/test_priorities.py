"""Practitioner priorities (issue 27): each participant's top 3 categories per issue type, filled
in by a lead, sent by the participant through a one-time link (no account, on a phone), or
imported as CSV; refusals name what is wrong."""

from __future__ import annotations

import re

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client
from django.utils import timezone
from rest_framework.test import APIClient

from annotation.gate import OPERATOR
from annotation.interviews.priorities import (
    participant_rankings,
    ranking_link_create,
    ranking_save,
    rankings_import,
)
from annotation.models import Membership, Project, Role
from annotation.projects.importers import ImportFailed
from concord.errors import ConcordError
from taxonomy.interviews.models import Participant, Ranking
from tests.annotation.test_interviews import study_import

PHONE = {"HTTP_USER_AGENT": "Mozilla/5.0 (iPhone; CPU iPhone OS 17_0 like Mac OS X) Mobile"}


@pytest.fixture
def study(project):
    study_import(project)
    return project


def _u1(project) -> Participant:
    return Participant.objects.get(project=project, code="U1")


def test_a_lead_fills_in_a_ranking_on_the_participant_page(client, personas, study):
    client.force_login(personas["lead"])
    u1 = _u1(study)
    url = f"/projects/{study.slug}/interviews/participants/{u1.pk}/"
    page = client.get(url).content.decode()
    assert 'name="rank-C-1"' in page
    assert 'name="rank-A-3"' in page
    response = client.post(
        url, {"action": "save", "rank-C-1": "C.4", "rank-C-2": "C.9", "rank-A-1": "A.2"}
    )
    assert response.status_code == 302
    assert participant_rankings(u1) == {"A": ["A.2"], "C": ["C.4", "C.9"]}
    client.post(url, {"action": "save", "rank-C-1": "C.1"})  # replaces per type
    assert participant_rankings(u1) == {"C": ["C.1"]}


def test_a_ranking_refuses_other_types_themes_and_repeats(study):
    u1 = _u1(study)
    with pytest.raises(ConcordError, match=r"A\.1 is no category of Bug"):
        ranking_save(participant=u1, actor=OPERATOR, choices={"C": ["A.1"]})
    with pytest.raises(ConcordError, match="Each category may be ranked once"):
        ranking_save(participant=u1, actor=OPERATOR, choices={"C": ["C.1", "C.1"]})
    with pytest.raises(ConcordError, match="at most 3"):
        ranking_save(participant=u1, actor=OPERATOR, choices={"C": ["C.1", "C.2", "C.3", "C.4"]})
    assert not Ranking.objects.exists()


def test_a_one_time_link_lets_the_participant_rank_on_a_phone(client, personas, study):
    client.force_login(personas["lead"])
    u1 = _u1(study)
    page = client.post(
        f"/projects/{study.slug}/interviews/participants/{u1.pk}/", {"action": "link"}
    ).content.decode()
    link = re.search(r'id="ranking-link">[^<]*<a href="([^"]+)"', page).group(1)
    path = link.split("testserver", 1)[1]
    phone = Client()  # the participant: no account
    form = phone.get(path, **PHONE).content.decode()
    assert 'name="rank-B-1"' in form
    assert study.name not in form  # the link shows categories, not the project
    done = phone.post(path, {"rank-B-1": "B.2", "rank-B-2": "B.1"}, **PHONE).content.decode()
    assert "your ranking is saved" in done
    assert participant_rankings(u1) == {"B": ["B.2", "B.1"]}
    again = phone.get(path, **PHONE)
    assert again.status_code == 410
    assert "used already" in again.content.decode()


def test_a_link_stops_working_when_the_project_is_archived_or_its_maker_loses_the_role(
    personas, study
):
    u1 = _u1(study)
    _link, token = ranking_link_create(participant=u1, creator=personas["lead"])
    Project.objects.filter(pk=study.pk).update(archived_at=timezone.now())
    page = Client().get(f"/rank/{token}/")
    assert page.status_code == 410
    assert "archived" in page.content.decode()
    Project.objects.filter(pk=study.pk).update(archived_at=None)
    Membership.objects.filter(project=study, user=personas["lead"]).update(role=Role.VOLUNTEER)
    page = Client().post(f"/rank/{token}/", {"rank-C-1": "C.4"})
    assert "no longer runs the interviews" in page.content.decode()
    assert not Ranking.objects.exists()
    assert Client().get("/rank/not-a-token/").status_code == 410


def test_rankings_import_from_csv_all_or_nothing(study):
    good = b"Participant,Rank,Category\nU1,1,C.4\nU1,2,C.9\nD2,1,A.1\n"
    assert rankings_import(project=study, actor=OPERATOR, data=good, name="r.csv") == 3
    assert participant_rankings(_u1(study)) == {"C": ["C.4", "C.9"]}
    bad = b"Participant,Rank,Category\nU1,1,C.1\nU99,1,C.4\nU2,4,C.4\nU2,1,Z.9\nU1,1,C.2\n"
    with pytest.raises(ImportFailed) as failed:
        rankings_import(project=study, actor=OPERATOR, data=bad, name="r.csv")
    said = [str(e) for e in failed.value.errors]
    assert "r.csv, line 3, column Participant: 'U99' is not a participant of this project" in said
    assert "r.csv, line 4, column Rank: '4': a rank is 1 to 3" in said
    assert "r.csv, line 5, column Category: 'Z.9' is no theme of this project's taxonomy" in said
    assert "r.csv, line 6, column Rank: U1 has a rank 1 for C already" in said
    assert participant_rankings(_u1(study)) == {"C": ["C.4", "C.9"]}  # unchanged


def test_the_overview_imports_rankings_and_the_api_reads_and_replaces_them(client, personas, study):
    client.force_login(personas["lead"])
    csv = SimpleUploadedFile("r.csv", b"Participant,Rank,Category\nU1,1,C.4\n")
    response = client.post(
        f"/projects/{study.slug}/interviews/rankings/", {"rankings": csv}, follow=True
    )
    assert "1 ranked places imported." in response.content.decode()
    api = APIClient()
    api.force_authenticate(personas["lead"])
    url = f"/api/projects/{study.slug}/interviews/participants/{_u1(study).pk}/ranking/"
    assert api.get(url).json() == {"ranking": {"C": ["C.4"]}}
    response = api.put(url, {"ranking": {"B": ["B.1", "B.3"]}}, format="json")
    assert response.json() == {"ranking": {"B": ["B.1", "B.3"], "C": ["C.4"]}}
    assert api.put(url, {"ranking": {"B": ["C.1"]}}, format="json").status_code == 400
