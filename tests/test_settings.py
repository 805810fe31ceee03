"""Settings come from the environment, with an embedded default; checked in fresh processes."""

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[1]
PROBE = (
    "import django, json; django.setup(); from django.conf import settings as s; "
    "print(json.dumps({'engine': s.DATABASES['default']['ENGINE'], "
    "'eager': s.CELERY_TASK_ALWAYS_EAGER, 'broker': s.CELERY_BROKER_URL, 'debug': s.DEBUG}))"
)


def run_settings(tmp_path, **env):
    clean = {
        k: v
        for k, v in os.environ.items()
        if k not in {"DATABASE_URL", "REDIS_URL", "DEBUG", "SECRET_KEY"}
    }
    clean.update(DJANGO_SETTINGS_MODULE="concord.settings", CONCORD_VAR_DIR=str(tmp_path), **env)
    return subprocess.run(
        [sys.executable, "-c", PROBE],
        cwd=ROOT,
        env=clean,
        capture_output=True,
        text=True,
        check=False,
    )


def test_no_environment_means_sqlite_and_eager_celery(tmp_path):
    result = run_settings(tmp_path, DEBUG="1")
    assert result.returncode == 0, result.stderr
    seen = json.loads(result.stdout)
    assert seen["engine"] == "django.db.backends.sqlite3"
    assert seen["eager"] is True
    assert (tmp_path / "dev-secret-key").exists()


def test_database_and_redis_urls_switch_to_postgres_and_a_real_broker(tmp_path):
    result = run_settings(
        tmp_path,
        DEBUG="1",
        DATABASE_URL="postgres://postgres@127.0.0.1:5432/concord",
        REDIS_URL="redis://127.0.0.1:6379/0",
    )
    seen = json.loads(result.stdout)
    assert seen["engine"] == "django.db.backends.postgresql"  # Django's own backend
    assert seen["eager"] is False
    assert seen["broker"] == "redis://127.0.0.1:6379/0"


def test_no_secret_key_outside_debug_is_refused(tmp_path):
    result = run_settings(tmp_path)
    assert result.returncode != 0
    assert "SECRET_KEY must be set when DEBUG is off" in result.stderr
    assert not (tmp_path / "dev-secret-key").exists()


def run_manage(var_dir, *args, **env):
    """manage.py as the README prints it: no DEBUG, no SECRET_KEY, nothing but the environment."""
    unset = {"DEBUG", "SECRET_KEY", "DATABASE_URL", "REDIS_URL", "CACHE_URL", "HTTPS"}
    clean = {k: v for k, v in os.environ.items() if k not in unset}
    clean.update(CONCORD_VAR_DIR=str(var_dir), **env)
    return subprocess.run(
        [sys.executable, "manage.py", *args],
        cwd=ROOT,
        env=clean,
        capture_output=True,
        text=True,
        check=False,
    )


def test_make_setup_writes_a_key_once_and_manage_py_then_runs_without_debug(tmp_path):
    """`make setup` writes this checkout's key (the rule `make run` and `make test` also reach);
    with it `manage.py check` and a command from the README's table run as printed, with DEBUG
    off; a second `make setup` keeps the same key."""
    if (ROOT / ".env").exists() and "SECRET_KEY" in (ROOT / ".env").read_text():
        pytest.skip(".env names a SECRET_KEY: the local key file is not read")
    key_file = tmp_path / "dev-secret-key"
    make = ["make", "--no-print-directory", "-o", ".venv/.installed", str(key_file)]
    env = {k: v for k, v in os.environ.items() if k not in {"DEBUG", "SECRET_KEY"}}
    env["CONCORD_VAR_DIR"] = str(tmp_path)
    for _ in range(2):
        made = subprocess.run(make, cwd=ROOT, env=env, capture_output=True, text=True, check=False)
        assert made.returncode == 0, made.stdout + made.stderr
    key = key_file.read_text()
    assert len(key) >= 50
    assert key_file.stat().st_mode & 0o077 == 0  # readable by its owner only

    checked = run_manage(tmp_path, "check")
    assert checked.returncode == 0, checked.stderr
    assert "SECRET_KEY" not in checked.stderr
    migrated = run_manage(tmp_path, "migrate", "--noinput")
    assert migrated.returncode == 0, migrated.stderr
    loaded = run_manage(tmp_path, "load_taxonomy", "concord/data/llm-challenge/taxonomy.csv")
    assert loaded.returncode == 0, loaded.stderr
    assert "91 created" in loaded.stdout
    assert key_file.read_text() == key  # used, never rewritten


def test_the_environment_key_wins_over_the_local_file(tmp_path):
    (tmp_path / "dev-secret-key").write_text("local-" + "k" * 60)
    probe = "from django.conf import settings as s; print(s.SECRET_KEY)"
    seen = run_manage(tmp_path, "shell", "-c", probe, SECRET_KEY="environment-" + "e" * 60)
    assert seen.returncode == 0, seen.stderr
    assert seen.stdout.split()[-1] == "environment-" + "e" * 60
    seen = run_manage(tmp_path, "shell", "-c", probe)
    assert seen.returncode == 0, seen.stderr
    assert seen.stdout.split()[-1] == "local-" + "k" * 60


def test_without_the_local_file_manage_py_refuses_and_says_how(tmp_path):
    refused = run_manage(tmp_path, "check")
    assert refused.returncode != 0
    assert "SECRET_KEY must be set when DEBUG is off" in refused.stderr
    assert "make setup" in refused.stderr
    assert not (tmp_path / "dev-secret-key").exists()  # nothing is made up with DEBUG off
    (tmp_path / "dev-secret-key").write_text("")
    refused = run_manage(tmp_path, "check")
    assert refused.returncode != 0
    assert "dev-secret-key is empty" in refused.stderr


def test_the_local_key_file_is_never_committed():
    if not (ROOT / ".git").exists():
        pytest.skip("not a git checkout")
    ignored = subprocess.run(
        ["git", "check-ignore", "-q", "var/dev-secret-key"], cwd=ROOT, check=False
    )
    assert ignored.returncode == 0


def test_production_settings_pass_the_deploy_check(tmp_path):
    """Nothing but a secret key and a host name: the defaults with DEBUG off are the secure ones
    (HTTPS redirect, HSTS, Secure cookies)."""
    unset = {"DEBUG", "DJANGO_ALLOW_ASYNC_UNSAFE", "HTTPS"}
    env = {k: v for k, v in os.environ.items() if k not in unset and not k.startswith("SECURE_")}
    result = deploy_check(env, tmp_path)
    assert result.returncode == 0, result.stdout + result.stderr


def deploy_check(env: dict, var_dir: Path) -> subprocess.CompletedProcess:
    """`manage.py check --deploy` with `env`, a production key and host name added."""
    env = {
        **env,
        "SECRET_KEY": "x" * 20 + "a-long-random-production-key-for-the-check-only",
        "ALLOWED_HOSTS": "concord.example.org",
        "CONCORD_VAR_DIR": str(var_dir),
    }
    return subprocess.run(
        [sys.executable, "manage.py", "check", "--deploy", "--fail-level", "WARNING"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )


def env_example() -> dict[str, str]:
    """.env.example's variables as a .env copied from it holds them (most blank)."""
    lines = (ROOT / ".env.example").read_text().splitlines()
    return dict(line.split("=", 1) for line in lines if line and not line.startswith("#"))


def test_env_example_lists_every_variable_the_settings_and_gunicorn_read():
    settings = (ROOT / "concord" / "settings.py").read_text()
    gunicorn = (ROOT / "concord" / "gunicorn_config.py").read_text()
    read = set(re.findall(r'env(?:\.\w+)?\(\s*"([A-Z_]+)"', settings))
    read |= set(re.findall(r'os\.environ\.get\(\s*"([A-Z_]+)"', gunicorn))
    assert {"CONCORD_VAR_DIR", "GUNICORN_WORKERS"} <= read  # the patterns still match
    assert read <= set(env_example()), read - set(env_example())


def test_a_env_file_copied_from_the_example_starts_with_the_secure_defaults(tmp_path):
    """docker-compose.yml passes .env to every service: `cp .env.example .env` with the secrets
    filled in. A blank line there is no value, so its default applies: SQLite, not a database URL
    without an engine; HTTPS and HSTS on, not off."""
    env = {k: v for k, v in os.environ.items() if k not in {"DATABASE_URL", "REDIS_URL"}}
    result = deploy_check({**env, **env_example()}, tmp_path)
    assert result.returncode == 0, result.stdout + result.stderr


def dockerfile_env() -> dict[str, str]:
    """The variables the Dockerfile's ENV lines set (NAME=value pairs)."""
    text = (ROOT / "Dockerfile").read_text().replace("\\\n", " ")
    lines = [line[4:] for line in text.splitlines() if line.startswith("ENV ")]
    return dict(pair.split("=", 1) for line in lines for pair in line.split())


def test_the_image_collects_static_files_where_its_containers_serve_them_from(tmp_path):
    """collectstatic runs at the image's build, with its ENV; the containers run with .env and
    compose's environment over it (compose's wins), and the concord-var volume over VAR_DIR hides
    whatever the image has there. Both must name one static root, outside the volume, and the
    settings must collect to it."""
    app = yaml.safe_load((ROOT / "docker-compose.yml").read_text())["x-app"]
    build = dockerfile_env()
    run = {**build, **{k: v for k, v in env_example().items() if v}, **app["environment"]}
    static = build["CONCORD_STATIC_ROOT"]
    assert run["CONCORD_STATIC_ROOT"] == static
    (volume,) = [mount.split(":")[1] for mount in app["volumes"]]
    assert run["CONCORD_VAR_DIR"] == volume
    assert not f"{static}/".startswith(f"{volume}/")

    probe = "import django; django.setup(); from django.conf import settings; "
    probe += "print(settings.STATIC_ROOT)"
    env = {**os.environ, "CONCORD_VAR_DIR": str(tmp_path / "var")}
    env.update(CONCORD_STATIC_ROOT=str(tmp_path / "static"), DEBUG="1")
    env["DJANGO_SETTINGS_MODULE"] = "concord.settings"
    result = subprocess.run(
        [sys.executable, "-c", probe], cwd=ROOT, env=env, capture_output=True, text=True
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == str(tmp_path / "static")
    assert (tmp_path / "static").is_dir()  # WhiteNoise wants it before anything is collected


def test_compose_describes_the_production_shape():
    compose = yaml.safe_load((ROOT / "docker-compose.yml").read_text())
    services = compose["services"]
    assert set(services) == {"migrate", "balancer", "web", "worker", "beat", "postgres", "redis"}
    web = services["web"]["command"]
    assert web == "gunicorn -c python:concord.gunicorn_config concord.wsgi:application"
    assert services["migrate"]["command"] == "python manage.py migrate --noinput"
    assert services["worker"]["command"].startswith("celery -A concord worker")
    assert services["beat"]["command"].startswith("celery -A concord beat")
    for name in ("web", "worker", "postgres", "redis"):
        assert "test" in services[name]["healthcheck"], name
    for name in ("web", "worker", "beat"):
        depends_on = services[name]["depends_on"]
        assert depends_on["postgres"]["condition"] == "service_healthy"
        assert depends_on["migrate"]["condition"] == "service_completed_successfully"
    assert {"postgres-data", "redis-data"} <= set(compose["volumes"])
    assert (ROOT / "Dockerfile").exists()


def test_compose_scales_web_and_worker_by_replica_count():
    """`--scale web=N --scale worker=M` needs nothing else: no replica claims a host port or a
    container name, and the one published port is the balancer's, which asks Docker's DNS for
    every web replica again and again rather than once at its start."""
    compose = yaml.safe_load((ROOT / "docker-compose.yml").read_text())
    services = compose["services"]
    for name in ("web", "worker"):
        assert not {"ports", "container_name"} & set(services[name]), name
    assert services["balancer"]["ports"] == ["8000:8000"]
    assert services["web"]["expose"] == ["8000"]
    balancer = compose["configs"]["balancer"]["content"].replace("$$", "$")
    assert "resolver 127.0.0.11 valid=5s" in balancer
    assert "set $web http://web:8000;" in balancer
    assert "proxy_pass $web;" in balancer
