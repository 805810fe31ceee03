"""Shared fixtures: the study taxonomy, personas, a project, and probes for the real services.

A test that needs a service it cannot reach is skipped with the reason. With CONCORD_FAIL_ON_SKIP=1
(set by .ci/run) any skipped test fails the run instead.
"""

from __future__ import annotations

import inspect
import os
import shutil
import socket
from contextlib import contextmanager
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

import hypothesis
import pytest
from django.conf import settings

STUDY = Path(settings.STUDY_DATA_DIR)
CHROMIUM = os.environ.get("CHROMIUM", "/usr/bin/chromium")

# ---------------------------------------------------------------- hypothesis profiles

# The fuzz and property tests run a fixed set of examples ("ci", the default: the same examples
# on every run and machine, no deadline since a loaded 2-core machine is slow at random). A test's
# own @settings (e.g. max_examples=40) still wins over the profile's. HYPOTHESIS_PROFILE=default
# (hypothesis' own) draws new examples each run, for a developer hunting bugs. Loaded here, before
# the test modules are imported: hypothesis fixes a settings object's defaults when it is made.
hypothesis.settings.register_profile(
    "ci",
    max_examples=50,
    derandomize=True,
    deadline=None,
    database=None,
    print_blob=True,
)
hypothesis.settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))


def _port_open(host: str, port: int) -> bool:
    try:
        with socket.create_connection((host, port), timeout=1):
            return True
    except OSError:
        return False


def redis_url() -> str:
    return os.environ.get("REDIS_URL", "")


def needs_postgres(connection) -> None:
    if connection.vendor != "postgresql":
        pytest.skip("needs PostgreSQL: set DATABASE_URL (make test does) and start the server")


@pytest.fixture
def redis_required():
    url = redis_url()
    if not url or not _port_open("127.0.0.1", 6379):
        pytest.skip("needs Redis on 127.0.0.1:6379 with REDIS_URL set (make test does)")
    return url


@pytest.fixture
def chromium_path():
    path = shutil.which(CHROMIUM) or (CHROMIUM if Path(CHROMIUM).exists() else None)
    if path is None:
        pytest.skip("needs Debian's chromium (apt-get install chromium; .ci/run does)")
    return path


@pytest.fixture(autouse=True)
def _fresh_cache():
    """Sign-in throttling counts live in the cache, which outlives each test's database."""
    from django.core.cache import cache

    cache.clear()
    yield
    cache.clear()


@pytest.fixture(autouse=True)
def _english():
    """Every test starts in English, whatever ran before it: a test that switched to Chinese, or
    code that activated a language on this thread, must not change what the next test reads.
    Requests choose their own language (LocaleMiddleware); the test client sends no
    Accept-Language and no language cookie, so pages answer in LANGUAGE_CODE (English)."""
    from django.utils import translation

    translation.activate("en")
    yield
    translation.deactivate()


# Lines a test stores for the run's summary (the fuzzers' request counts, by role). A test adds
# them with `summary_line`, as a user property of its report, so they reach the process that
# prints the summary also when the test ran in a pytest-xdist worker.
FUZZ_REPORT = pytest.StashKey[list]()
SUMMARY_PROPERTY = "concord_summary_line"


def summary_line(request, line: str) -> None:
    """Show `line` under "fuzzers' requests" at the end of the run."""
    request.node.user_properties.append((SUMMARY_PROPERTY, line))


_config: pytest.Config | None = None


def pytest_configure(config):
    global _config
    _config = config
    config.stash[FUZZ_REPORT] = []


def pytest_runtest_logreport(report):
    """In the controller (or the only process): keep the lines the test's teardown carries."""
    if report.when == "teardown" and _config is not None:
        lines = [value for key, value in report.user_properties if key == SUMMARY_PROPERTY]
        _config.stash[FUZZ_REPORT].extend(lines)


def pytest_terminal_summary(terminalreporter, exitstatus, config):
    lines = config.stash.get(FUZZ_REPORT, [])
    if lines:
        terminalreporter.section("fuzzers' requests")
        for line in lines:
            terminalreporter.write_line(line)


def pytest_sessionfinish(session, exitstatus):
    """With CONCORD_FAIL_ON_SKIP=1, a skipped test fails the run. Under pytest-xdist this is the
    controller's count, which every worker's reports reach; the workers' own are left alone."""
    if hasattr(session.config, "workerinput"):
        return
    reporter = session.config.pluginmanager.get_plugin("terminalreporter")
    skipped = reporter.stats.get("skipped", []) if reporter else []
    if os.environ.get("CONCORD_FAIL_ON_SKIP") == "1" and skipped:
        reporter.write_line(
            f"CONCORD_FAIL_ON_SKIP: {len(skipped)} test(s) skipped; CI needs every service.",
            red=True,
        )
        session.exitstatus = 1


# ---------------------------------------------------------------- pytest-xdist

# `make test` runs the suite in pytest-xdist workers. pytest-django gives each its own test
# database (suffix _gw0, _gw1 ...); Redis gets the same here: worker N uses the broker and cache
# db indices of REDIS_URL and CACHE_URL moved up by N times their span, so one worker's
# cache.clear() (`_fresh_cache`) or queue never meets another's. Set in the controller before each
# worker starts, since the settings read them once, before any conftest of the worker is loaded.
REDIS_DATABASES = 16  # redis.conf's default `databases`


def _with_db(url: str, index: int) -> str:
    parts = urlsplit(url)
    return urlunsplit(parts._replace(path=f"/{index}"))


def _db_index(url: str) -> int:
    return int(urlsplit(url).path.strip("/") or 0)


def worker_redis_urls(worker: int, environ=os.environ) -> dict[str, str]:
    """REDIS_URL and CACHE_URL for xdist worker number `worker` (gw0 keeps the given ones)."""
    urls = {name: environ[name] for name in ("REDIS_URL", "CACHE_URL") if environ.get(name)}
    if not urls:
        return {}
    indices = [_db_index(url) for url in urls.values()]
    shift = worker * (max(indices) - min(indices) + 1)
    if max(indices) + shift >= REDIS_DATABASES:
        raise pytest.UsageError(
            f"xdist worker gw{worker} would need Redis db {max(indices) + shift}: Redis has "
            f"{REDIS_DATABASES} (0-{REDIS_DATABASES - 1}); use fewer workers (-n) or lower "
            "REDIS_URL/CACHE_URL indices"
        )
    return {name: _with_db(url, _db_index(url) + shift) for name, url in urls.items()}


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_setupnodes(config, specs):
    for worker, spec in enumerate(specs):
        spec.env.update(worker_redis_urls(worker))


# ---------------------------------------------------------------- markers

# What a test needs beyond PostgreSQL and Redis, marked here rather than in each file (`make
# test-fast` leaves these out). `browser` is everything under tests/browser/; the others go to a
# test when it, a fixture it uses, or a helper in tests/ they call uses one of these helpers.
BROWSER_TESTS = Path(__file__).parent / "browser"
NEEDS = {
    "worker": {"tests.workers.worker_pool"},  # a real Celery worker process
    "fault": {  # a PostgreSQL, Redis or gunicorn of the test's own, to break
        "tests.stack.private_postgres",
        "tests.stack.private_redis",
        "tests.stack.gunicorn_server",
        "tests.stack.app_on_private_postgres",
    },
    "load": {"tests.load", "tests.bench.soak"},  # the simulated volunteers (whole modules)
}
KILLS = {"kill", "kill_a_worker"}  # os.kill, Popen.kill, Gunicorn.kill_a_worker: also `fault`
_needs_of: dict = {}


def _names(code) -> set[str]:
    """Globals and attributes a code object uses, with those of its lambdas and inner functions."""
    names = set(code.co_names)
    for const in code.co_consts:
        if inspect.iscode(const):
            names |= _names(const)
    return names


def _needs(function) -> frozenset[str]:
    """The marks `function` needs, from what it calls, followed through the helpers in tests/."""
    function = inspect.unwrap(function)
    code = getattr(function, "__code__", None)
    if code is None:
        return frozenset()
    if code not in _needs_of:
        _needs_of[code] = frozenset()  # a helper that calls itself back adds nothing
        names = _names(code)
        marks = {"fault"} if names & KILLS else set()
        for name in names:
            used = function.__globals__.get(name)
            module = getattr(used, "__module__", None) or ""
            if not module.startswith("tests."):
                continue
            qualified = f"{module}.{getattr(used, '__name__', name)}"
            marks |= {mark for mark, helpers in NEEDS.items() if {module, qualified} & helpers}
            if inspect.isfunction(used):
                marks |= _needs(used)
        _needs_of[code] = frozenset(marks)
    return _needs_of[code]


# Before xdist's own hook (its worker appends each test's xdist_group to the test's id, which is
# what --dist loadgroup schedules by): a group added after it would go unseen.
@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(config, items):
    for item in items:
        marks = {"browser"} if BROWSER_TESTS in Path(item.path).parents else set()
        functions = [getattr(item, "function", None)]
        shared = False  # uses a fixture made once for the module (a browser, a private cluster)
        for fixturedefs in item._fixtureinfo.name2fixturedefs.values():
            functions += [d.func for d in fixturedefs if d.func.__module__.startswith("tests")]
            # ours only: pytest-django's class-scoped autouse fixture is on every test
            shared |= any(
                d.scope in {"module", "class", "package"}
                and d.func.__module__.startswith("tests")
                and not getattr(d.func, "rows_only", False)
                for d in fixturedefs
            )
        for function in filter(None, functions):
            marks |= _needs(function)
        for mark in sorted(marks - {m.name for m in item.iter_markers()}):
            item.add_marker(mark)
        if shared:
            # Under `--dist loadgroup` (make test) the module's tests stay in one xdist worker,
            # which makes its module-scoped fixture once; other tests go wherever a worker is free.
            item.add_marker(pytest.mark.xdist_group(item.module.__name__))


def rows_only(fixture_function):
    """Marks a class- or module-scoped fixture whose state is rows in the worker's own test
    database (`class_rows` and what is built on it): each xdist worker makes its own, so the
    tests using it need not share a worker."""
    fixture_function.rows_only = True
    return fixture_function


# ---------------------------------------------------------------- data


def load_study_taxonomy():
    """The study taxonomy with its examples; loading is idempotent, so this is get-or-load."""
    from taxonomy.loaders import examples_load, taxonomy_load
    from taxonomy.models import Taxonomy

    taxonomy = Taxonomy.objects.filter(name="LLM challenges", version="1").first()
    if taxonomy is None or not taxonomy.nodes.exists():
        taxonomy_load(
            path=STUDY / "taxonomy.csv",
            name="LLM challenges",
            version="1",
            translations=settings.STUDY_TAXONOMY_ZH,
        )
        taxonomy = Taxonomy.objects.get(name="LLM challenges", version="1")
        for detail in sorted((STUDY / "study-details").glob("*.csv")):
            examples_load(path=detail, taxonomy=taxonomy)
        _study_taxonomy_rows["loaded"] = taxonomy_rows()
    return taxonomy


# The taxonomy app's tables, and what they held when load_study_taxonomy last loaded it.
TAXONOMY_TABLES = ("taxonomy_taxonomy", "taxonomy_node", "taxonomy_example")
_study_taxonomy_rows: dict[str, str | None] = {"loaded": None}


def taxonomy_rows() -> str | None:
    """A digest of every row of the taxonomy tables (PostgreSQL only; None elsewhere)."""
    from django.db import connection

    if connection.vendor != "postgresql":
        return None
    digests = " || ".join(
        f"(SELECT md5(coalesce(string_agg(t::text, '|' ORDER BY t.id), '')) FROM {table} t)"  # noqa: S608 (our own table names)
        for table in TAXONOMY_TABLES
    )
    with connection.cursor() as cursor:
        cursor.execute(f"SELECT {digests}")
        return cursor.fetchone()[0]


@pytest.fixture(scope="session")
def django_db_setup(django_db_setup, django_db_blocker):
    """Load the taxonomy once into the test database, so each test's rollback keeps it.
    Transactional tests (run last) keep it too unless they changed it (see _flush_by_delete);
    then `study_taxonomy` loads it again."""
    with django_db_blocker.unblock():
        load_study_taxonomy()


# Rows post_migrate makes again, the same, after every flush: a flush keeps them.
KEPT_BY_FLUSH = frozenset({"django_content_type", "auth_permission"})


@pytest.fixture(scope="session", autouse=True)
def _flush_by_delete():
    """A transactional test (the browser, worker and fault tests) ends with Django's flush, which
    on PostgreSQL truncates all ~60 tables: about 1.3 s here each time, as TRUNCATE makes every
    table and index file anew. Deleting the rows of the few tables that hold any (truncating
    those that hold many) leaves the same empty tables in ~0.07 s (every foreign key is
    deferrable, so the order does not matter).
    The study taxonomy's rows stay, as load_study_taxonomy left them, unless the test changed a
    row of the taxonomy tables: the next test need not load it again (~0.5 s)."""
    from django.db import connection

    if connection.vendor != "postgresql":
        yield
        return
    operations = type(connection.ops)
    truncate = operations.sql_flush

    def sql_flush(ops, style, tables, *, reset_sequences=False, allow_cascade=False):
        if reset_sequences or allow_cascade:
            return truncate(ops, style, tables, reset_sequences=reset_sequences,
                            allow_cascade=allow_cascade)  # fmt: skip
        # the table names are Django's own (its models' tables), quoted
        kept = KEPT_BY_FLUSH
        if taxonomy_rows() == _study_taxonomy_rows["loaded"]:
            kept = kept.union(TAXONOMY_TABLES)
        held = tables_with_rows(ops.connection, set(tables) - kept)
        # A big table is truncated after all: deleting its rows one by one checks each against
        # every table referring to it (tens of thousands of rows: ten seconds, not one).
        # CASCADE reaches only the tables referring to it, all emptied here anyway.
        big = [table for table, rows in held.items() if rows > FEW_ROWS]
        quoted = ", ".join(map(ops.quote_name, big))
        return [f"TRUNCATE {quoted} CASCADE;"] * bool(big) + [
            f"DELETE FROM {ops.quote_name(table)};"  # noqa: S608
            for table, rows in held.items()
            if rows <= FEW_ROWS
        ]

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(operations, "sql_flush", sql_flush)
        yield


FEW_ROWS = 1000


def tables_with_rows(connection, tables: set[str]) -> dict[str, int]:
    """The tables of `tables` holding rows, and how many (counted up to FEW_ROWS + 1)."""
    if not tables:
        return {}
    quote = connection.ops.quote_name
    probes = " UNION ALL ".join(
        f"SELECT %s, (SELECT count(*) FROM (SELECT FROM {quote(table)} LIMIT {FEW_ROWS + 1}) t)"  # noqa: S608 (as above)
        for table in sorted(tables)
    )
    with connection.cursor() as cursor:
        cursor.execute(probes, sorted(tables))
        return {table: rows for table, rows in cursor.fetchall() if rows}


@pytest.fixture
def study_taxonomy(db):
    return load_study_taxonomy()


def make_project(taxonomy):
    from tests.factories import ProjectFactory

    return ProjectFactory(taxonomy=taxonomy, slug="study")


@pytest.fixture
def project(study_taxonomy):
    return make_project(study_taxonomy)


@pytest.fixture
def personas(project):
    """volunteer_a, volunteer_b, lead, admin in `project`; outsider is a lead elsewhere."""
    return make_personas(project)


def make_personas(project) -> dict:
    from annotation.models import Role
    from tests.factories import MembershipFactory, ProjectFactory, UserFactory

    people = {}
    for name, role in [
        ("volunteer_a", Role.VOLUNTEER),
        ("volunteer_b", Role.VOLUNTEER),
        ("lead", Role.LEAD),
        ("admin", Role.ADMIN),
    ]:
        people[name] = UserFactory(username=name)
        MembershipFactory(project=project, user=people[name], role=role)
    other = ProjectFactory(taxonomy=project.taxonomy, slug="other")
    people["outsider"] = UserFactory(username="outsider")
    MembershipFactory(project=other, user=people["outsider"], role=Role.LEAD)
    return people


@contextmanager
def kept_rows(django_db_blocker, var_dir: Path):
    """(project, personas) as `project` and `personas` make them, made once for many tests: in a
    transaction kept open while the tests run and rolled back after the last. Each test's own
    transaction (`db`) is a savepoint within it, rolled back after the test as usual, so the
    tests start from the same rows and may build more for all of them (a world of objects for a
    role matrix) at the cost of one. Files go to `var_dir` (VAR_DIR). A test sharing them must
    not make `project` or `personas` again."""
    from django.db import transaction
    from django.test import override_settings

    with django_db_blocker.unblock(), transaction.atomic():
        with override_settings(VAR_DIR=var_dir):
            project = make_project(load_study_taxonomy())
            yield project, make_personas(project)
        transaction.set_rollback(True)


@pytest.fixture(scope="class")
@rows_only
def class_rows(django_db_setup, django_db_blocker, tmp_path_factory):
    """`kept_rows` for the tests of a class."""
    with kept_rows(django_db_blocker, tmp_path_factory.mktemp("class-var")) as rows:
        yield rows


@pytest.fixture(scope="module")
@rows_only
def module_rows(django_db_setup, django_db_blocker, tmp_path_factory):
    """`kept_rows` for the tests of a module: every test of the module must use them."""
    with kept_rows(django_db_blocker, tmp_path_factory.mktemp("module-var")) as rows:
        yield rows


@pytest.fixture
def labeled_project(project):
    """`project` with the study's MindSpeed labels (80 issues x 7 volunteers) imported."""
    from annotation.projects.importers import study_labels_import

    study_labels_import(project=project, path=STUDY / "labels" / "MindSpeed.csv")
    return project


@pytest.fixture
def forge(settings):
    """A started fake forge, with Concord pointed at it and retry waits shortened."""
    from tests.fakes.forge import FakeForge

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
    previous = celery_app.conf.CELERY_TASK_ALWAYS_EAGER
    celery_app.conf.CELERY_TASK_ALWAYS_EAGER = True
    yield
    celery_app.conf.CELERY_TASK_ALWAYS_EAGER = previous
