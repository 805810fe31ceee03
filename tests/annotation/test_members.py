"""Members without the Django admin: invitation links (one-time, expiring, hashed), sign-up by
link, bulk adding with initial passwords shown once, role changes, removal (labels stay), LabelJ
mapping (an import's placeholder hands its labels over), own password change and reset by e-mail."""

from __future__ import annotations

import hashlib
import re
from datetime import timedelta

from django.contrib.auth import get_user_model
from django.core import mail
from django.utils import timezone
from rest_framework.test import APIClient

from annotation.models import Action, Annotation, AuditEvent, Invitation, Membership, Role
from annotation.projects.importers import study_labels_import
from annotation.projects.members import invitation_create
from annotation.projects.settings import project_archive
from tests.factories import UserFactory

User = get_user_model()
MEGATRON = "https://github.com/NVIDIA/Megatron-LM/issues/"


def link_token(page: str) -> str:
    return re.search(r'value="http://testserver/join/([^/"]+)/" id="invitation-url"', page)[1]


def test_an_invitation_link_signs_a_new_person_up_once(client, personas, project):
    client.force_login(personas["admin"])
    page = client.post(
        f"/projects/{project.slug}/members/invite/", {"role": "lead", "days": "3"}
    ).content.decode()
    token = link_token(page)
    invitation = Invitation.objects.get()
    assert invitation.token_hash == hashlib.sha256(token.encode()).hexdigest()
    assert token not in str(Invitation.objects.values_list())  # only the hash is stored

    client.logout()
    assert client.get(f"/join/{token}/").status_code == 200
    signup = {"username": "李雷", "email": "li@example.org"}
    signup |= {"password1": "a-long-pass-phrase", "password2": "a-long-pass-phrase"}
    joined = client.post(f"/join/{token}/", signup)
    assert joined.status_code == 302
    user = User.objects.get(username="李雷")
    assert Membership.objects.get(project=project, user=user).role == Role.LEAD
    assert client.get(f"/projects/{project.slug}/").status_code == 200  # signed in

    client.logout()
    again = client.post(f"/join/{token}/", {**signup, "username": "someone"})
    assert again.status_code == 410
    assert "used already" in again.content.decode()
    assert not User.objects.filter(username="someone").exists()


def test_an_expired_or_unknown_link_is_refused(client, personas, project):
    invitation, token = invitation_create(project=project, inviter=personas["admin"])
    Invitation.objects.filter(pk=invitation.pk).update(expires_at=timezone.now() - timedelta(1))
    assert "expired" in client.get(f"/join/{token}/").content.decode()
    assert client.get("/join/nonsense/").status_code == 410


def test_a_signed_in_person_joins_with_one_click(client, personas, project):
    _, token = invitation_create(project=project, inviter=personas["admin"])
    client.force_login(personas["outsider"])
    assert client.post(f"/join/{token}/").status_code == 302
    assert Membership.objects.get(project=project, user=personas["outsider"]).role == Role.VOLUNTEER


def test_a_link_joins_nobody_into_an_archived_project_or_after_its_inviter_lost_the_role(
    client, personas, project
):
    """An invitation carries its inviter's authority, asked of the gate when the link is used."""
    _, token = invitation_create(project=project, inviter=personas["admin"])
    project_archive(project=project, actor=personas["admin"], archived=True)
    client.force_login(personas["outsider"])
    assert "archived" in client.get(f"/join/{token}/").content.decode()
    client.post(f"/join/{token}/")
    assert not Membership.objects.filter(project=project, user=personas["outsider"]).exists()

    project_archive(project=project, actor=personas["admin"], archived=False)
    Membership.objects.filter(project=project, user=personas["admin"]).update(role=Role.VOLUNTEER)
    page = client.get(f"/join/{token}/").content.decode()
    assert "no longer manages the project&#x27;s members" in page
    client.post(f"/join/{token}/")
    assert not Membership.objects.filter(project=project, user=personas["outsider"]).exists()


def test_bulk_add_creates_accounts_and_shows_each_password_once(client, personas, project):
    client.force_login(personas["admin"])
    people = "wang@example.org\nvolunteer_a\n\nzhao\n"
    page = client.post(
        f"/projects/{project.slug}/members/", {"people": people, "role": "volunteer"}
    )
    html = page.content.decode()
    passwords = re.findall(r"<td><code>([^<]+)</code></td>", html)
    assert len(passwords) == 2  # volunteer_a existed
    wang = User.objects.get(username="wang@example.org")
    assert wang.email == "wang@example.org"
    assert wang.check_password(passwords[0])
    assert "already a member" in html
    assert Membership.objects.filter(project=project, user__username="zhao").exists()
    assert passwords[0] not in client.get(f"/projects/{project.slug}/members/").content.decode()


def added_section(client, project, people: str) -> str:
    page = client.post(f"/projects/{project.slug}/members/", {"people": people, "role": "lead"})
    assert page.status_code == 200
    return re.search(
        r'<section class="card notice" id="added-members">.*?</section>',
        page.content.decode(),
        re.S,
    )[0]


def test_bulk_add_never_enrols_or_describes_an_account_outside_the_project(
    client, personas, project
):
    outsider = personas["outsider"]  # a lead of another project
    User.objects.filter(pk=outsider.pk).update(email="outsider@secret.example")
    UserFactory(username="chen", email="chen@elsewhere.example", is_staff=True)
    client.force_login(personas["admin"])  # the project's admin, not site staff

    page = client.post(
        f"/projects/{project.slug}/members/",
        {"people": "outsider\nvolunteer_a\nnew_person\nCHEN\n", "role": "lead"},
    ).content.decode()

    assert "secret.example" not in page
    assert "elsewhere.example" not in page
    assert not Membership.objects.filter(project=project, user=outsider).exists()
    assert not Membership.objects.filter(project=project, user__username="chen").exists()
    assert page.count("cannot be created; send an invitation link") == 2
    assert "already a member" in page
    (password,) = re.findall(r"<td><code>([^<]+)</code></td>", page)
    assert User.objects.get(username="new_person").check_password(password)
    assert Membership.objects.get(project=project, user__username="new_person").role == Role.LEAD
    # Two existing accounts, different in e-mail, staff and projects, answer alike.
    one = added_section(client, project, "outsider\n").replace("outsider", "NAME")
    other = added_section(client, project, "chen\n").replace("chen", "NAME")
    assert one == other
    audit = AuditEvent.objects.filter(project=project, action=Action.MEMBERS).order_by("pk")
    assert audit.first().after == {
        "added": ["new_person"],
        "not_created": ["outsider", "CHEN"],
        "role": "lead",
    }


def test_bulk_add_api_answers_a_taken_name_with_the_name_only(personas, project):
    staff = UserFactory(username="root", is_staff=True, is_superuser=True)  # admin everywhere
    UserFactory(username="chen", email="chen@elsewhere.example")
    User.objects.filter(pk=personas["outsider"].pk).update(email="outsider@secret.example")
    api = APIClient()
    api.force_authenticate(staff)  # site staff get the same rule as a project's admin
    people = ["outsider", "chen", "volunteer_b", "sun@example.org"]

    answer = api.post(f"/api/projects/{project.slug}/members/", {"people": people}, format="json")

    assert answer.status_code == 201
    outsider, chen, member, new = answer.json()
    not_created = {"email": "", "password": None, "outcome": "not_created", "already_member": False}
    assert outsider == {"username": "outsider", **not_created}
    assert chen == {"username": "chen", **not_created}
    assert member == {
        **not_created,
        "username": "volunteer_b",
        "outcome": "already_member",
        "already_member": True,
    }
    assert (new["username"], new["email"], new["outcome"]) == ("sun@example.org",) * 2 + (
        "created",
    )
    assert User.objects.get(username="sun@example.org").check_password(new["password"])
    enrolled = Membership.objects.filter(project=project, user__username__in=["outsider", "chen"])
    assert not enrolled.exists()


def test_a_bad_list_names_each_line_and_adds_nobody(client, personas, project):
    client.force_login(personas["admin"])
    before = User.objects.count()
    page = client.post(
        f"/projects/{project.slug}/members/",
        {"people": "ok\nnot an@email\nok\n", "role": "volunteer"},
    ).content.decode()
    assert "line 2" in page
    assert "line 3" in page
    assert User.objects.count() == before


def test_roles_change_and_the_last_admin_stays(client, personas, project):
    client.force_login(personas["admin"])
    a = Membership.objects.get(project=project, user=personas["volunteer_a"])
    client.post(f"/projects/{project.slug}/members/{a.pk}/", {"role": "lead", "action": "save"})
    a.refresh_from_db()
    assert a.role == Role.LEAD
    me = Membership.objects.get(project=project, user=personas["admin"])
    refused = client.post(
        f"/projects/{project.slug}/members/{me.pk}/", {"role": "volunteer", "action": "save"}
    )
    assert refused.status_code == 409
    me.refresh_from_db()
    assert me.role == Role.ADMIN


def test_a_removed_members_labels_stay_attributed(client, personas, labeled_project):
    column_1 = Membership.objects.get(project=labeled_project, column=1)
    labels = Annotation.objects.filter(volunteer=column_1.user).count()
    client.force_login(personas["admin"])
    response = client.post(
        f"/projects/{labeled_project.slug}/members/{column_1.pk}/",
        {"role": "volunteer", "action": "remove"},
    )
    assert response.status_code == 302
    assert not Membership.objects.filter(pk=column_1.pk).exists()
    assert Annotation.objects.filter(volunteer=column_1.user).count() == labels == 80


def test_mapping_a_member_to_a_column_takes_over_the_imports_labels(personas, project, tmp_path):
    path = tmp_path / "labels.csv"
    path.write_text(f"Issue_URL,Label1,Label2,Final_Label\n{MEGATRON}1,C.9,C.9,C.9\n")
    study_labels_import(project=project, path=path)
    api = APIClient()
    api.force_authenticate(personas["admin"])
    member = Membership.objects.get(project=project, user=personas["volunteer_a"])
    answer = api.patch(
        f"/api/projects/{project.slug}/members/{member.pk}/", {"column": 1}, format="json"
    )
    assert answer.status_code == 200
    assert answer.json()["column"] == 1
    assert Annotation.objects.filter(volunteer=personas["volunteer_a"]).count() == 1
    again = study_labels_import(project=project, path=path)
    assert again.annotations_created == 0  # the file's Label1 is volunteer_a now
    other = Membership.objects.get(project=project, user=personas["volunteer_b"])
    taken = api.patch(
        f"/api/projects/{project.slug}/members/{other.pk}/", {"column": 1}, format="json"
    )
    assert taken.status_code == 409


def test_members_api_adds_invites_and_removes(personas, project):
    api = APIClient()
    api.force_authenticate(personas["admin"])
    added = api.post(
        f"/api/projects/{project.slug}/members/",
        {"people": ["qian"], "role": "lead"},
        format="json",
    )
    assert added.status_code == 201
    assert added.json()[0]["password"]
    invited = api.post(
        f"/api/projects/{project.slug}/invitations/", {"role": "admin"}, format="json"
    )
    assert invited.status_code == 201
    assert "/join/" in invited.json()["url"]
    qian = Membership.objects.get(project=project, user__username="qian")
    assert api.delete(f"/api/projects/{project.slug}/members/{qian.pk}/").status_code == 204
    api.force_authenticate(personas["lead"])
    assert api.get(f"/api/projects/{project.slug}/members/").status_code == 403


def test_own_password_change(client, db):
    user = UserFactory(username="sun")
    user.set_password("old-pass-phrase-1")
    user.save()
    client.force_login(user)
    response = client.post(
        "/accounts/password/",
        {
            "old_password": "old-pass-phrase-1",
            "new_password1": "new-pass-phrase-2",
            "new_password2": "new-pass-phrase-2",
        },
    )
    assert response.status_code == 302
    user.refresh_from_db()
    assert user.check_password("new-pass-phrase-2")


def test_password_reset_by_email(client, settings, db, eager_tasks):
    settings.EMAIL_BACKEND = "django.core.mail.backends.locmem.EmailBackend"
    user = UserFactory(username="zhou", email="zhou@example.org")
    assert client.post("/accounts/reset/", {"email": "zhou@example.org"}).status_code == 302
    (message,) = mail.outbox
    link = re.search(r"/accounts/reset/[^/]+/[^/\s]+/", message.body)[0]
    form = client.get(link, follow=True)
    set_url = form.redirect_chain[-1][0]
    done = client.post(
        set_url, {"new_password1": "brand-new-phrase", "new_password2": "brand-new-phrase"}
    )
    assert done.status_code == 302
    user.refresh_from_db()
    assert user.check_password("brand-new-phrase")


def test_bulk_add_plants_no_account_in_someone_elses_name_or_address(personas, project):
    """A line that looks like a taken name, or that is an address an account has, makes no
    account: one named and mailed as that person, with a password the admin knows, would pass
    for them. The answer is a taken name's: nothing more about the account."""
    UserFactory(username="wang-lei", email="wang.lei@example.org")
    api = APIClient()
    api.force_authenticate(personas["admin"])
    look_alike = "w\u0430ng-lei"  # a Cyrillic a
    url = f"/api/projects/{project.slug}/members/"
    outcomes = {}
    for lines in (
        ["wang.lei@example.org", look_alike, "new.person@example.org"],
        ["WANG.LEI@example.org"],
    ):
        answer = api.post(url, {"people": lines, "role": "volunteer"}, format="json")
        assert answer.status_code == 201
        outcomes |= {row["username"]: row["outcome"] for row in answer.json()}
    assert outcomes == {
        "wang.lei@example.org": "not_created",
        "WANG.LEI@example.org": "not_created",
        look_alike: "not_created",
        "new.person@example.org": "created",
    }
    users = get_user_model().objects
    assert users.filter(email__iexact="wang.lei@example.org").count() == 1
    assert not users.filter(username=look_alike).exists()
