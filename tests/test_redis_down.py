"""Redis stops: Concord's cache and task queue are both gone.

Against a real client on a closed port, signing in, its throttle and the labeling page keep
working (the cache degrades to a miss). Against gunicorn whose Redis is killed: volunteers label,
the lead resolves, exports stream; a background export asked for meanwhile waits in the database
with a clear message, and a worker that was running all along writes it once Redis is back."""

import copy

import pytest
import requests
from rest_framework.authtoken.models import Token

from annotation.models import ExportJob, ExportStatus
from annotation.reporting.export_jobs import export_job_file
from annotation.reporting.exports import export_lines, export_options
from tests.annotation.labeling_helpers import items
from tests.annotation.lead_helpers import labeled_item
from tests.factories import PASSWORD, MembershipFactory, UserFactory
from tests.stack import (
    gunicorn_server,
    private_redis,
    production_env,
    shared_database_url,
    wait_for,
)
from tests.workers import worker_pool

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


@pytest.fixture
def stack(redis_required, transactional_db, settings, tmp_path):
    """gunicorn and a Celery worker (with beat) on the test database and a Redis of their own."""
    database = shared_database_url()
    if database is None:
        pytest.skip("needs PostgreSQL shared between this test, gunicorn and the worker")
    settings.VAR_DIR = tmp_path / "var"
    settings.VAR_DIR.mkdir()
    with private_redis() as redis:
        services = {"REDIS_URL": redis.url, "CACHE_URL": redis.url.replace("/0", "/1")}
        with worker_pool(None, tmp_path, env=services) as workers:
            env = production_env(
                DATABASE_URL=database,
                CONCORD_VAR_DIR=str(settings.VAR_DIR),
                CELERY_QUEUE=workers.queue,
                SECRET_KEY=settings.SECRET_KEY,  # sessions made by this process are valid there
                JOB_STALE_SECONDS="1",
                **services,
            )
            with gunicorn_server(2, 2, env) as server:
                yield redis, workers, server.base_url


def signed_in(base_url: str, user) -> requests.Session:
    """A browser-like session for `user`: the session is made here (the server shares the
    database and the secret key), the CSRF cookie comes from the server's own form."""
    from django.conf import settings
    from django.test import Client

    local = Client()
    local.force_login(user)
    session = requests.Session()
    session.cookies.set(
        settings.SESSION_COOKIE_NAME, local.cookies[settings.SESSION_COOKIE_NAME].value
    )
    session.get(f"{base_url}/", timeout=30)
    return session


def api_session(user) -> requests.Session:
    session = requests.Session()
    session.headers["Authorization"] = f"Token {Token.objects.create(user=user).key}"
    return session


@pytest.mark.worker
def test_labeling_resolving_and_exports_go_on_while_redis_is_down(stack, personas, project):
    redis, workers, base_url = stack
    api = f"{base_url}/api/projects/{project.slug}"
    (open_item,) = items(project, 1)
    third = UserFactory(username="volunteer_c")
    MembershipFactory(project=project, user=third)
    trio = [personas["volunteer_a"], personas["volunteer_b"], third]
    disputed = labeled_item(project, trio, ["C.1", "C.1", "C.2"])
    workers.start(beat=True)
    volunteer, lead, admin = (api_session(p) for p in (third, personas["lead"], personas["admin"]))

    redis.stop()
    handed = volunteer.post(f"{api}/next-item/", timeout=30)
    assert handed.status_code == 200
    assert handed.json()["id"] == open_item.pk
    saved = volunteer.put(
        f"{api}/items/{open_item.pk}/annotation/", json={"node": "A.1", "summary": "s"}, timeout=30
    )
    assert saved.status_code == 201
    review = lead.get(f"{api}/items/{disputed.pk}/review/", timeout=30).json()
    resolved = lead.post(
        f"{api}/items/{disputed.pk}/resolve/",
        json={
            "node": "C.1",
            "expected_stage": review["stage"],
            "expected_version": review["version"],
        },
        timeout=30,
    )
    assert resolved.status_code == 200
    streamed = admin.get(f"{api}/exports/long/", timeout=30)
    assert streamed.status_code == 200
    long_export = "".join(export_lines(project, export_options(project, format="long")))
    assert streamed.content.decode() == long_export

    queued = admin.post(f"{api}/export-jobs/", json={"format": "long"}, timeout=30)
    assert queued.status_code == 201, queued.text
    assert queued.elapsed.total_seconds() < 5  # the broker is given up on quickly
    job = ExportJob.objects.get(pk=queued.json()["id"])
    assert job.status == ExportStatus.QUEUED
    # Queued since before the server's JOB_STALE_SECONDS (1, below the workers' 2), no waiting:
    # the job says why it waits.
    workers.make_stale(ExportJob.objects.filter(pk=job.pk), "created_at")
    waiting = admin.get(f"{api}/export-jobs/{job.pk}/", timeout=30).json()
    assert "the task queue (Redis) or the workers may be down" in waiting["progress"]["step"]

    # The same from the exports page: the person is told the job waits for the queue.
    browser = signed_in(base_url, personas["admin"])
    page = browser.post(
        f"{base_url}/projects/{project.slug}/exports/",
        {"format": "study", "csrfmiddlewaretoken": browser.cookies["csrftoken"]},
        headers={"Referer": f"{base_url}/projects/{project.slug}/exports/"},
        timeout=30,
    )
    assert page.status_code == 200
    assert "the task queue (Redis) cannot be reached right now" in page.text

    redis.start()  # empty: whatever it held is gone, but the jobs' rows are not
    done = wait_for(
        lambda: (j := ExportJob.objects.get(pk=job.pk)).status == ExportStatus.DONE and j,
        90,
        "the running worker's sweep to send the export once Redis is back",
    )
    wait_for(
        lambda: not ExportJob.objects.exclude(status=ExportStatus.DONE).exists(),
        90,
        "the page's export too",
    )
    assert export_job_file(done).read_bytes().decode() == long_export
