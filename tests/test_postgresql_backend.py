"""concord.postgresql: a kept connection is checked before each request without a statement, and
one the server has ended is still found out and replaced."""

from __future__ import annotations

import time

import pytest
from django.db import connection, connections

from tests.conftest import needs_postgres

pytestmark = pytest.mark.django_db


@pytest.fixture
def own_connection():
    """A connection of the test's own, outside the test's transaction."""
    needs_postgres(connection)
    wrapper = connections.create_connection("default")
    wrapper.ensure_connection()
    yield wrapper
    wrapper.close()


def last_statement(pid: int) -> str:
    with connection.cursor() as cursor:
        cursor.execute("SELECT query FROM pg_stat_activity WHERE pid = %s", [pid])
        return cursor.fetchone()[0]


def test_a_live_connection_is_found_usable_without_a_statement(own_connection):
    with own_connection.cursor() as cursor:
        cursor.execute("SELECT 'the last statement'")
    pid = own_connection.connection.info.backend_pid
    assert own_connection.is_usable()
    assert last_statement(pid) == "SELECT 'the last statement'"  # no SELECT 1 was sent


def test_a_connection_in_an_aborted_transaction_is_not_usable(own_connection):
    """As Django's own check says (its test teardown relies on it)."""
    from django.db import DatabaseError

    own_connection.set_autocommit(False)
    with pytest.raises(DatabaseError), own_connection.cursor() as cursor:
        cursor.execute("SELECT 1 / 0")
    assert not own_connection.is_usable()
    own_connection.rollback()
    assert own_connection.is_usable()
    own_connection.set_autocommit(True)


def test_a_connection_the_server_ended_is_found_out_and_replaced(own_connection):
    pid = own_connection.connection.info.backend_pid
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_terminate_backend(%s)", [pid])
    deadline = time.monotonic() + 5
    while own_connection.is_usable() and time.monotonic() < deadline:
        time.sleep(0.05)  # the server's goodbye reaches the socket
    assert not own_connection.is_usable()
    own_connection.health_check_done = False  # as at the start of a request
    own_connection.close_if_health_check_failed()
    with own_connection.cursor() as cursor:  # a new connection, made on demand
        cursor.execute("SELECT pg_backend_pid()")
        assert cursor.fetchone()[0] != pid
