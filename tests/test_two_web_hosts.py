"""Two web processes that share nothing but PostgreSQL and Redis, as two hosts behind a load
balancer would (issue #31): volunteers split between them, then each sent to the other one, lose
no label and push no item past k; a category retired and a project archived by a third process
(an admin elsewhere) are refused by both hosts at once, nothing stale served from either.

Each gunicorn runs one worker process, so the two hosts are two interpreters with nothing in
common but the database and the Redis server."""

from __future__ import annotations

import secrets
import threading

import pytest
import requests

from tests.load import Tally, drive, outcome
from tests.stack import app_on_private_postgres, gunicorn_server, manage, private_redis

SLUG = "two-hosts"
RETIRED = "C.2"  # a theme of the study taxonomy the volunteers label with (depth: theme)

# An admin who is on neither host: a staff account of its own, its token printed.
ADMIN = """
from django.contrib.auth import get_user_model
from rest_framework.authtoken.models import Token
admin, _ = get_user_model().objects.get_or_create(
    username="elsewhere", defaults={"is_staff": True, "is_superuser": True}
)
print(Token.objects.get_or_create(user=admin)[0].key)
"""
RETIRE = f"""
from django.contrib.auth import get_user_model
from annotation.models import Project
from annotation.projects.taxonomy_admin import node_retire
project = Project.objects.get(slug="{SLUG}")
node = project.taxonomy.nodes.get(code="{RETIRED}")
node_retire(user=get_user_model().objects.get(username="elsewhere"), node=node, retired=True)
"""


@pytest.fixture(scope="module")
def hosts():
    with (
        private_redis() as redis,
        app_on_private_postgres(
            slug=SLUG,
            volunteers=6,
            items=300,
            password=secrets.token_urlsafe(12),
            workers=1,
            threads=4,
            redis_url=redis.url,
        ) as app,
        gunicorn_server(1, 4, app.env) as other,
    ):
        yield app, other


def both(first: tuple, second: tuple) -> Tally:
    """Run two groups of volunteers at once, each on its own host; what they saw, together."""
    tallies: list[Tally] = []
    threads = [
        threading.Thread(target=lambda args=args: tallies.append(drive(*args)))
        for args in (first, second)
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    merged = Tally()
    for tally in tallies:
        merged.next_ms += tally.next_ms
        merged.submit_ms += tally.submit_ms
        merged.acknowledged |= tally.acknowledged
        merged.retryable += tally.retryable
        merged.errors += tally.errors
    return merged


def submit(base_url: str, token: str, theme: str) -> requests.Response:
    """Ask for an item on `base_url` and label it with `theme`; the answer to the label."""
    headers = {"Authorization": f"Token {token}"}
    api = f"{base_url}/api/projects/{SLUG}"
    item = requests.post(f"{api}/next-item/", headers=headers, timeout=30)
    assert item.status_code == 200, item.text
    label = {"node": theme, "summary": "two hosts"}
    path = f"{api}/items/{item.json()['id']}/annotation/"
    return requests.put(path, json=label, headers=headers, timeout=30)


def test_volunteers_on_two_hosts_lose_nothing_and_never_pass_k(hosts):
    app, other = hosts
    a, b = app.server.base_url, other.base_url
    half = len(app.tokens) // 2
    tally = both(
        (a, SLUG, app.tokens[:half], app.themes, 4.0, 0.02),
        (b, SLUG, app.tokens[half:], app.themes, 4.0, 0.02),
    )
    # and each volunteer then on the other host, as a load balancer may send them
    swapped = both(
        (b, SLUG, app.tokens[:half], app.themes, 3.0, 0.02),
        (a, SLUG, app.tokens[half:], app.themes, 3.0, 0.02),
    )
    tally.acknowledged |= swapped.acknowledged
    tally.errors += swapped.errors

    result = outcome(tally, app.figures())
    assert not tally.errors, tally.errors[:5]
    assert result["acknowledged"] > 50  # both hosts took labels, before and after the swap
    assert result["lost"] == 0
    assert result["unacknowledged"] == 0
    assert result["over_k"] == 0
    assert result["miscounted"] == 0


def test_what_one_process_changes_the_other_hosts_serve_at_once(hosts):
    app, other = hosts
    admin = manage(app.env, "shell", "-c", ADMIN).split()[-1]
    live = next(theme for theme in app.themes if theme != RETIRED)
    for base_url in (app.server.base_url, other.base_url):  # both have served the taxonomy
        assert submit(base_url, app.tokens[0], live).status_code in (200, 201)

    manage(app.env, "shell", "-c", RETIRE)  # a third process
    for base_url in (app.server.base_url, other.base_url):
        refused = submit(base_url, app.tokens[1], RETIRED)
        assert refused.status_code == 400, (base_url, refused.text)
        assert submit(base_url, app.tokens[1], live).status_code in (200, 201)

    headers = {"Authorization": f"Token {app.tokens[2]}"}
    api = f"{other.base_url}/api/projects/{SLUG}"
    claimed = requests.post(f"{api}/next-item/", headers=headers, timeout=30)
    assert claimed.status_code == 200, claimed.text
    archived = requests.post(
        f"{app.server.base_url}/api/projects/{SLUG}/archive/",
        json={"archived": True},
        headers={"Authorization": f"Token {admin}"},
        timeout=30,
    )
    assert archived.status_code == 200, archived.text
    # the other host knows at once: the item it handed out takes no label, nothing is handed out
    label = {"node": live, "summary": "after the archive"}
    path = f"{api}/items/{claimed.json()['id']}/annotation/"
    assert requests.put(path, json=label, headers=headers, timeout=30).status_code == 409
    assert requests.post(f"{api}/next-item/", headers=headers, timeout=30).status_code == 204
