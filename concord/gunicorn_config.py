"""gunicorn's settings for Concord: `gunicorn -c python:concord.gunicorn_config concord.wsgi`.

Sized for a small machine (the README's two cores): one process per core, each with a few
threads. A request spends much of its time waiting for PostgreSQL (and every label's commit for
the disk), and the threads of a process overlap those waits, so two processes keep both cores
busy; a process more per core would add ~90 MB of memory and no throughput (tests.bench.capacity
measures both). Override with GUNICORN_WORKERS / GUNICORN_THREADS.
"""

import os

bind = os.environ.get("GUNICORN_BIND") or "0.0.0.0:8000"  # blank in .env: the default
workers = int(os.environ.get("GUNICORN_WORKERS") or os.cpu_count() or 1)
worker_class = "gthread"
threads = int(os.environ.get("GUNICORN_THREADS") or 4)
timeout = 120
graceful_timeout = 30
# Behind the TLS proxy the README describes; it keeps connections to gunicorn open.
keepalive = 5
