"""Load test with faults: 50 simulated volunteers label the study-scale project through gunicorn
for 10 minutes while gunicorn workers are SIGKILLed and Redis is killed and restarted.

`python -m tests.bench.soak` (`make soak`; `--seconds` shortens it: CI runs 30 s through
tests/test_load_faults.py). On PostgreSQL (default database `concord_bench_labeling`, shared with
the labeling benchmark: the study-scale project, 38,742 items x 7 labels, is imported once), with a
Redis of its own (it gets killed). Volunteers behave as in tests.load: a request that fails in a
retryable way (a dropped connection, a 503) is sent again.

Faults, at fractions of the run: 30% and 70% a gunicorn worker is SIGKILLed (its requests in
flight die with it; the arbiter starts another); 45% Redis is killed, 55% started again (empty).

Prints requests, error rate, p50/p95/p99, labels acknowledged vs stored, items past k and items
whose label count disagrees with their labels (a half-done write); exits 1 unless lost, past k
and miscounted are 0 and no request got a wrong answer.
"""

from __future__ import annotations

import argparse
import os
import sys
import threading
import time

from tests.load import (
    Tally,
    database_figures,
    drive,
    open_items_reset,
    outcome,
    print_latencies,
)
from tests.stack import Gunicorn, PrivateRedis, gunicorn_server, private_redis, production_env

OPEN_ITEMS = 5_000
OPEN_OWNER, VOLUNTEER_PREFIX = "soak-open", "soakvol-"
GUNICORN_KILLS = (0.30, 0.70)
REDIS_DOWN = (0.45, 0.55)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=600.0)
    parser.add_argument("--volunteers", type=int, default=50)
    parser.add_argument("--think", type=float, default=1.0)
    args = parser.parse_args(argv)

    from tests.bench.labeling import prepared_study_project

    project = prepared_study_project()
    with private_redis() as redis:
        figures = soak(project, redis, args.seconds, args.volunteers, args.think)
    return 0 if passed(figures) else 1


def soak(
    project,
    redis: PrivateRedis,
    seconds: float,
    volunteers: int,
    think: float,
    database_url: str | None = None,
) -> dict:
    """Run the volunteers and the faults against gunicorn on `database_url` (default: the
    environment's, which this process uses too); print and return the figures."""
    tokens = open_items_reset(
        project, volunteers=volunteers, items=OPEN_ITEMS, owner=OPEN_OWNER, prefix=VOLUNTEER_PREFIX
    )
    themes = list(project.taxonomy.nodes.filter(level="theme").values_list("code", flat=True))
    env = production_env(REDIS_URL=redis.url, CACHE_URL=redis.url.replace("/0", "/1"))
    if database_url:
        env["DATABASE_URL"] = database_url
    events: list[str] = []
    workers = 2 * (os.cpu_count() or 1) + 1
    print(f"{volunteers} volunteers for {seconds:.0f} s; {OPEN_ITEMS:,} open items; k = 7")
    with gunicorn_server(workers, 1, env) as server:
        faults = threading.Thread(target=_faults, args=(server, redis, seconds, events))
        started = time.monotonic()
        faults.start()
        tally = drive(server.base_url, project.slug, tokens, themes, seconds, think)
        elapsed = time.monotonic() - started
        faults.join()
    figures = report(tally, outcome(tally, database_figures(project.slug, tokens)), elapsed)
    return {**figures, "faults": events}


def _faults(server: Gunicorn, redis: PrivateRedis, seconds: float, events: list[str]) -> None:
    schedule = [(at, "kill") for at in GUNICORN_KILLS]
    schedule += [(REDIS_DOWN[0], "redis-stop"), (REDIS_DOWN[1], "redis-start")]
    started = time.monotonic()
    for at, fault in sorted(schedule):
        time.sleep(max(0.0, started + at * seconds - time.monotonic()))
        if fault == "kill":
            events.append(f"{at:.0%}: SIGKILL gunicorn worker {server.kill_a_worker()}")
        elif fault == "redis-stop":
            redis.stop()
            events.append(f"{at:.0%}: Redis killed")
        else:
            redis.start()
            events.append(f"{at:.0%}: Redis started again (empty)")
        print(f"  {events[-1]}")


def report(tally: Tally, figures: dict, seconds: float) -> dict:
    retried = sum(tally.retryable.values())
    figures = {
        **figures,
        "requests": tally.requests,
        "retried": retried,
        "error_rate": (retried + len(tally.errors)) / max(tally.requests + retried, 1),
        "wrong_answers": len(tally.errors),
    }
    print(f"\nresults over {seconds:.0f} s:")
    print_latencies(tally, seconds)
    print(
        f"  requests {tally.requests}; failed and retried {retried} "
        f"({dict(tally.retryable)}); wrong answers {len(tally.errors)}; "
        f"error rate {figures['error_rate']:.2%}"
    )
    print(
        f"  labels acknowledged {figures['acknowledged']}, stored {figures['stored']}, "
        f"lost {figures['lost']}, stored but never acknowledged {figures['unacknowledged']}"
    )
    print(
        f"  items past k: {figures['over_k']}; items whose count disagrees with their labels: "
        f"{figures['miscounted']}"
    )
    for error in tally.errors[:5]:
        print(f"  WRONG {error}")
    verdict = "PASS" if passed(figures) else "FAIL"
    print(f"  lost 0, past k 0, miscounted 0, no wrong answer: {verdict}")
    return figures


def passed(figures: dict) -> bool:
    wrong = ("lost", "over_k", "miscounted", "wrong_answers")
    return all(figures[name] == 0 for name in wrong)


if __name__ == "__main__":
    sys.exit(main())
