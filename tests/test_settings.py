"""Settings come from the environment, with an embedded default; checked in fresh processes."""

import json
import os
import re
import subprocess
import sys
from pathlib import Path

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
    assert seen["engine"] == "concord.postgresql"  # Django's, with a cheaper health check
    assert seen["eager"] is False
    assert seen["broker"] == "redis://127.0.0.1:6379/0"


def test_no_secret_key_outside_debug_is_refused(tmp_path):
    result = run_settings(tmp_path)
    assert result.returncode != 0
    assert "SECRET_KEY must be set when DEBUG is off" in result.stderr
    assert not (tmp_path / "dev-secret-key").exists()


def test_production_settings_pass_the_deploy_check(tmp_path):
    """Nothing but a secret key and a host name: the defaults with DEBUG off are the secure ones
    (HTTPS redirect, HSTS, Secure cookies)."""
    unset = {"DEBUG", "DJANGO_ALLOW_ASYNC_UNSAFE", "HTTPS"}
    env = {k: v for k, v in os.environ.items() if k not in unset and not k.startswith("SECURE_")}
    env.update(
        SECRET_KEY="x" * 20 + "a-long-random-production-key-for-the-check-only",
        CONCORD_VAR_DIR=str(tmp_path),
        ALLOWED_HOSTS="concord.example.org",
    )
    result = subprocess.run(
        [sys.executable, "manage.py", "check", "--deploy", "--fail-level", "WARNING"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    assert result.returncode == 0, result.stdout + result.stderr


def test_env_example_lists_every_variable_the_settings_read():
    source = (ROOT / "concord" / "settings.py").read_text()
    listed = {
        line.split("=", 1)[0]
        for line in (ROOT / ".env.example").read_text().splitlines()
        if line and not line.startswith("#")
    }
    read = set(re.findall(r'env(?:\.\w+)?\(\s*"([A-Z_]+)"', source))
    read |= set(re.findall(r'Env\(\)\.str\(\s*"([A-Z_]+)"', source))
    assert read <= listed, read - listed


def test_compose_describes_the_production_shape():
    compose = yaml.safe_load((ROOT / "docker-compose.yml").read_text())
    services = compose["services"]
    assert set(services) == {"web", "worker", "beat", "postgres", "redis"}
    web = services["web"]["command"]
    assert "gunicorn -c python:concord.gunicorn_config concord.wsgi:application" in web
    assert services["worker"]["command"].startswith("celery -A concord worker")
    assert services["beat"]["command"].startswith("celery -A concord beat")
    for name in ("web", "worker", "postgres", "redis"):
        assert "test" in services[name]["healthcheck"], name
    for name in ("web", "worker", "beat"):
        assert services[name]["depends_on"]["postgres"]["condition"] == "service_healthy"
    assert {"postgres-data", "redis-data"} <= set(compose["volumes"])
    assert (ROOT / "Dockerfile").exists()
