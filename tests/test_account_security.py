"""Accounts that hold: guessing a password through the change form and asking for reset mails are
throttled like sign-in; a refusal never tells whether the password was right; reset links come
from SITE_URL and the reset page answers alike for known and unknown addresses; a new password
revokes the API token; sign-up refuses a name that looks like an account's; the API has a rate
limit per person (429 with Retry-After) above what a simulated volunteer of the benchmarks
does."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys

import pytest
from django.contrib.auth import get_user_model
from django.contrib.auth.hashers import PBKDF2PasswordHasher
from django.core import mail
from django.db import connection
from django.test import override_settings
from django.test.utils import CaptureQueriesContext
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

from annotation.projects.members import invitation_create
from concord import auth
from tests.factories import PASSWORD, UserFactory

User = get_user_model()
NEW = {"new_password1": "a-brand-new-phrase", "new_password2": "a-brand-new-phrase"}


def _change(client, old: str):
    return client.post("/accounts/password/", {"old_password": old, **NEW})


# ---------------------------------------------------------------- sign-in and password change


@override_settings(LOGIN_FAILURE_LIMIT=1)
def test_a_refused_sign_in_does_not_tell_whether_the_password_was_right(client, db):
    """Refused without checking: the page reads the same for the right and a wrong password."""
    UserFactory(username="ada")
    client.post("/accounts/login/", {"username": "ada", "password": "wrong"})
    pages = []
    for password in ["wrong-again", PASSWORD]:
        response = client.post("/accounts/login/", {"username": "ada", "password": password})
        assert response.status_code == 429
        pages.append(re.sub(r'name="csrfmiddlewaretoken" value="[^"]+"', "", response.text))
    assert pages[0] == pages[1]
    assert "correct username" not in pages[1]


@override_settings(LOGIN_FAILURE_LIMIT=3)
def test_wrong_current_passwords_on_the_change_form_are_throttled(client, db):
    user = UserFactory(username="sun")
    client.force_login(user)
    for _ in range(3):
        assert _change(client, "a-guess").status_code == 200
    refused = _change(client, PASSWORD)
    assert refused.status_code == 429
    assert "Too many wrong passwords. Try again in 15 minutes." in refused.text
    assert "incorrectly" not in refused.text  # the guess was not checked
    user.refresh_from_db()
    assert user.check_password(PASSWORD)


@override_settings(LOGIN_FAILURE_LIMIT=2)
def test_the_change_form_and_sign_in_share_the_accounts_counter(client, db):
    """Guesses on either count against the same account: two wrong ones on the change form and
    sign-in is paused too."""
    user = UserFactory(username="sun")
    client.force_login(user)
    for _ in range(2):
        _change(client, "a-guess")
    client.logout()
    blocked = client.post("/accounts/login/", {"username": "sun", "password": PASSWORD})
    assert blocked.status_code == 429


@override_settings(LOGIN_FAILURE_LIMIT=100, LOGIN_FAILURE_LIMIT_PER_ADDRESS=2)
def test_the_change_form_counts_per_address_too(client, db):
    for name in ["sun", "moon"]:
        client.force_login(UserFactory(username=name))
        _change(client, "a-guess")
    client.force_login(UserFactory(username="star"))
    assert _change(client, PASSWORD).status_code == 429


@override_settings(LOGIN_FAILURE_LIMIT=1)
def test_a_bad_new_password_is_no_guess(client, db):
    """Only a wrong current password counts; the right one with a too-short new one does not."""
    client.force_login(UserFactory(username="sun"))
    short = {"old_password": PASSWORD, "new_password1": "x", "new_password2": "x"}
    for _ in range(3):
        assert client.post("/accounts/password/", short).status_code == 200
    assert _change(client, PASSWORD).status_code == 302


# ---------------------------------------------------------------- password reset


def _reset(client, email: str, **extra):
    return client.post("/accounts/reset/", {"email": email}, **extra)


@override_settings(PASSWORD_RESET_LIMIT=2)
def test_reset_mails_for_one_address_are_throttled(client, db, eager_tasks, settings):
    settings.EMAIL_BACKEND = "django.core.mail.backends.locmem.EmailBackend"
    UserFactory(username="zhou", email="zhou@example.org")
    for spelling in ["zhou@example.org", "ZHOU@example.org"]:
        assert _reset(client, spelling).status_code == 302
    refused = _reset(client, "zhou@example.org")
    assert refused.status_code == 429
    assert "Too many password-reset requests. Try again in 60 minutes." in refused.text
    assert len(mail.outbox) == 2
    # the same refusal for an address no account has: the limit tells nothing about accounts
    for _ in range(2):
        _reset(client, "nobody@example.org")
    assert _reset(client, "nobody@example.org").status_code == 429


@override_settings(PASSWORD_RESET_LIMIT=100, PASSWORD_RESET_LIMIT_PER_ADDRESS=3)
def test_reset_mails_from_one_client_address_are_throttled(client, db, eager_tasks):
    for n in range(3):
        assert _reset(client, f"person{n}@example.org").status_code == 302
    assert _reset(client, "another@example.org").status_code == 429
    other = {"REMOTE_ADDR": "198.51.100.1"}
    assert _reset(client, "another@example.org", **other).status_code == 302


def test_the_reset_page_does_the_same_for_known_and_unknown_addresses(client, db, monkeypatch):
    """The account is looked up by the background task, not by the page: the page's queries,
    its answer and what it queues are the same whether an account has the address or not."""
    UserFactory(username="zhou", email="zhou@example.org")
    queued = []
    monkeypatch.setattr(auth, "send", lambda task, *args: queued.append((task.name, args)))
    seen = []
    for email in ["zhou@example.org", "nobody@example.org"]:
        with CaptureQueriesContext(connection) as queries:
            response = _reset(client, email)
        seen.append((response.status_code, response["Location"], len(queries)))
    assert seen[0] == seen[1]
    assert queued == [
        ("concord.password_reset_mail", ("zhou@example.org", "en")),
        ("concord.password_reset_mail", ("nobody@example.org", "en")),
    ]


def test_the_reset_link_starts_with_site_url_whatever_the_host(client, db, eager_tasks, settings):
    settings.EMAIL_BACKEND = "django.core.mail.backends.locmem.EmailBackend"
    settings.ALLOWED_HOSTS = ["*"]
    settings.SITE_URL = "https://concord.example.org/"
    UserFactory(username="zhou", email="zhou@example.org")
    _reset(client, "zhou@example.org", HTTP_HOST="attacker.example:8080")
    (message,) = mail.outbox
    assert re.search(r"^https://concord\.example\.org/accounts/reset/\S+/\S+/$", message.body, re.M)
    assert "attacker" not in message.body + message.subject


def test_the_reset_mail_is_in_the_askers_language(client, db, eager_tasks, settings):
    settings.EMAIL_BACKEND = "django.core.mail.backends.locmem.EmailBackend"
    UserFactory(username="zhou", email="zhou@example.org")
    _reset(client, "zhou@example.org", HTTP_ACCEPT_LANGUAGE="zh-hans")
    (message,) = mail.outbox
    assert "重置" in message.subject + message.body


def test_a_celery_worker_knows_the_reset_task():
    """The task lives in concord.auth, not in a `tasks` module that autodiscovery finds: a
    worker knows it all the same (CELERY_IMPORTS), without loading the URLs."""
    probe = (
        "import django; django.setup(); from concord import celery_app; "
        "celery_app.loader.import_default_modules(); "
        "print(__import__('json').dumps('concord.password_reset_mail' in celery_app.tasks))"
    )
    env = {**os.environ, "DJANGO_SETTINGS_MODULE": "concord.settings", "DEBUG": "1"}
    done = subprocess.run(
        [sys.executable, "-c", probe], env=env, capture_output=True, text=True, check=True
    )
    assert json.loads(done.stdout.strip().splitlines()[-1]) is True


# ---------------------------------------------------------------- a new password revokes tokens


def _works(key: str) -> bool:
    return APIClient().get("/api/taxonomies/", HTTP_AUTHORIZATION=f"Token {key}").status_code == 200


def test_changing_the_password_revokes_the_token(client, db):
    user = UserFactory(username="sun")
    key = Token.objects.create(user=user).key
    assert _works(key)
    client.force_login(user)
    assert _change(client, PASSWORD).status_code == 302
    assert not _works(key)
    assert not Token.objects.filter(user=user).exists()


def test_a_password_reset_revokes_the_token(client, db, eager_tasks, settings):
    settings.EMAIL_BACKEND = "django.core.mail.backends.locmem.EmailBackend"
    user = UserFactory(username="zhou", email="zhou@example.org")
    key = Token.objects.create(user=user).key
    _reset(client, "zhou@example.org")
    link = re.search(r"/accounts/reset/[^/]+/[^/\s]+/", mail.outbox[0].body)[0]
    set_url = client.get(link, follow=True).redirect_chain[-1][0]
    assert client.post(set_url, NEW).status_code == 302
    assert not _works(key)


def test_an_admin_setting_a_password_revokes_the_token(client, db):
    user = UserFactory(username="sun")
    key = Token.objects.create(user=user).key
    client.force_login(UserFactory(username="root", is_staff=True, is_superuser=True))
    answer = client.post(
        f"/admin/auth/user/{user.pk}/password/",
        {"password1": NEW["new_password1"], "password2": NEW["new_password2"]},
    )
    assert answer.status_code == 302
    assert not _works(key)


class QuickPBKDF2(PBKDF2PasswordHasher):
    iterations = 2


def test_a_password_set_anywhere_revokes_the_token_but_a_hash_upgrade_does_not(db, settings):
    """`set_password` and save, as `manage.py changepassword` does, revokes; a sign-in that only
    rehashes the same password with the preferred hasher is no change of password."""
    user = UserFactory(username="sun")
    key = Token.objects.create(user=user).key
    settings.PASSWORD_HASHERS = [f"{__name__}.QuickPBKDF2", *settings.PASSWORD_HASHERS]
    assert user.password.startswith("md5$")
    assert user.check_password(PASSWORD)  # upgrades the hash to PBKDF2 and saves it
    user.refresh_from_db()
    assert user.password.startswith("pbkdf2_sha256$")
    assert _works(key)

    user.set_password("set-by-a-command-1")
    user.save()
    assert not _works(key)


def test_the_token_page_says_a_new_password_revokes_the_token(client, db):
    client.force_login(UserFactory(username="sun"))
    assert "resetting your password revokes your token" in client.get("/accounts/api-token/").text


# ---------------------------------------------------------------- look-alike names at sign-up


def _sign_up(client, token: str, username: str):
    data = {"username": username, "email": "new@example.org"}
    data |= {"password1": "a-long-pass-phrase", "password2": "a-long-pass-phrase"}
    return client.post(f"/join/{token}/", data)


@pytest.mark.parametrize(
    "name",
    [
        "d\u0435mo-lead",  # Cyrillic ie
        "Demo-Lead",
        "DEMO-LEAD",
        "\u0501emo-lead",  # Cyrillic komi de
        "demo-Iead",  # capital I for l
        "dern\u043e-lead",  # rn for m, Cyrillic o
    ],
)
def test_sign_up_refuses_a_name_that_looks_like_an_accounts(client, personas, project, name):
    """Case alone Django refuses itself ("already exists"); other look-alikes are refused in the
    same words, so the answer tells a look-alike from a taken name no more than it names one."""
    UserFactory(username="demo-lead")
    _, token = invitation_create(project=project, inviter=personas["admin"])
    refused = _sign_up(client, token, name)
    assert refused.status_code == 200
    errors = refused.context["form"].errors
    assert list(errors) == ["username"]
    assert errors["username"] == ["A user with that username already exists."]
    assert "demo-lead" not in refused.text  # which account it resembles is not said
    assert not User.objects.filter(username=name).exists()


def test_sign_up_takes_a_name_that_only_shares_letters(client, personas, project):
    UserFactory(username="demo-lead")
    _, token = invitation_create(project=project, inviter=personas["admin"])
    assert _sign_up(client, token, "demo-leader").status_code == 302
    assert User.objects.filter(username="demo-leader").exists()


def test_the_look_alike_refusal_is_in_chinese_too(client, personas, project):
    UserFactory(username="demo-lead")
    _, token = invitation_create(project=project, inviter=personas["admin"])
    client.cookies["django_language"] = "zh-hans"
    refused = _sign_up(client, token, "d\u0435mo-lead")
    assert refused.context["form"].errors["username"] == ["已存在一位使用该名字的用户。"]


# ---------------------------------------------------------------- the API's rate limit


def _rates(burst: str, sustained: str, settings):
    return {
        **settings.REST_FRAMEWORK,
        "DEFAULT_THROTTLE_RATES": {"burst": burst, "sustained": sustained},
    }


@pytest.fixture
def frozen_clock(monkeypatch):
    """The throttles' clock at 1,000,000.25 s: a burst cannot straddle two windows."""
    monkeypatch.setattr(auth._ApiThrottle, "timer", staticmethod(lambda: 1_000_000.25))


def test_a_burst_over_the_limit_gets_429_with_retry_after(db, settings, frozen_clock):
    # A minute's window, not the default second's: the clock is frozen but Redis expires the
    # count in real time, and seven requests on a loaded machine can take longer than a second.
    settings.REST_FRAMEWORK = _rates("5/m", "1000/h", settings)
    api = APIClient()
    api.force_authenticate(UserFactory(username="fast"))
    answers = [api.get("/api/taxonomies/") for _ in range(7)]
    assert [a.status_code for a in answers] == [200] * 5 + [429] * 2
    refused = answers[-1]
    assert refused["Retry-After"] == "20"  # 40.25 s into its minute: 19.75 s left, rounded up
    assert set(refused.json()) == {"detail", "where"}  # the API's refusal shape
    assert "throttled" in refused.json()["detail"]

    other = APIClient()
    other.force_authenticate(UserFactory(username="calm"))
    assert other.get("/api/taxonomies/").status_code == 200  # per person


def test_the_sustained_limit_says_when_its_minute_ends(db, settings, frozen_clock):
    settings.REST_FRAMEWORK = _rates("1000/s", "3/m", settings)
    api = APIClient()
    api.force_authenticate(UserFactory(username="steady"))
    codes = [api.get("/api/taxonomies/").status_code for _ in range(4)]
    assert codes == [200, 200, 200, 429]
    # 1,000,000.25 s is 40.25 s into its minute: 19.75 s left, rounded up
    assert api.get("/api/taxonomies/")["Retry-After"] == "20"


def test_the_default_rates_leave_room_for_the_benchmarks_volunteers(settings):
    """tests/bench/capacity.py: 7 volunteers who never pause store up to ~170 labels/s on two
    cores, two requests (next item, label) each; nobody in the benchmarks may be throttled."""
    parse = auth.BurstThrottle.parse_rate
    rates = settings.REST_FRAMEWORK["DEFAULT_THROTTLE_RATES"]
    burst, burst_seconds = parse(None, rates["burst"])
    sustained, sustained_seconds = parse(None, rates["sustained"])
    per_volunteer = 2 * 170 / 7
    assert sustained / sustained_seconds >= 1.2 * per_volunteer
    assert burst / burst_seconds >= 2 * per_volunteer
