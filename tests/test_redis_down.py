"""With the cache's Redis unreachable (a real client against a closed port), signing in, the
sign-in throttle and the labeling page keep working: the cache degrades to a miss."""

import copy

import pytest

from tests.annotation.labeling_helpers import items
from tests.factories import PASSWORD

DEAD_REDIS = "redis://127.0.0.1:1/0"  # nothing listens on port 1


@pytest.fixture
def dead_cache(settings):
    """The project's own cache configuration, pointed at a Redis that is not there."""
    cache = copy.deepcopy(settings.CACHES["default"])
    if "redis" not in cache["BACKEND"].lower():
        pytest.skip("needs the Redis cache configuration: set CACHE_URL (make test does)")
    cache["LOCATION"] = DEAD_REDIS
    settings.CACHES = {"default": cache}


def test_sign_in_and_labeling_work_while_the_cache_is_down(client, personas, project, dead_cache):
    (item,) = items(project, 1)
    wrong = client.post("/accounts/login/", {"username": "volunteer_a", "password": "nope"})
    assert wrong.status_code == 200
    assert "correct username and password" in wrong.content.decode()
    right = client.post("/accounts/login/", {"username": "volunteer_a", "password": PASSWORD})
    assert right.status_code == 302
    page = client.get(f"/projects/{project.slug}/label/")
    assert page.status_code == 200
    assert item.issue.title in page.content.decode()
