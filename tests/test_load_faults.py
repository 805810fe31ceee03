"""The load test with faults, shortened for CI: 50 volunteers for 30 s on the study-scale project
(38,742 items x 7 labels, plus 5,000 open items) through gunicorn, with two gunicorn workers
SIGKILLed and Redis killed and restarted along the way (tests/bench/soak.py; `make soak` runs the
10-minute version). Nothing acknowledged is lost, no item passes k, no request gets a wrong
answer."""

import pytest

from tests.bench.labeling import ensure_study_project
from tests.bench.soak import soak
from tests.stack import private_redis, shared_database_url

SECONDS = 30.0


@pytest.mark.worker
def test_fifty_volunteers_through_worker_kills_and_a_redis_restart(transactional_db):
    database = shared_database_url()
    if database is None:
        pytest.skip("needs PostgreSQL shared between this test and gunicorn")
    project = ensure_study_project()
    with private_redis() as redis:
        figures = soak(project, redis, SECONDS, volunteers=50, think=1.0, database_url=database)
    assert len(figures["faults"]) == 4  # two kills, Redis down and up again
    # real load through the faults: over six labels a volunteer (about 740 in all on this 2-core
    # machine when the test runs alone)
    assert figures["acknowledged"] > 300
    assert figures["lost"] == 0
    assert figures["unacknowledged"] == 0
    assert figures["over_k"] == 0
    assert figures["miscounted"] == 0  # no half-done write from a killed worker
    assert figures["wrong_answers"] == 0
