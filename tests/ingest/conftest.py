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
