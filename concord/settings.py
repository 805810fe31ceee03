"""Concord settings: one module, environment first, embedded defaults.

No DATABASE_URL -> a SQLite file under var/; no REDIS_URL -> Celery runs tasks eagerly in-process.
Every variable is listed in `.env.example`.
"""

import os
import secrets
import sys
from collections.abc import Iterator, Mapping
from pathlib import Path

# Agreement maths multiplies small matrices: OpenBLAS' thread pool only adds contention with the
# other web and worker processes (a dashboard took 0.7 s single-threaded, up to 6 s threaded on
# 2 shared cores). Set before numpy is first imported; the environment may override it.
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import environ
from django.core.exceptions import ImproperlyConfigured


class _SetVariables(Mapping):
    """The environment as the settings read it: a blank variable (`NAME=`, as a .env copied from
    .env.example holds most of them) is not set, so its default applies. Read as set, a blank
    DATABASE_URL stopped every start (no engine) and a blank HTTPS turned HTTPS off."""

    def __getitem__(self, name: str) -> str:
        value = os.environ[name]
        if value == "":
            raise KeyError(name)
        return value

    def __iter__(self) -> Iterator[str]:
        return (name for name, value in os.environ.items() if value != "")

    def __len__(self) -> int:
        return sum(1 for _ in self)


class _Env(environ.Env):
    ENVIRON = _SetVariables()


BASE_DIR = Path(__file__).resolve().parent.parent
environ.Env.read_env(BASE_DIR / ".env", overwrite=False)  # the process's own environment wins
env = _Env()
VAR_DIR = Path(env.str("CONCORD_VAR_DIR", default=str(BASE_DIR / "var")))
VAR_DIR.mkdir(parents=True, exist_ok=True)
# collectstatic's output: in the image it is collected at build, outside the volume that holds
# VAR_DIR (a volume hides what the image has at its path).
STATIC_ROOT = Path(env.str("CONCORD_STATIC_ROOT", default=str(VAR_DIR / "staticfiles")))
STATIC_ROOT.mkdir(parents=True, exist_ok=True)  # WhiteNoise wants it even before collectstatic

# ---------------------------------------------------------------- core
DEBUG = env.bool("DEBUG", default=False)
ALLOWED_HOSTS = env.list("ALLOWED_HOSTS", default=["127.0.0.1", "localhost"])
CSRF_TRUSTED_ORIGINS = env.list("CSRF_TRUSTED_ORIGINS", default=[])
RUNNING_TESTS = "pytest" in sys.modules


# This checkout's own key, for when the environment names none: `make setup` writes it once (never
# over an existing file), DEBUG and tests make it if missing. A start with DEBUG off and neither is
# refused: production sets SECRET_KEY (docker-compose.yml keeps CONCORD_VAR_DIR on its own volume).
LOCAL_SECRET_KEY_FILE = VAR_DIR / "dev-secret-key"


def _local_secret() -> str:
    path = LOCAL_SECRET_KEY_FILE
    if not path.exists():
        if not (DEBUG or RUNNING_TESTS):
            raise ImproperlyConfigured(
                "SECRET_KEY must be set when DEBUG is off (see .env.example); "
                f"on a local checkout `make setup` writes one to {path}."
            )
        try:  # as the Makefile writes it: owner-only, never over a key already there
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        except FileExistsError:
            pass
        else:
            with os.fdopen(fd, "w") as new:
                new.write(secrets.token_urlsafe(50))
    key = path.read_text().strip()
    if not key:
        raise ImproperlyConfigured(f"{path} is empty: delete it and run `make setup` again.")
    return key


SECRET_KEY = env("SECRET_KEY", default="") or _local_secret()

INSTALLED_APPS = [
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "django.contrib.humanize",  # ordinal(): "3rd label", "第3个标签"
    "rest_framework",
    "rest_framework.authtoken",
    "drf_spectacular",
    "drf_spectacular_sidecar",
    "concord",
    "taxonomy",
    "taxonomy.interviews",
    "ingest",
    "annotation",
]

MIDDLEWARE = [
    "django.middleware.security.SecurityMiddleware",
    "concord.middleware.ContentSecurityPolicyMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    # After sessions, before common: the language comes from the cookie the top bar's switch sets
    # (set_language), else from the browser's Accept-Language, else LANGUAGE_CODE.
    "django.middleware.locale.LocaleMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    "concord.middleware.InputCheckMiddleware",
]

ROOT_URLCONF = "concord.urls"
WSGI_APPLICATION = "concord.wsgi.application"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [BASE_DIR / "templates"],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.template.context_processors.i18n",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
            ],
        },
    },
]

# ---------------------------------------------------------------- database
DATABASES = {
    "default": env.db("DATABASE_URL", default=f"sqlite:///{VAR_DIR / 'concord.sqlite3'}"),
}
DATABASES["default"]["CONN_MAX_AGE"] = env.int("CONN_MAX_AGE", default=60)
# A kept connection is checked before a request reuses it: after PostgreSQL restarts, the first
# request reconnects instead of failing on the dead connection (Django's own check, SELECT 1).
DATABASES["default"]["CONN_HEALTH_CHECKS"] = True
# Behind a connection pooler in transaction mode (PgBouncer's pool_mode = transaction), a client's
# session on the server lasts one transaction. Django's docs: server-side cursors (QuerySet
# .iterator() outside a transaction, the streamed exports) must then be off. The rest of Concord
# keeps its session state within a transaction already (transaction advisory locks, SET LOCAL)
# and sends plain SQL (no prepared statements). tests/test_pooler.py runs the app through one.
DATABASES["default"]["DISABLE_SERVER_SIDE_CURSORS"] = env.bool("DATABASE_POOLED", default=False)
# SQLite (the embedded default, `make run`): runserver answers on threads, and after Enter the
# labeling page sends the label and asks for the next item at once, two writers. With SQLite's
# defaults about one save in four failed ("database is locked"): a transaction that starts as a
# reader cannot wait to become the writer. So: WAL (readers never block the writer, nor it them),
# write transactions that take the lock when they begin (then they can wait for it), and a busy
# timeout to wait with. synchronous=NORMAL is WAL's usual pairing (no corruption on a crash).
# tests/browser/test_demo_sqlite.py labels on the demo as `make run` serves it.
if DATABASES["default"]["ENGINE"] == "django.db.backends.sqlite3":
    DATABASES["default"]["OPTIONS"] = {
        "transaction_mode": "IMMEDIATE",
        "init_command": "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL;",
        "timeout": 20,  # seconds a writer waits for the lock before "database is locked"
        **DATABASES["default"].get("OPTIONS", {}),
    }
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

# ---------------------------------------------------------------- auth & security
AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.UserAttributeSimilarityValidator"},
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
    # Judges no password: Django tells it of every new password (own change, reset, admin,
    # `changepassword`), and it revokes the person's API token (concord.tokens).
    {"NAME": "concord.tokens.RevokeTokenOnNewPassword"},
]
if RUNNING_TESTS:  # hashing cost buys nothing in tests and slows every persona down
    PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
LOGIN_URL = "login"
LOGIN_REDIRECT_URL = "home"
LOGOUT_REDIRECT_URL = "login"
# Password-reset mail (issue 14): printed to the console unless EMAIL_URL names an SMTP server,
# e.g. smtp+tls://user:password@smtp.example.org:587 (django-environ's email URL).
_EMAIL = env.email_url("EMAIL_URL", default="consolemail://")
EMAIL_BACKEND = _EMAIL["EMAIL_BACKEND"]
EMAIL_HOST = _EMAIL.get("EMAIL_HOST") or "localhost"
EMAIL_PORT = _EMAIL.get("EMAIL_PORT") or 25
EMAIL_HOST_USER = _EMAIL.get("EMAIL_HOST_USER") or ""
EMAIL_HOST_PASSWORD = _EMAIL.get("EMAIL_HOST_PASSWORD") or ""
EMAIL_USE_TLS = bool(_EMAIL.get("EMAIL_USE_TLS"))
EMAIL_USE_SSL = bool(_EMAIL.get("EMAIL_USE_SSL"))
DEFAULT_FROM_EMAIL = env("DEFAULT_FROM_EMAIL", default="concord@localhost")
PASSWORD_RESET_TIMEOUT = env.int("PASSWORD_RESET_TIMEOUT", default=3 * 24 * 3600)
# Failed sign-ins allowed per username and per client address before a pause.
LOGIN_FAILURE_LIMIT = env.int("LOGIN_FAILURE_LIMIT", default=5)
LOGIN_FAILURE_LIMIT_PER_ADDRESS = env.int("LOGIN_FAILURE_LIMIT_PER_ADDRESS", default=50)
LOGIN_FAILURE_WINDOW_SECONDS = env.int("LOGIN_FAILURE_WINDOW_SECONDS", default=900)
# Password-reset mails asked for one e-mail address, and from one client address, per window.
PASSWORD_RESET_LIMIT = env.int("PASSWORD_RESET_LIMIT", default=3)
PASSWORD_RESET_LIMIT_PER_ADDRESS = env.int("PASSWORD_RESET_LIMIT_PER_ADDRESS", default=20)
PASSWORD_RESET_WINDOW_SECONDS = env.int("PASSWORD_RESET_WINDOW_SECONDS", default=3600)
# Reverse proxies in front of Concord that append to X-Forwarded-For (the TLS proxy: 1). The
# client's address (per-address throttling) is the N-th from the right of that header; 0 takes
# REMOTE_ADDR and ignores the header, which any client can write.
TRUSTED_PROXY_COUNT = env.int("TRUSTED_PROXY_COUNT", default=0)
if TRUSTED_PROXY_COUNT < 0:
    raise ImproperlyConfigured("TRUSTED_PROXY_COUNT counts proxies: 0 or more.")

# Production is HTTPS only, behind a TLS proxy that sets X-Forwarded-Proto: plain HTTP redirects,
# HSTS, Secure cookies. HTTPS=0 is for plain HTTP on a trusted network (the tests' gunicorn).
HTTPS = env.bool("HTTPS", default=not (DEBUG or RUNNING_TESTS))
SESSION_COOKIE_SECURE = HTTPS
CSRF_COOKIE_SECURE = HTTPS
SESSION_COOKIE_HTTPONLY = True
SECURE_CONTENT_TYPE_NOSNIFF = True
SECURE_REFERRER_POLICY = "same-origin"
X_FRAME_OPTIONS = "DENY"
SECURE_SSL_REDIRECT = HTTPS
SECURE_HSTS_SECONDS = env.int("SECURE_HSTS_SECONDS", default=31_536_000 if HTTPS else 0)
SECURE_HSTS_INCLUDE_SUBDOMAINS = env.bool("SECURE_HSTS_INCLUDE_SUBDOMAINS", default=HTTPS)
SECURE_HSTS_PRELOAD = env.bool("SECURE_HSTS_PRELOAD", default=HTTPS)
SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")


def _site_url_default() -> str:
    """Where `make run` serves in DEBUG and tests; else the first of ALLOWED_HOSTS."""
    if DEBUG or RUNNING_TESTS:
        return "http://127.0.0.1:8000"
    host = ALLOWED_HOSTS[0] if ALLOWED_HOSTS else ""
    if host in ("", "*") or host.startswith("."):
        raise ImproperlyConfigured("SITE_URL must be set when ALLOWED_HOSTS has no plain name.")
    return f"{'https' if HTTPS else 'http'}://{host}"


# The address people reach Concord at (scheme, host, port and any path prefix): password-reset
# links start with it. Never taken from a request, whose Host header the client writes.
SITE_URL = env("SITE_URL", default="") or _site_url_default()
if not SITE_URL.startswith(("http://", "https://")):
    raise ImproperlyConfigured("SITE_URL is an http:// or https:// address.")

# ---------------------------------------------------------------- cache
REDIS_URL = env("REDIS_URL", default="")
CACHE_URL = env(
    "CACHE_URL", default=REDIS_URL
)  # a separate Redis db keeps cache.clear() off the broker
# The cache only speeds things up and throttles sign-ins: with Redis down it answers "miss" after
# a short timeout (django-redis IGNORE_EXCEPTIONS, logged), so signing in and labeling go on.
CACHES = {
    "default": (
        {
            "BACKEND": "django_redis.cache.RedisCache",
            "LOCATION": CACHE_URL,
            "OPTIONS": {
                "IGNORE_EXCEPTIONS": True,
                "SOCKET_CONNECT_TIMEOUT": 0.5,
                "SOCKET_TIMEOUT": 0.5,
            },
        }
        if CACHE_URL
        else {"BACKEND": "django.core.cache.backends.locmem.LocMemCache"}
    )
}
DJANGO_REDIS_LOG_IGNORED_EXCEPTIONS = True

# ---------------------------------------------------------------- celery
CELERY_BROKER_URL = REDIS_URL or "memory://"
CELERY_RESULT_BACKEND = REDIS_URL or None
CELERY_TASK_ALWAYS_EAGER = not REDIS_URL  # no broker: tasks run in-process
CELERY_TASK_EAGER_PROPAGATES = True
CELERY_TASK_ACKS_LATE = True  # a killed worker's task comes back ...
CELERY_TASK_REJECT_ON_WORKER_LOST = True  # ... and services are idempotent, so a rerun is harmless
CELERY_WORKER_PREFETCH_MULTIPLIER = 1
# A worker child whose peak RSS passed this (KiB) is replaced once its task ends: a big import
# leaves its process holding what the allocator kept (a 10x label import: 87 -> 160 MB), and
# the next heavy task would start from there (annotation.figures.tallies.figures_rebuild_queue).
# A fresh child is about 71 MiB (concord/celery.py), so light tasks never trip it.
CELERY_WORKER_MAX_MEMORY_PER_CHILD = env.int("CELERY_WORKER_MAX_MEMORY_PER_CHILD", default=150_000)
CELERY_BROKER_CONNECTION_RETRY_ON_STARTUP = True
CELERY_TASK_DEFAULT_QUEUE = env("CELERY_QUEUE", default="concord")
CELERY_TASK_ROUTES = ("concord.celery.route",)  # tracker tasks on a queue of their own
# Tasks outside a `tasks` module, which autodiscovery would not find: the password-reset mail.
CELERY_IMPORTS = ["concord.auth"]
# Jobs report through their database rows, so results are kept only for the liveness probe; a
# web process then never waits on (or is broken by) a result store that is down.
CELERY_TASK_IGNORE_RESULT = True
# With Redis down, queueing gives up within about a second (concord.tasks.send); the job's row
# waits and the stale-job sweep sends it again.
CELERY_BROKER_CONNECTION_TIMEOUT = 1.0
CELERY_TASK_PUBLISH_RETRY_POLICY = {
    "max_retries": 2,
    "interval_start": 0,
    "interval_step": 0.25,
    "interval_max": 0.5,
}
# Seconds without a heartbeat before a job counts as abandoned (its worker was killed) and the
# sweep sends it again.
JOB_STALE_SECONDS = env.int("JOB_STALE_SECONDS", default=120)
JOB_SWEEP_SECONDS = env.float("JOB_SWEEP_SECONDS", default=60.0)
# Days an export's file is kept for download; then it is deleted (the job's record stays).
EXPORT_KEEP_DAYS = env.int("EXPORT_KEEP_DAYS", default=30)

# ---------------------------------------------------------------- API
REST_FRAMEWORK = {
    # the token first: DRF answers a request it cannot authenticate with the first class's
    # challenge, so a missing, wrong or revoked token is a 401 with `WWW-Authenticate: Token`
    # (the session's class has no challenge: a 403)
    "DEFAULT_AUTHENTICATION_CLASSES": [
        "concord.tokens.PreparedTokenAuthentication",
        "rest_framework.authentication.SessionAuthentication",
    ],
    "DEFAULT_PERMISSION_CLASSES": ["rest_framework.permissions.IsAuthenticated"],
    "DEFAULT_SCHEMA_CLASS": "drf_spectacular.openapi.AutoSchema",
    "DEFAULT_PAGINATION_CLASS": "rest_framework.pagination.PageNumberPagination",
    "PAGE_SIZE": 100,
    "EXCEPTION_HANDLER": "concord.errors.api_exception_handler",
    # Per person, over a fixed second and a fixed minute (concord.auth): 429 with Retry-After.
    "DEFAULT_THROTTLE_CLASSES": ["concord.auth.BurstThrottle", "concord.auth.SustainedThrottle"],
    "DEFAULT_THROTTLE_RATES": {
        "burst": env("API_THROTTLE_BURST", default="100/s"),
        "sustained": env("API_THROTTLE_SUSTAINED", default="3600/m"),
    },
    # DRF's parsers with a body cap, a JSON depth limit and the NUL/surrogate check (issue 12).
    "DEFAULT_PARSER_CLASSES": [
        "concord.parsers.JSONParser",
        "concord.parsers.FormParser",
        "concord.parsers.MultiPartParser",
    ],
}
# API request bodies over this many bytes are refused (413) before they are read: DRF parses
# bodies itself, so DATA_UPLOAD_MAX_MEMORY_SIZE does not cover the API. The URL-list import takes
# more (ingest.api.views.UrlListImportApi.max_body_bytes).
API_MAX_BODY_BYTES = env.int("API_MAX_BODY_BYTES", default=1024 * 1024)
# A JSON/JSONL file of issues for an item import (annotation.projects.api) may be this large.
ITEM_IMPORT_MAX_BYTES = env.int("ITEM_IMPORT_MAX_BYTES", default=50 * 1024 * 1024)
# JSON bodies nested deeper than this (arrays and objects) are refused with a 400.
API_MAX_JSON_DEPTH = env.int("API_MAX_JSON_DEPTH", default=32)
SPECTACULAR_SETTINGS = {
    "TITLE": "Concord API",
    "DESCRIPTION": "Taxonomy, projects and agreement for multi-volunteer issue labeling.",
    "VERSION": "0.1.0",
    "SERVE_INCLUDE_SCHEMA": False,
    "SERVE_PERMISSIONS": ["rest_framework.permissions.IsAuthenticated"],
    "SWAGGER_UI_DIST": "SIDECAR",
    "SWAGGER_UI_FAVICON_HREF": "SIDECAR",
    "REDOC_DIST": "SIDECAR",
    # One name per choice set, wherever a serializer uses it: export jobs, item and label-file
    # imports share their statuses; project, members, taxonomy and pilot endpoints share these.
    "ENUM_NAME_OVERRIDES": {
        "JobStatusEnum": "annotation.models.JobStatus",
        "LevelEnum": "taxonomy.models.Level",
        "PilotStatusEnum": "annotation.models.PilotStatus",
    },
}

# ---------------------------------------------------------------- i18n & static
LANGUAGE_CODE = "en"
# Each language named in itself, so the switch reads right whichever language is on.
LANGUAGES = [("en", "English"), ("zh-hans", "简体中文")]
# The Chinese catalog (locale/zh_Hans/LC_MESSAGES/django.po); the .mo is built by
# `manage.py compilemessages` in make setup, .ci/run and the Dockerfile, never committed.
LOCALE_PATHS = [BASE_DIR / "locale"]
# A chosen language is remembered for a year in this browser (the cookie set_language writes).
LANGUAGE_COOKIE_AGE = 365 * 24 * 3600
LANGUAGE_COOKIE_SAMESITE = "Lax"
LANGUAGE_COOKIE_SECURE = HTTPS
LANGUAGE_COOKIE_HTTPONLY = True  # read by the server only; no script needs it
TIME_ZONE = "UTC"
USE_I18N = True
USE_TZ = True
STATIC_URL = "static/"
STATICFILES_DIRS = [BASE_DIR / "static"]
STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    "staticfiles": {"BACKEND": "whitenoise.storage.CompressedStaticFilesStorage"},
}
# Each test's client loads the middleware anew, and WhiteNoise's scans all ~380 static files as it
# starts (a tenth of the suite's Python time); in tests it looks a file up when one is asked for.
WHITENOISE_AUTOREFRESH = DEBUG or RUNNING_TESTS  # DEBUG: WhiteNoise's own default

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "handlers": {"console": {"class": "logging.StreamHandler"}},
    "root": {"handlers": ["console"], "level": env("LOG_LEVEL", default="INFO")},
}

# ---------------------------------------------------------------- Concord
# The study's data (taxonomy, details, labels, URL lists), copied unmodified; demo and tests use it.
STUDY_DATA_DIR = BASE_DIR / "concord" / "data" / "llm-challenge"
# The study taxonomy's Chinese names and definitions: ours, beside the study's unmodified files.
STUDY_TAXONOMY_ZH = BASE_DIR / "concord" / "data" / "taxonomy_zh.csv"
DEMO_DATA_DIR = BASE_DIR / "concord" / "data" / "demo"

# ---------------------------------------------------------------- harvesting
GITHUB_API_URL = env("GITHUB_API_URL", default="https://api.github.com")
GITEE_API_URL = env("GITEE_API_URL", default="https://gitee.com/api/v5")
GITHUB_TOKEN = env("GITHUB_TOKEN", default="")
GITEE_TOKEN = env("GITEE_TOKEN", default="")
# With a token, GitHub harvests list issues through GraphQL (comments nested, no pull requests)
GITHUB_GRAPHQL = env.bool("GITHUB_GRAPHQL", default=True)
HARVEST_MAX_RETRIES = env.int("HARVEST_MAX_RETRIES", default=4)  # per request, on 5xx / timeouts
# Each request's whole time (headers and body), not each read's: a trickling answer is retried
HARVEST_REQUEST_SECONDS = env.float("HARVEST_REQUEST_SECONDS", default=120.0)
HARVEST_BACKOFF_SECONDS = env.float("HARVEST_BACKOFF_SECONDS", default=1.0)  # doubles per retry
HARVEST_SECONDARY_WAIT_SECONDS = env.float("HARVEST_SECONDARY_WAIT_SECONDS", default=60.0)
HARVEST_PAGES_PER_TASK = env.int("HARVEST_PAGES_PER_TASK", default=25)  # short tasks resume well
# Bounds that turn a host's loop into a failure in words (README, "Harvesting"):
HARVEST_IDLE_REQUESTS = env.int("HARVEST_IDLE_REQUESTS", default=100)  # beyond re-walking once
HARVEST_MAX_RESTARTS = env.int("HARVEST_MAX_RESTARTS", default=3)  # fresh restarts after a 422
HARVEST_MAX_RATE_WAITS = env.int("HARVEST_MAX_RATE_WAITS", default=8)  # rate limits in a row
HARVEST_MAX_WAIT_SECONDS = env.float("HARVEST_MAX_WAIT_SECONDS", default=1800.0)  # growth cap
# A re-harvest asks for what changed since the last run began on the host's clock, less this
HARVEST_SINCE_MARGIN_SECONDS = env.float("HARVEST_SINCE_MARGIN_SECONDS", default=600.0)
CELERY_BEAT_SCHEDULE = {
    "harvest-resume-stale": {
        "task": "ingest.tasks.harvest_resume_stale",
        "schedule": JOB_SWEEP_SECONDS,
    },
    "details-resume-stale": {
        "task": "ingest.tasks.details_resume_stale",
        "schedule": JOB_SWEEP_SECONDS,
    },
    "jobs-resume-stale": {
        "task": "annotation.tasks.jobs_resume_stale",
        "schedule": JOB_SWEEP_SECONDS,
    },
    "figures-compact": {
        "task": "annotation.tasks.figures_compact_crowded",
        "schedule": JOB_SWEEP_SECONDS,
    },
    "export-files-expire": {"task": "annotation.tasks.export_files_expire", "schedule": 86_400},
}
