import pytest

from tests.fakes.forge import FakeForge


@pytest.fixture
def forge(settings):
    """A started fake forge, with Concord pointed at it and retry waits shortened."""
    with FakeForge() as fake:
        settings.GITHUB_API_URL = fake.github_api
        settings.GITEE_API_URL = fake.gitee_api
        settings.HARVEST_BACKOFF_SECONDS = 0.01
        settings.HARVEST_SECONDARY_WAIT_SECONDS = 0.5
        yield fake


@pytest.fixture
def staff(personas):
    """A site staff user (the ingest admin), next to the project personas."""
    from tests.factories import UserFactory

    return UserFactory(username="staff", is_staff=True)


@pytest.fixture
def eager_tasks():
    """Celery as configured without a broker: tasks run in-process when enqueued (the runs of
    this process, not a mock). Pair with django_capture_on_commit_callbacks(execute=True), since
    services enqueue after commit and a `db` test never commits."""
    from concord import celery_app

    # The app reads Django settings under the CELERY_ namespace: set that key, or the change is
    # silently ignored (`conf.task_always_eager = True` is not seen by `delay`).
    previous = celery_app.conf.task_always_eager
    celery_app.conf.CELERY_TASK_ALWAYS_EAGER = True
    yield
    celery_app.conf.CELERY_TASK_ALWAYS_EAGER = previous
