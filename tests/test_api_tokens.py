"""A person creates an API token, uses it, renews it (the old one stops working) and revokes it."""

from rest_framework.authtoken.models import Token


def api_status(client, key: str) -> int:
    response = client.get("/api/taxonomies/", HTTP_AUTHORIZATION=f"Token {key}")
    if response.status_code == 401:  # a script is told how to authenticate
        assert response["WWW-Authenticate"] == "Token"
    return response.status_code


def test_token_is_shown_once_works_and_can_be_renewed_and_revoked(client, personas):
    client.force_login(personas["volunteer_a"])
    assert "You have no API token" in client.get("/accounts/api-token/").content.decode()

    page = client.post("/accounts/api-token/", {"action": "renew"}).content.decode()
    first = Token.objects.get(user=personas["volunteer_a"]).key
    assert first in page
    assert first not in client.get("/accounts/api-token/").content.decode()  # shown once

    client.logout()
    assert api_status(client, first) == 200
    client.force_login(personas["volunteer_a"])
    client.post("/accounts/api-token/", {"action": "renew"})
    second = Token.objects.get(user=personas["volunteer_a"]).key
    client.logout()
    assert api_status(client, first) == 401
    assert api_status(client, second) == 200

    client.force_login(personas["volunteer_a"])
    assert "revoked" in client.post("/accounts/api-token/", {"action": "revoke"}).content.decode()
    client.logout()
    assert api_status(client, second) == 401


def test_the_token_page_needs_a_signed_in_person_and_csrf(client, personas):
    assert client.get("/accounts/api-token/").status_code == 302
    from django.test import Client

    strict = Client(enforce_csrf_checks=True)
    strict.force_login(personas["volunteer_a"])
    assert strict.post("/accounts/api-token/", {"action": "renew"}).status_code == 403
    assert not Token.objects.filter(user=personas["volunteer_a"]).exists()
