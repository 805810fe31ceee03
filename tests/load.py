"""Simulated volunteers over the real HTTP API, for the labeling benchmark, the load test and the
fault tests.

Each volunteer asks for its next item (POST /api/projects/<slug>/next-item/), waits its think
time, submits a theme (PUT .../items/<id>/annotation/), waits again, and so on. Like the labeling
page, a volunteer whose request fails for a reason worth retrying (503 while the database
restarts, a connection dropped by a killed server process) sends the same request again a moment
later: a repeated submit is stored once. Every label the server acknowledged (201, or 200 for a
repeat) is remembered, so a run can check that each of them is stored.

`drive` is a closed loop (each volunteer sends its next request when the last was answered);
`drive_open` an open one: labels arrive at a fixed total rate on a clock, whatever the answers
take (tests.bench.scale).
"""

from __future__ import annotations

import http.client
import json
import random
import statistics
import threading
import time
from collections import Counter
from dataclasses import dataclass, field
from urllib.parse import urlsplit

RETRY_PAUSE = 0.5  # seconds before a volunteer sends a failed request again
GRACE = 30.0  # seconds a request in progress at the end may take to get through


@dataclass
class Tally:
    """What the simulated volunteers saw; appended to from many threads."""

    next_ms: list[float] = field(default_factory=list)
    submit_ms: list[float] = field(default_factory=list)
    acknowledged: set[tuple[str, int]] = field(default_factory=set)  # (volunteer token, item)
    empty: int = 0
    retryable: Counter = field(default_factory=Counter)  # "503", "connection"
    errors: list[str] = field(default_factory=list)  # answers that are wrong, not retryable
    behind_ms: list[float] = field(default_factory=list)  # open loop: arrival started late by
    lock: threading.Lock = field(default_factory=threading.Lock)

    @property
    def requests(self) -> int:
        return len(self.next_ms) + len(self.submit_ms)

    def note_retryable(self, kind: str, response=None) -> None:
        if response is not None and not _is_retryable_answer(response):
            self.errors.append(f"503 without Retry-After or retryable detail: {response.text}")
        with self.lock:
            self.retryable[kind] += 1


def _is_retryable_answer(response) -> bool:
    try:
        body = response.json()
    except ValueError:
        return False
    return bool(response.headers.get("Retry-After")) and body.get("retryable") is True


def drive(
    base_url: str, slug: str, tokens: list[str], themes: list[str], seconds: float, think: float
) -> Tally:
    """Run one thread per token for `seconds`; returns what they saw."""
    tally = Tally()
    stop_at = time.monotonic() + seconds
    threads = [
        threading.Thread(
            target=_volunteer,
            args=(base_url, slug, token, themes, stop_at, think, tally, random.Random(n)),
        )
        for n, token in enumerate(tokens)
    ]
    _run_together(threads)
    return tally


def _run_together(threads: list[threading.Thread]) -> None:
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()


class Reply:
    """An HTTP answer, read whole."""

    def __init__(self, status_code: int, headers, body: bytes) -> None:
        self.status_code, self.headers, self.content = status_code, headers, body

    @property
    def text(self) -> str:
        return self.content.decode("utf-8", "replace")

    def json(self):
        return json.loads(self.content)


class Session:
    """One volunteer's keep-alive HTTP connection, on the standard library's http.client: a
    simulated volunteer shares the server's two cores, and requests' per-call work cost about
    as much CPU as a third of the server's own (tests.bench.capacity prints the client's CPU per
    label). A dropped connection raises ConnectionError and is made anew on the next call."""

    def __init__(self, base_url: str, token: str) -> None:
        parts = urlsplit(base_url)
        self.host, self.port = parts.hostname, parts.port
        self.headers = {"Authorization": f"Token {token}", "Accept": "application/json"}
        self.connection: http.client.HTTPConnection | None = None

    def request(self, method: str, path: str, *, timeout: float, json=None) -> Reply:
        body = None if json is None else _json_bytes(json)
        headers = dict(self.headers)
        if body is not None:
            headers["Content-Type"] = "application/json"
        try:
            if self.connection is None:
                self.connection = http.client.HTTPConnection(self.host, self.port, timeout=timeout)
            self.connection.request(method.upper(), path, body=body, headers=headers)
            answer = self.connection.getresponse()
            return Reply(answer.status, answer.headers, answer.read())
        except (OSError, http.client.HTTPException) as exc:  # refused, reset, cut off mid-answer
            self.close()
            raise ConnectionError(str(exc)) from exc

    def close(self) -> None:
        if self.connection is not None:
            self.connection.close()
            self.connection = None


def _json_bytes(value) -> bytes:
    return json.dumps(value).encode()


def _volunteer(base_url, slug, token, themes, stop_at, think, tally: Tally, rng) -> None:
    session = Session(base_url, token)
    time.sleep(rng.uniform(0, think))  # volunteers do not all start in the same millisecond
    while time.monotonic() < stop_at:
        if not _label_once(session, slug, token, themes, stop_at, think, tally, rng):
            return


def _label_once(session, slug, token, themes, stop_at, think, tally: Tally, rng) -> bool:
    """Ask for the next item, wait `think`, submit a theme, wait again; False once the next-item
    request could not get through before `stop_at`."""
    api = f"/api/projects/{slug}"
    response = _call(session, "post", f"{api}/next-item/", tally.next_ms, tally, stop_at)
    if response is None:
        return False
    if response.status_code == 204:
        tally.empty += 1
        time.sleep(think)
        return True
    if response.status_code != 200:
        tally.errors.append(f"next-item {response.status_code}: {response.text[:200]}")
        time.sleep(think)
        return True
    item = response.json()["id"]
    time.sleep(think)
    label = {"node": rng.choice(themes), "summary": "load test label"}
    # Once asked for, a label is pursued past the end of the run: a volunteer does not walk
    # away from a half-sent form, and every acknowledgement must be checked against storage.
    response = _call(
        session,
        "put",
        f"{api}/items/{item}/annotation/",
        tally.submit_ms,
        tally,
        time.monotonic() + GRACE,
        json=label,
    )
    if response is None:
        tally.errors.append(f"submit on item {item} never got through")
    elif response.status_code in (200, 201):
        with tally.lock:
            tally.acknowledged.add((token, item))
    elif response.status_code != 409:
        tally.errors.append(f"submit {response.status_code}: {response.text[:200]}")
    time.sleep(think)
    return True


def drive_open(
    base_url: str, slug: str, tokens: list[str], themes: list[str], seconds: float, rate: float
) -> Tally:
    """An open loop: labels arrive at `rate` per second in all, spread evenly over the tokens'
    sessions and the clock, whatever the answers take. Each arrival is next-item then submit.

    Latencies (next_ms, submit_ms) run from when a request is sent, so they measure the server.
    A session is one volunteer, who labels one item at a time: an arrival due while the
    volunteer's previous one is still answered starts when that ends, and how late it started
    is kept in `behind_ms` (so a queue forming on the client side is shown, not hidden)."""
    tally = Tally()
    start = time.monotonic() + 0.5  # every thread running before the first arrival
    every = len(tokens) / rate  # one volunteer's arrivals are this far apart
    threads = [
        threading.Thread(
            target=_volunteer_on_schedule,
            args=(base_url, slug, token, themes, tally, random.Random(n)),
            kwargs={"first": start + n / rate, "every": every, "stop_at": start + seconds},
        )
        for n, token in enumerate(tokens)
    ]
    _run_together(threads)
    return tally


def _volunteer_on_schedule(
    base_url, slug, token, themes, tally: Tally, rng, *, first: float, every: float, stop_at: float
) -> None:
    session = Session(base_url, token)
    due = first
    while due < stop_at:
        time.sleep(max(0.0, due - time.monotonic()))
        behind = (time.monotonic() - due) * 1000
        with tally.lock:
            tally.behind_ms.append(behind)
        if not _label_once(session, slug, token, themes, stop_at + GRACE, 0.0, tally, rng):
            return
        due += every


def _call(session: Session, method, url, timings, tally: Tally, give_up_at, **kwargs):
    """One request, sent again while the failure is retryable; None if it never got through."""
    while time.monotonic() < give_up_at:
        started = time.perf_counter()
        try:
            response = session.request(method, url, timeout=30, **kwargs)
        except ConnectionError:  # the server process died mid-request, or restarts
            tally.note_retryable("connection")
            time.sleep(RETRY_PAUSE)
            continue
        timings.append((time.perf_counter() - started) * 1000)
        if response.status_code == 503:
            tally.note_retryable("503", response)
            time.sleep(RETRY_PAUSE)
            continue
        return response
    return None


def percentiles(samples: list[float]) -> tuple[float, float, float]:
    """p50, p95, p99 (ms)."""
    cuts = statistics.quantiles(samples, n=100, method="inclusive")
    return cuts[49], cuts[94], cuts[98]


def print_latencies(tally: Tally, seconds: float) -> list[float]:
    """Print both calls' figures; returns their p95s (inf for a call never made)."""
    p95s = []
    for name, samples in (("next-item", tally.next_ms), ("submit", tally.submit_ms)):
        if len(samples) < 2:
            print(f"  {name:<10} too few requests to measure")
            p95s.append(float("inf"))
            continue
        p50, p95, p99 = percentiles(samples)
        p95s.append(p95)
        print(
            f"  {name:<10} {len(samples):>6} requests  {len(samples) / seconds:>6.1f}/s  "
            f"p50 {p50:6.1f} ms  p95 {p95:6.1f} ms  p99 {p99:6.1f} ms"
        )
    return p95s


def stored_labels(slug: str, tokens: list[str]) -> set[tuple[str, int]]:
    """(volunteer token, item) of every label these volunteers have in the project."""
    from annotation.models import Annotation

    rows = Annotation.objects.filter(
        item__project__slug=slug, volunteer__auth_token__key__in=tokens
    ).values_list("volunteer__auth_token__key", "item_id")
    return set(rows)


def database_figures(slug: str, tokens: list[str]) -> dict:
    """What the database holds after a run: the volunteers' labels, items past k, and items whose
    label count disagrees with their labels (what a half-done write would leave)."""
    from django.db.models import Count, F

    from annotation.models import Item

    items = Item.objects.filter(project__slug=slug).annotate(n=Count("annotations"))
    return {
        "stored": stored_labels(slug, tokens),
        "over_k": items.filter(n__gt=F("project__overlap_k")).count(),
        "miscounted": items.exclude(label_count=F("n")).count(),
    }


def outcome(tally: Tally, database: dict, before=frozenset()) -> dict:
    """The figures every load run reports: what was acknowledged against what is stored (less
    the labels there were `before` the run), items past k, miscounted items."""
    stored = set(database["stored"]) - set(before)
    return {
        "acknowledged": len(tally.acknowledged),
        "stored": len(stored),
        "lost": len(tally.acknowledged - stored),  # acknowledged, yet not in the database
        "unacknowledged": len(stored - tally.acknowledged),  # stored, answer never arrived
        "over_k": database["over_k"],
        "miscounted": database["miscounted"],
    }


def open_items_reset(
    project, *, volunteers: int, items: int, owner: str, prefix: str, password: str | None = None
) -> list[str]:
    """`items` fresh open items (issues of `owner`/issues, made anew with their labels) and
    `volunteers` volunteer accounts named `prefix`N with API tokens; returns the tokens."""
    from django.contrib.auth import get_user_model
    from django.db import connection, transaction
    from rest_framework.authtoken.models import Token

    from annotation.models import Item, Membership, Role, Stage
    from ingest.models import Issue

    with transaction.atomic():
        Item.objects.filter(issue__owner=owner).delete()  # with their labels
        Issue.objects.filter(owner=owner).delete()
        issues = Issue.objects.bulk_create(
            Issue(
                host="github",
                owner=owner,
                repo="issues",
                number=str(n),
                url=f"https://github.com/{owner}/issues/issues/{n}",
                title=f"Open issue {n}",
                body="Something went wrong while training.",
            )
            for n in range(1, items + 1)
        )
        Item.objects.bulk_create(Item(project=project, issue=i, stage=Stage.OPEN) for i in issues)
        tokens = []
        for n in range(volunteers):
            user, _ = get_user_model().objects.get_or_create(username=f"{prefix}{n}")
            if password is not None:
                user.set_password(password)
                user.save(update_fields=["password"])
            Membership.objects.get_or_create(
                project=project, user=user, defaults={"role": Role.VOLUNTEER}
            )
            token, _ = Token.objects.get_or_create(user=user)
            tokens.append(token.key)
    with connection.cursor() as cursor:
        cursor.execute("ANALYZE")
    return tokens


# ------------------------------------------------- for a database the test process cannot reach
# A fault test's cluster is its own; these run in a process whose settings point at it:
#   python -m tests.load seed --slug S --items N --volunteers V --password P   (prints JSON)
#   python -m tests.load figures --slug S TOKEN ...                            (prints JSON)

SEED_OWNER, SEED_PREFIX = "faults-open", "faultvol-"


def _seed(args) -> dict:
    from tests.bench.run import load_taxonomy, setup_django

    setup_django()  # and migrate
    from annotation.models import Project
    from taxonomy.models import Level

    taxonomy = load_taxonomy()
    project, _ = Project.objects.get_or_create(
        slug=args.slug,
        defaults={
            "name": "Fault test",
            "taxonomy": taxonomy,
            "overlap_k": args.k,
            "label_depth": Level.THEME,
            "screening_enabled": False,
        },
    )
    tokens = open_items_reset(
        project,
        volunteers=args.volunteers,
        items=args.items,
        owner=SEED_OWNER,
        prefix=SEED_PREFIX,
        password=args.password,
    )
    themes = taxonomy.nodes.filter(level=Level.THEME).values_list("code", flat=True)
    return {
        "tokens": tokens,
        "usernames": [f"{SEED_PREFIX}{n}" for n in range(args.volunteers)],
        "themes": sorted(themes),
    }


def _figures(args) -> dict:
    import django

    django.setup()
    figures = database_figures(args.slug, args.tokens)
    return {**figures, "stored": sorted(figures["stored"])}


def main(argv: list[str] | None = None) -> None:
    import argparse
    import json
    import os

    parser = argparse.ArgumentParser(prog="python -m tests.load")
    commands = parser.add_subparsers(dest="command", required=True)
    seed = commands.add_parser("seed")
    seed.add_argument("--slug", required=True)
    seed.add_argument("--items", type=int, default=300)
    seed.add_argument("--volunteers", type=int, default=10)
    seed.add_argument("--k", type=int, default=3)
    seed.add_argument("--password")
    figures = commands.add_parser("figures")
    figures.add_argument("--slug", required=True)
    figures.add_argument("tokens", nargs="+")
    args = parser.parse_args(argv)
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "concord.settings")
    print(json.dumps((_seed if args.command == "seed" else _figures)(args)))


if __name__ == "__main__":
    main()
