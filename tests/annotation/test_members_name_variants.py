"""Adding a list of people compares names as accounts store them (NFKC, then without case): a
full-width or otherwise compatible spelling of a taken name is that name, answered like any taken
name, never a second account nor a server error."""

from __future__ import annotations

import pytest
from django.contrib.auth import get_user_model
from django.test import Client
from rest_framework.test import APIClient

from annotation.models import Membership
from tests.factories import UserFactory

User = get_user_model()

FULL_WIDTH_VOLUNTEER_A = "".join(chr(ord(c) + 0xFEE0) if c != "_" else c for c in "volunteer_a")
# (taken, typed): full-width letters, as a Chinese input method types them; a full-width digit;
# a superscript digit, in another case.
VARIANTS = [("chen", "\uff43\uff48\uff45\uff4e"), ("wang1", "wang\uff11"), ("li2", "LI\u00b2")]


@pytest.mark.parametrize(("taken", "typed"), VARIANTS)
def test_the_members_page_answers_a_variant_of_a_taken_name_as_taken(
    personas, project, taken, typed
):
    UserFactory(username=taken)
    client = Client(raise_request_exception=False)
    client.force_login(personas["admin"])
    page = client.post(
        f"/projects/{project.slug}/members/", {"people": f"{typed}\nnew_person\n", "role": "lead"}
    )
    assert page.status_code == 200, page.content[:300]
    assert "cannot be created; send an invitation link" in page.content.decode()
    assert User.objects.filter(username__iexact=taken).count() == 1
    assert not Membership.objects.filter(project=project, user__username=taken).exists()
    assert Membership.objects.filter(project=project, user__username="new_person").exists()


@pytest.mark.parametrize(("taken", "typed"), VARIANTS)
def test_the_members_api_answers_a_variant_of_a_taken_name_as_taken(
    personas, project, taken, typed
):
    UserFactory(username=taken)
    api = APIClient()
    api.force_authenticate(personas["admin"])
    answer = api.post(f"/api/projects/{project.slug}/members/", {"people": [typed]}, format="json")
    assert answer.status_code == 201, answer.content[:300]
    (added,) = answer.json()
    assert (added["outcome"], added["password"]) == ("not_created", None)
    assert User.objects.filter(username__iexact=taken).count() == 1


def test_a_variant_of_a_members_name_is_that_member(personas, project):
    api = APIClient()
    api.force_authenticate(personas["admin"])
    answer = api.post(
        f"/api/projects/{project.slug}/members/",
        {"people": [FULL_WIDTH_VOLUNTEER_A]},
        format="json",
    )
    assert answer.status_code == 201
    assert answer.json()[0]["outcome"] == "already_member"
