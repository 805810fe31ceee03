"""Signing in, throttling, and what anonymous visitors can reach."""

import pytest
from django.test import override_settings

from tests.factories import PASSWORD, UserFactory


def test_signing_in_lands_on_the_home_page(client, db):
    UserFactory(username="ada")
    response = client.post("/accounts/login/", {"username": "ada", "password": PASSWORD})
    assert response.status_code == 302
    assert response["Location"] == "/"


@override_settings(LOGIN_FAILURE_LIMIT=3)
def test_repeated_failures_are_throttled_even_with_the_right_password(client, db):
    UserFactory(username="ada")
    for _ in range(3):
        assert (
            client.post("/accounts/login/", {"username": "ada", "password": "wrong"}).status_code
            == 200
        )
    blocked = client.post("/accounts/login/", {"username": "ada", "password": PASSWORD})
    assert blocked.status_code == 429
    assert b"Too many failed sign-ins" in blocked.content
    assert "_auth_user_id" not in client.session


@override_settings(LOGIN_FAILURE_LIMIT=100, LOGIN_FAILURE_LIMIT_PER_ADDRESS=4)
def test_one_address_guessing_many_usernames_is_throttled_too(client, db):
    UserFactory(username="ada")
    for name in ["bob", "cy", "dee", "eve"]:
        client.post("/accounts/login/", {"username": name, "password": "wrong"})
    assert (
        client.post("/accounts/login/", {"username": "ada", "password": PASSWORD}).status_code
        == 429
    )


@pytest.mark.parametrize(
    "url", ["/", "/taxonomy/", "/projects/demo/", "/admin/annotation/project/"]
)
def test_pages_need_a_signed_in_user(client, db, url):
    response = client.get(url)
    assert response.status_code == 302
    assert "login" in response["Location"]


def test_csp_header_forbids_inline_scripts(client, db):
    policy = client.get("/accounts/login/")["Content-Security-Policy"]
    script_src = next(d for d in policy.split("; ") if d.startswith("script-src"))
    assert script_src == "script-src 'self'"


def test_login_form_needs_a_csrf_token(db):
    from django.test import Client

    strict = Client(enforce_csrf_checks=True)
    UserFactory(username="ada")
    assert (
        strict.post("/accounts/login/", {"username": "ada", "password": PASSWORD}).status_code
        == 403
    )
