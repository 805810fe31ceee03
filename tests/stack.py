"""Real services a test can break: a PostgreSQL cluster and a Redis server of the test's own (so
stopping them disturbs nobody else on the machine), and gunicorn serving the app on them.

Tests and benchmarks use the same pieces: `gunicorn_server` is how the labeling benchmark and the
fault tests run the app with production settings (DEBUG off).
"""

from __future__ import annotations

import fcntl
import functools
import hashlib
import json
import os
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager, suppress
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PG_BIN = Path("/usr/lib/postgresql")


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def wait_for(condition, timeout: float, what: str, every: float = 0.1):
    """Poll `condition` until it returns something truthy; fail naming `what` after `timeout`."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = condition()
        if value:
            return value
        time.sleep(every)
    raise AssertionError(f"timed out after {timeout}s waiting for {what}")


def _listening(port: int) -> bool:
    with socket.socket() as probe:
        return probe.connect_ex(("127.0.0.1", port)) == 0


class PrivateRedis:
    """A redis-server on a free port, without persistence; `stop` and `start` at will."""

    def __init__(self) -> None:
        self.port = free_port()
        self.url = f"redis://127.0.0.1:{self.port}/0"
        self.process: subprocess.Popen | None = None

    def start(self) -> None:
        command = ["redis-server", "--bind", "127.0.0.1", "--port", str(self.port)]
        command += ["--save", "", "--appendonly", "no"]
        self.process = subprocess.Popen(command, stdout=subprocess.DEVNULL)
        wait_for(lambda: _listening(self.port), 10, f"redis-server on port {self.port}")

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.kill()  # as abrupt as a crash: nothing is flushed, clients see a reset
            self.process.wait(timeout=10)


@contextmanager
def private_redis() -> Iterator[PrivateRedis]:
    if shutil.which("redis-server") is None:
        import pytest

        pytest.skip("needs redis-server on the PATH to run a Redis of the test's own")
    redis = PrivateRedis()
    redis.start()
    try:
        yield redis
    finally:
        redis.stop()


class PrivateCluster:
    """A PostgreSQL cluster in a temporary directory, on a free port, trusting local TCP.

    `crash` stops it in immediate mode (no checkpoint: the next start replays the WAL, as after a
    power cut); `start` brings it back. Runs as the `postgres` user when the test runs as root.
    """

    def __init__(self, bindir: Path, data: Path) -> None:
        self.bindir, self.data = bindir, data
        self.port = free_port()
        self.url = f"postgres://postgres@127.0.0.1:{self.port}/concord"

    def _run(self, *command: str) -> None:
        prefix = ["runuser", "-u", "postgres", "--"] if os.geteuid() == 0 else []
        subprocess.run([*prefix, *command], check=True, capture_output=True, timeout=120)

    def init(self) -> None:
        self._run(
            str(self.bindir / "initdb"),
            "-D",
            str(self.data),
            "-U",
            "postgres",
            "--auth=trust",
            "--no-sync",
        )
        self.start()
        self._run(
            str(self.bindir / "createdb"),
            "-h",
            "127.0.0.1",
            "-p",
            str(self.port),
            "-U",
            "postgres",
            "concord",
        )

    def init_from(self, template: Path) -> None:
        """Start as a copy of a stopped cluster's data directory (its owner and modes kept)."""
        subprocess.run(["cp", "-a", str(template), str(self.data)], check=True)
        self.start()

    def start(self) -> None:
        options = f"-p {self.port} -c listen_addresses=127.0.0.1 -k {self.data}"
        self._run(
            str(self.bindir / "pg_ctl"),
            "-D",
            str(self.data),
            "-o",
            options,
            "-l",
            str(self.data / "server.log"),
            "-w",
            "start",
        )

    def crash(self) -> None:
        self._run(
            str(self.bindir / "pg_ctl"), "-D", str(self.data), "-m", "immediate", "-w", "stop"
        )

    def stop(self) -> None:
        self._run(str(self.bindir / "pg_ctl"), "-D", str(self.data), "-m", "fast", "-w", "stop")


@contextmanager
def private_postgres(*, migrated: bool = False) -> Iterator[PrivateCluster]:
    """A cluster of the caller's own with an empty `concord` database, or (`migrated`) one that
    Concord's migrations have been applied to."""
    import pytest

    versions = sorted(PG_BIN.glob("*/bin/initdb")) if PG_BIN.is_dir() else []
    if not versions:
        pytest.skip("needs PostgreSQL's server binaries (initdb) to run a cluster of its own")
    bindir = versions[-1].parent
    folder = _for_postgres(Path(tempfile.mkdtemp(prefix="concord-pg-")))
    cluster = PrivateCluster(bindir, folder / "data")
    if migrated:
        cluster.init_from(migrated_cluster(bindir))
    else:
        cluster.init()
    try:
        yield cluster
    finally:
        with suppress(subprocess.CalledProcessError):  # already stopped by the test
            cluster.stop()
        shutil.rmtree(folder, ignore_errors=True)


def _for_postgres(folder: Path) -> Path:
    """`folder`, given to the postgres user when we are root (the cluster runs as postgres)."""
    if os.geteuid() == 0:
        shutil.chown(folder, "postgres", "postgres")
    return folder


def migrated_cluster(bindir: Path) -> Path:
    """The data directory of a stopped cluster whose `concord` database is migrated, made once per
    machine for each set of migrations (named by their digest) and copied by each migrated
    private_postgres: initdb and migrate were ~10 s of every fault test's setup. Made under a
    lock, as both xdist workers may ask for it at once."""
    name = f"concord-pg-migrated-{bindir.parent.name}-{_migrations()}"
    folder = Path(tempfile.gettempdir()) / name
    with _locked(folder.with_suffix(".lock")):
        if not (folder / "ready").exists():
            shutil.rmtree(folder, ignore_errors=True)  # what a run stopped midway left
            folder.mkdir()
            cluster = PrivateCluster(bindir, _for_postgres(folder) / "data")
            cluster.init()
            try:
                manage(production_env(DATABASE_URL=cluster.url), "migrate", "--noinput")
            finally:
                cluster.stop()
            (folder / "ready").touch()
    return folder / "data"


def _migrations() -> str:
    digest = hashlib.sha256()
    for path in sorted(ROOT.glob("*/migrations/*.py")):
        digest.update(str(path.relative_to(ROOT)).encode() + b"\0" + path.read_bytes())
    return digest.hexdigest()[:16]


@contextmanager
def _locked(path: Path) -> Iterator[None]:
    with path.open("w") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        yield


PGBOUNCER = ("pgbouncer", "/usr/sbin/pgbouncer")  # Debian's package puts it outside a user's PATH
POOLER_INI = """[databases]
* = host=127.0.0.1 port={target}
[pgbouncer]
listen_addr = 127.0.0.1
listen_port = {port}
unix_socket_dir =
auth_type = trust
auth_file = {folder}/users.txt
pool_mode = transaction
default_pool_size = 8
max_client_conn = 200
logfile = {folder}/pgbouncer.log
pidfile = {folder}/pgbouncer.pid
"""


@contextmanager
def transaction_pooler(target_port: int) -> Iterator[int]:
    """PgBouncer in transaction pooling mode on a free port, in front of the PostgreSQL on
    `target_port` (trusting local TCP, as the test clusters do); yields its port. A client's
    session lasts one transaction: what a production pooler does to Concord's connections."""
    binary = next(filter(None, map(shutil.which, PGBOUNCER)), None)
    if binary is None:
        import pytest

        pytest.skip("needs PgBouncer (Debian: apt-get install pgbouncer) to pool connections")
    folder = Path(tempfile.mkdtemp(prefix="concord-pgbouncer-"))
    port = free_port()
    (folder / "users.txt").write_text('"postgres" ""\n')
    (folder / "pgbouncer.ini").write_text(
        POOLER_INI.format(target=target_port, port=port, folder=folder)
    )
    as_postgres = ["-u", "postgres"] if os.geteuid() == 0 else []  # it refuses to run as root
    if os.geteuid() == 0:
        shutil.chown(folder, "postgres", "postgres")
    process = subprocess.Popen([binary, *as_postgres, str(folder / "pgbouncer.ini")])
    try:
        wait_for(lambda: _listening(port), 10, f"pgbouncer on port {port}")
        yield port
    finally:
        process.terminate()
        process.wait(timeout=10)
        shutil.rmtree(folder, ignore_errors=True)


def shared_database_url() -> str | None:
    """The URL of the test database (not the one in the environment) for other processes, when
    it is PostgreSQL they can share; None for SQLite."""
    from django.db import connection

    if connection.vendor != "postgresql":
        return None
    db = connection.settings_dict
    return f"postgres://{db['USER']}@{db['HOST']}:{db['PORT']}/{db['NAME']}"


def manage(env: dict, *args: str) -> str:
    """Run `manage.py` with `env`; returns its output, fails the caller with it on an error."""
    done = subprocess.run(
        [sys.executable, "manage.py", *args], cwd=ROOT, env=env, capture_output=True, text=True
    )
    if done.returncode:
        raise AssertionError(f"manage.py {' '.join(args)} failed:\n{done.stdout}{done.stderr}")
    return done.stdout


@functools.cache
def static_collected() -> None:
    """collectstatic, once a process: with DEBUG off WhiteNoise serves the collected files, which
    are the same for every app a test starts (they live under the checkout's var/)."""
    manage(production_env(), "collectstatic", "--noinput")


def production_env(**overrides: str) -> dict:
    """The environment of a production process: DEBUG off, a secret key, the given services; over
    plain HTTP on loopback, so without the HTTPS redirect."""
    return {
        **os.environ,
        "DEBUG": "0",
        "HTTPS": "0",
        "ALLOWED_HOSTS": "127.0.0.1",
        "SECRET_KEY": os.environ.get("SECRET_KEY") or secrets.token_urlsafe(40),
        **overrides,
    }


class Gunicorn:
    def __init__(self, process: subprocess.Popen, base_url: str) -> None:
        self.process, self.base_url = process, base_url

    def worker_pids(self) -> list[int]:
        """The worker processes (children of the arbiter) alive now."""
        children = Path(f"/proc/{self.process.pid}/task/{self.process.pid}/children")
        return [int(pid) for pid in children.read_text().split()]

    def kill_a_worker(self) -> int:
        """SIGKILL one worker mid-whatever-it-is-doing; the arbiter starts a replacement."""
        pid = self.worker_pids()[0]
        os.kill(pid, signal.SIGKILL)
        return pid


@contextmanager
def gunicorn_server(
    workers: int | None, threads: int | None, env: dict | None = None
) -> Iterator[Gunicorn]:
    """gunicorn on a free port with production settings (DEBUG off) unless `env` says otherwise,
    configured as the README runs it (concord.gunicorn_config) but for the `workers` and
    `threads` given."""
    port = free_port()
    command = [sys.executable, "-m", "gunicorn", "-c", "python:concord.gunicorn_config"]
    command += ["concord.wsgi", "--bind", f"127.0.0.1:{port}"]
    command += ["--workers", str(workers)] if workers else []
    command += ["--threads", str(threads)] if threads else []
    command += ["--log-level", "warning", "--graceful-timeout", "5"]
    process = subprocess.Popen(command, cwd=ROOT, env=env or production_env())
    try:
        server = Gunicorn(process, f"http://127.0.0.1:{port}")
        _wait_until_up(server.base_url)
        yield server
    finally:
        process.send_signal(signal.SIGTERM)
        process.wait(timeout=30)


def _wait_until_up(base_url: str) -> None:
    import requests

    def answers() -> bool:
        try:
            requests.get(f"{base_url}/accounts/login/", timeout=10)
        except requests.RequestException:  # not listening yet, or still loading the app
            return False
        return True

    wait_for(answers, 60, f"gunicorn at {base_url}", every=0.2)


@dataclass
class App:
    """The app on gunicorn over a cluster of the test's own, seeded by `tests.load seed`."""

    cluster: PrivateCluster
    server: Gunicorn
    env: dict
    slug: str
    tokens: list[str]
    usernames: list[str]
    themes: list[str]

    def figures(self) -> dict:
        """tests.load.database_figures, read in a process of its own (this one's database
        connection is the test database's)."""
        done = subprocess.run(
            [sys.executable, "-m", "tests.load", "figures", "--slug", self.slug, *self.tokens],
            cwd=ROOT, env=self.env, capture_output=True, text=True, check=True, timeout=120,
        )  # fmt: skip
        figures = json.loads(done.stdout)
        return {**figures, "stored": {tuple(pair) for pair in figures["stored"]}}


@contextmanager
def app_on_private_postgres(
    *,
    slug: str,
    volunteers: int,
    items: int,
    password: str,
    workers: int = 3,
    threads: int = 2,
    redis_url: str = "",
    pooled: bool = False,
) -> Iterator[App]:
    """Migrate and seed a private cluster, then serve it with production settings over plain
    HTTP; without `redis_url`, Celery runs eagerly and the cache is each process's own. With
    `pooled`, every process (the seeding and migrating one too) reaches the cluster through
    PgBouncer in transaction pooling mode, set as the README's production section says."""
    with private_postgres(migrated=True) as cluster, ExitStack() as stack:
        database = {"DATABASE_URL": cluster.url}
        if pooled:
            port = stack.enter_context(transaction_pooler(cluster.port))
            database = {
                "DATABASE_URL": f"postgres://postgres@127.0.0.1:{port}/concord",
                "DATABASE_POOLED": "1",
            }
        env = production_env(**database, REDIS_URL=redis_url, CACHE_URL=redis_url)
        command = [sys.executable, "-m", "tests.load", "seed", "--slug", slug]
        # "--password=…": a random password may start with "-", which argparse reads as a flag.
        command += [
            "--items",
            str(items),
            "--volunteers",
            str(volunteers),
            f"--password={password}",
        ]
        done = subprocess.run(command, cwd=ROOT, env=env, capture_output=True, text=True)
        if done.returncode:
            raise AssertionError(f"seeding the private cluster failed:\n{done.stderr}")
        seeded = json.loads(done.stdout.strip().splitlines()[-1])
        static_collected()
        with gunicorn_server(workers, threads, env) as server:
            yield App(cluster, server, env, slug, **seeded)
