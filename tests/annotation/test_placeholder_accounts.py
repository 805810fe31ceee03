"""The accounts a study-label import makes for its LabelJ columns (placeholders): named so no
person can hold the name, never taken for, nor demoting or locking, an account that can sign in,
and renamed from the old `<slug>-labelJ` scheme by migration 0013."""

from __future__ import annotations

import importlib

import pytest
from django.apps import apps
from django.contrib.auth import get_user_model

from annotation.models import Annotation, Membership, Role
from annotation.projects.importers import (
    ImportFailed,
    placeholder_username,
    study_labels_import,
)
from annotation.projects.members import invitation_create, member_column_set
from concord.errors import Conflict
from tests.conftest import STUDY
from tests.factories import PASSWORD, MembershipFactory, UserFactory

User = get_user_model()
MINDSPEED = STUDY / "labels" / "MindSpeed.csv"  # 80 rows, Label1..Label7
MIGRATION = importlib.import_module("annotation.migrations.0013_placeholder_accounts")


def test_a_persons_account_named_like_an_old_placeholder_is_left_alone(client, project):
    person = UserFactory(username=f"{project.slug}-label1", email="p@example.org")

    report = study_labels_import(project=project, path=MINDSPEED)

    person.refresh_from_db()
    assert person.has_usable_password()
    assert client.login(username=person.username, password=PASSWORD)
    assert not Membership.objects.filter(user=person).exists()
    assert not Annotation.objects.filter(volunteer=person).exists()
    placeholder = User.objects.get(username=placeholder_username(project, 1))
    assert not placeholder.has_usable_password()
    assert not client.login(username=placeholder.username, password="")
    assert Membership.objects.get(project=project, column=1).user == placeholder
    assert Annotation.objects.filter(volunteer=placeholder).count() == report.rows == 80


def test_reimporting_the_same_file_adds_nothing(project):
    study_labels_import(project=project, path=MINDSPEED)
    before = (User.objects.count(), Membership.objects.count(), Annotation.objects.count())

    again = study_labels_import(project=project, path=MINDSPEED)

    assert (again.items_created, again.annotations_created, again.resolutions_created) == (0, 0, 0)
    assert (User.objects.count(), Membership.objects.count(), Annotation.objects.count()) == before


def test_nobody_can_sign_up_with_a_placeholders_name(client, personas, project):
    _, token = invitation_create(project=project, inviter=personas["admin"])
    name = placeholder_username(project, 1)
    signup = {"username": name, "email": "x@example.org"}
    signup |= {"password1": "a-long-pass-phrase", "password2": "a-long-pass-phrase"}

    page = client.post(f"/join/{token}/", signup)

    assert page.status_code == 200  # the form again, with its error
    assert not User.objects.filter(username=name).exists()


def test_a_placeholder_staff_gave_a_password_is_not_taken_for_its_column(project):
    study_labels_import(project=project, path=MINDSPEED)
    placeholder = User.objects.get(username=placeholder_username(project, 1))
    Membership.objects.filter(user=placeholder).delete()
    placeholder.set_password("now-a-person-1")
    placeholder.save()

    with pytest.raises(ImportFailed, match="can sign in") as caught:
        study_labels_import(project=project, path=MINDSPEED)

    assert caught.value.errors[0].where.column == "Label1"
    placeholder.refresh_from_db()
    assert placeholder.check_password("now-a-person-1")
    assert not Membership.objects.filter(user=placeholder).exists()


def test_a_column_held_by_an_account_that_can_sign_in_is_not_handed_over(personas, project):
    study_labels_import(project=project, path=MINDSPEED)
    placeholder = User.objects.get(username=placeholder_username(project, 1))
    placeholder.set_password("now-a-person-1")
    placeholder.save()
    member = Membership.objects.get(project=project, user=personas["volunteer_a"])

    with pytest.raises(Conflict, match="mapped to"):
        member_column_set(
            project=project, actor=personas["admin"], membership_id=member.pk, column=1
        )

    assert Annotation.objects.filter(volunteer=placeholder).count() == 80


def old_style(project, column: int, *, password: str | None = None) -> Membership:
    """An account as older imports named it; the factory hashes `password` (None: unusable)."""
    user = UserFactory(username=f"{project.slug}-label{column}", password=password)
    return MembershipFactory(project=project, user=user, role=Role.VOLUNTEER, column=column)


def test_the_migration_renames_old_placeholders_and_leaves_people_alone(personas, project):
    placeholder = old_style(project, 1).user
    person = old_style(project, 2, password="a-persons-pass-1").user  # mapped by an admin
    unmapped = UserFactory(username=f"{project.slug}-label3", password=None)

    assert MIGRATION.placeholders_rename(apps, None) == 1

    placeholder.refresh_from_db()
    person.refresh_from_db()
    unmapped.refresh_from_db()
    assert placeholder.username == placeholder_username(project, 1)
    assert (person.username, person.check_password("a-persons-pass-1")) == ("study-label2", True)
    assert unmapped.username == "study-label3"  # no membership with that column: not provably one
    assert MIGRATION.placeholders_rename(apps, None) == 0  # run again: nothing left to rename


def test_the_migration_reverses(project):
    placeholder = old_style(project, 1).user
    MIGRATION.placeholders_rename(apps, None)

    assert MIGRATION.placeholders_rename_back(apps, None) == 1

    placeholder.refresh_from_db()
    assert placeholder.username == "study-label1"


def test_a_renamed_placeholder_hands_its_labels_to_a_mapped_member(personas, project, tmp_path):
    path = tmp_path / "labels.csv"
    path.write_text("Issue_URL,Label1,Final_Label\nhttps://github.com/o/r/issues/1,C.9,C.9\n")
    study_labels_import(project=project, path=path)
    placeholder = User.objects.get(username=placeholder_username(project, 1))
    User.objects.filter(pk=placeholder.pk).update(username="study-label1")  # as older imports
    MIGRATION.placeholders_rename(apps, None)
    member = Membership.objects.get(project=project, user=personas["volunteer_a"])

    member_column_set(project=project, actor=personas["admin"], membership_id=member.pk, column=1)

    assert Annotation.objects.filter(volunteer=personas["volunteer_a"]).count() == 1
    assert study_labels_import(project=project, path=path).annotations_created == 0
