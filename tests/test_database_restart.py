"""PostgreSQL crashes (immediate stop: no checkpoint, WAL replay on start) while volunteers submit
labels through gunicorn. Every request either succeeds or gets a retryable 503 (Retry-After, a
message saying so), volunteers who retry lose nothing, no item passes k, and once the database is
back the service answers normally without a restart."""

import secrets
import threading
import time

import pytest

from tests.load import drive, outcome
from tests.stack import app_on_private_postgres

SLUG = "faults"


@pytest.fixture(scope="module")
def app():
    with app_on_private_postgres(
        slug=SLUG, volunteers=8, items=400, password=secrets.token_urlsafe(12)
    ) as app:
        yield app


def test_submits_across_a_database_crash_are_acknowledged_or_retryable_never_lost(app):
    base_url = app.server.base_url
    runs = []
    volunteers = threading.Thread(
        target=lambda: runs.append(drive(base_url, SLUG, app.tokens, app.themes, 12.0, 0.1))
    )
    volunteers.start()
    time.sleep(4)
    app.cluster.crash()
    time.sleep(3)
    app.cluster.start()
    volunteers.join()
    (tally,) = runs

    result = outcome(tally, app.figures())
    assert tally.retryable["503"] > 0, "the crash must have been seen, as retryable 503s"
    assert not tally.errors, tally.errors[:5]  # no 500, no 503 without Retry-After
    assert result["acknowledged"] > 0
    assert result["lost"] == 0
    assert result["unacknowledged"] == 0  # every stored label's submit was answered in the end
    assert result["over_k"] == 0
    assert result["miscounted"] == 0

    # Back to normal: the kept connections were checked and replaced, nobody sees an error.
    after = drive(base_url, SLUG, app.tokens, app.themes, 3.0, 0.1)
    assert not after.retryable
    assert not after.errors
    assert after.acknowledged
