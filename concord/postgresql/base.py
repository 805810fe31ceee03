"""Django's PostgreSQL backend, with a health check that costs no round trip.

A kept connection (CONN_MAX_AGE) is checked before a request reuses it, so that after PostgreSQL
restarts the first request reconnects instead of failing (CONN_HEALTH_CHECKS). Django checks by
sending `SELECT 1`: a round trip on every request, which under load waits for a busy server like
any statement (issue #16). Between statements the server has nothing to say to an idle session,
so a connection with nothing to read is taken as alive; one with something to read (the server
closed it, or sent the notice it sends before it terminates a session) gets Django's full check,
and so does one that is not simply idle or in a sound transaction (an aborted transaction is not
usable: Django's test teardown, for one, asks before checking deferred constraints).
A server that vanished without a word is not seen by either check until the statement fails.
"""

from __future__ import annotations

import select

from django.db.backends.postgresql import base
from psycopg2 import extensions  # type: ignore[import-untyped]  # no stubs installed

SOUND = (extensions.TRANSACTION_STATUS_IDLE, extensions.TRANSACTION_STATUS_INTRANS)


class DatabaseWrapper(base.DatabaseWrapper):
    def is_usable(self) -> bool:
        if self.connection is None or self.connection.closed:
            return False
        if self.connection.info.transaction_status not in SOUND:
            return super().is_usable()
        try:
            readable, _, _ = select.select([self.connection], [], [], 0)
        except (OSError, ValueError):  # the socket is gone
            return False
        return not readable or super().is_usable()
