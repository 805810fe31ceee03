"""What a client sees when a view fails (DEBUG off): a plain page or `{"detail"}`, never a
traceback or SQL; a database that cannot answer (here a query PostgreSQL cancels) is a 503 the
client may retry, with Retry-After. The crash tests (test_database_restart.py) do the same with
a database that is really down."""

import pytest
from django.db import connection, transaction
from django.http import HttpResponse
from django.test import Client
from django.urls import path

from concord.urls import handler500, urlpatterns


def crash(request):
    raise ZeroDivisionError("internal detail that must not leak")


def bad_sql(request):
    with connection.cursor() as cursor:  # an IntegrityError naming table and constraint
        cursor.execute("INSERT INTO django_content_type (app_label, model) VALUES ('a', 'b')")
        cursor.execute("INSERT INTO django_content_type (app_label, model) VALUES ('a', 'b')")
    return HttpResponse("unreachable")


def cancelled(request):
    with transaction.atomic(), connection.cursor() as cursor:  # cancelled: an OperationalError
        cursor.execute("SET LOCAL statement_timeout = 1")
        cursor.execute("SELECT pg_sleep(1)")
    return HttpResponse("unreachable")


# A URL conf of the project's own URLs plus three failing views (Django reads handler500 from it).
failing = [path("boom/", crash), path("api/boom/", bad_sql), path("api/cancelled/", cancelled)]
urls = type("urls", (), {"urlpatterns": urlpatterns + failing, "handler500": handler500})


@pytest.fixture
def client(settings):
    settings.ROOT_URLCONF = urls
    settings.DEBUG = False
    return Client(raise_request_exception=False)


def test_a_page_that_fails_shows_the_plain_500_page(client, db):
    response = client.get("/boom/")
    assert response.status_code == 500
    body = response.content.decode()
    assert "Something went wrong on our side" in body
    for leak in ("Traceback", "ZeroDivisionError", "internal detail", "concord/"):
        assert leak not in body


def test_an_api_call_that_fails_answers_json_without_sql(client, db):
    response = client.get("/api/boom/")
    assert response.status_code == 500
    assert response.json() == {"detail": "Server error; it was logged.", "retryable": False}
    assert "django_content_type" not in response.content.decode()


@pytest.mark.django_db(transaction=True)
def test_a_query_the_database_cancels_is_a_retryable_503(client):
    if connection.vendor != "postgresql":
        pytest.skip("needs PostgreSQL (statement_timeout)")
    response = client.get("/api/cancelled/")
    assert response.status_code == 503
    assert response["Retry-After"] == "5"
    assert response.json()["retryable"] is True
    assert "try again in a few seconds" in response.json()["detail"].lower()
    assert "pg_sleep" not in response.content.decode()
