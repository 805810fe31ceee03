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


# ---------------------------------------------------------------- username variants (NFKC)


def _letters(word: str, a: int) -> str:
    """`word` in another Unicode alphabet whose `a` is at code point `a`."""
    return "".join(chr(a + ord(c) - ord("a")) for c in word)


# full-width, mathematical bold, the plain name, mathematical monospace with spaces around
VARIANTS = [
    _letters("volunteer", 0xFF41),
    _letters("volunteer", 0x1D41A),
    "volunteer",
    f" {_letters('volunteer', 0x1D68A)} ",
]


def test_a_unicode_variant_of_a_username_signs_in_as_that_user(client, db):
    """Why the throttle must normalise: Django's login form does (NFKC), so variants are the
    same account."""
    user = UserFactory(username="volunteer")
    response = client.post("/accounts/login/", {"username": VARIANTS[1], "password": PASSWORD})
    assert response.status_code == 302
    assert client.session["_auth_user_id"] == str(user.pk)


@override_settings(LOGIN_FAILURE_LIMIT=3)
def test_unicode_variants_of_a_username_share_one_failure_counter(client, db):
    UserFactory(username="volunteer")
    for name in VARIANTS[:3]:  # one failure each, under three spellings
        response = client.post("/accounts/login/", {"username": name, "password": "wrong"})
        assert response.status_code == 200
    for name in VARIANTS:
        blocked = client.post("/accounts/login/", {"username": name, "password": PASSWORD})
        assert blocked.status_code == 429, name
        assert "_auth_user_id" not in client.session


@override_settings(LOGIN_FAILURE_LIMIT=2)
def test_the_username_counter_is_per_account_not_per_spelling_of_another(client, db):
    """The default backend matches names exactly, so `Ada` is another account: no case folding."""
    UserFactory(username="ada")
    UserFactory(username="Ada")
    for _ in range(2):
        client.post("/accounts/login/", {"username": "Ada", "password": "wrong"})
    assert (
        client.post("/accounts/login/", {"username": "Ada", "password": PASSWORD}).status_code
        == 429
    )
    assert (
        client.post("/accounts/login/", {"username": "ada", "password": PASSWORD}).status_code
        == 302
    )


# ---------------------------------------------------------------- the client's address


def _request(remote="10.0.0.1", forwarded=None):
    from django.test import RequestFactory

    extra = {"REMOTE_ADDR": remote}
    if forwarded is not None:
        extra["HTTP_X_FORWARDED_FOR"] = forwarded
    return RequestFactory().post("/accounts/login/", **extra)


@pytest.mark.parametrize(
    ("trusted", "forwarded", "expected"),
    [
        (0, None, "10.0.0.1"),
        (0, "203.0.113.9", "10.0.0.1"),  # no trusted proxy: the header is anyone's word
        (1, None, "10.0.0.1"),
        (1, "203.0.113.9", "203.0.113.9"),
        (1, "198.51.100.1, 203.0.113.9", "203.0.113.9"),  # the left one is the client's claim
        (1, " 2001:DB8::1 ", "2001:db8::1"),
        (2, "198.51.100.1, 203.0.113.9, 192.0.2.7", "203.0.113.9"),
        (2, "203.0.113.9,192.0.2.7", "203.0.113.9"),
        (2, "192.0.2.7", "10.0.0.1"),  # fewer hops than proxies: malformed
        (1, "", "10.0.0.1"),
        (1, "not-an-address", "10.0.0.1"),
        (1, "203.0.113.9:4711", "10.0.0.1"),
        (2, "203.0.113.9, garbage", "10.0.0.1"),  # a trusted proxy's hop must be an address
        (2, "garbage, 203.0.113.9, 192.0.2.7", "203.0.113.9"),  # the client's part may be junk
    ],
)
def test_client_address_trusts_only_the_configured_proxies(settings, trusted, forwarded, expected):
    from concord.auth import client_address

    settings.TRUSTED_PROXY_COUNT = trusted
    assert client_address(_request(forwarded=forwarded)) == expected


@override_settings(
    TRUSTED_PROXY_COUNT=1, LOGIN_FAILURE_LIMIT=100, LOGIN_FAILURE_LIMIT_PER_ADDRESS=3
)
def test_behind_one_proxy_a_guessing_client_does_not_block_everyone(client, db):
    """Every request comes from the proxy (REMOTE_ADDR 127.0.0.1); X-Forwarded-For tells apart."""
    UserFactory(username="ada")
    guesser = {"HTTP_X_FORWARDED_FOR": "203.0.113.9"}
    for name in ["bob", "cy", "dee"]:
        client.post("/accounts/login/", {"username": name, "password": "wrong"}, **guesser)
    blocked = client.post("/accounts/login/", {"username": "ada", "password": PASSWORD}, **guesser)
    assert blocked.status_code == 429
    other = {"HTTP_X_FORWARDED_FOR": "198.51.100.1"}
    response = client.post("/accounts/login/", {"username": "ada", "password": PASSWORD}, **other)
    assert response.status_code == 302


@override_settings(
    TRUSTED_PROXY_COUNT=2, LOGIN_FAILURE_LIMIT=100, LOGIN_FAILURE_LIMIT_PER_ADDRESS=3
)
def test_behind_two_proxies_a_forged_left_part_does_not_escape_the_limit(client, db):
    UserFactory(username="ada")
    for n, name in enumerate(["bob", "cy", "dee", "eve"]):
        forged = {"HTTP_X_FORWARDED_FOR": f"192.0.2.{n}, 203.0.113.9, 10.1.1.1"}
        client.post("/accounts/login/", {"username": name, "password": "wrong"}, **forged)
    again = {"HTTP_X_FORWARDED_FOR": "192.0.2.99, 203.0.113.9, 10.1.1.1"}
    blocked = client.post("/accounts/login/", {"username": "ada", "password": PASSWORD}, **again)
    assert blocked.status_code == 429


@override_settings(
    TRUSTED_PROXY_COUNT=0, LOGIN_FAILURE_LIMIT=100, LOGIN_FAILURE_LIMIT_PER_ADDRESS=3
)
def test_without_a_trusted_proxy_a_forged_header_does_not_escape_the_limit(client, db):
    UserFactory(username="ada")
    for n, name in enumerate(["bob", "cy", "dee"]):
        forged = {"HTTP_X_FORWARDED_FOR": f"192.0.2.{n}"}
        client.post("/accounts/login/", {"username": name, "password": "wrong"}, **forged)
    fresh = {"HTTP_X_FORWARDED_FOR": "198.51.100.77"}
    blocked = client.post("/accounts/login/", {"username": "ada", "password": PASSWORD}, **fresh)
    assert blocked.status_code == 429
