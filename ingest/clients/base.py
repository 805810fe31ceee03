"""What both forge clients share: records, exceptions, and one GET with bounded retries."""

from __future__ import annotations

import contextlib
import random
import socket
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime, timedelta
from email.utils import parsedate_to_datetime
from typing import TypeVar
from urllib.parse import quote, urljoin, urlsplit

import requests
import urllib3
from requests.adapters import HTTPAdapter
from urllib3.connection import HTTPConnection, HTTPSConnection
from urllib3.connectionpool import HTTPConnectionPool, HTTPSConnectionPool

from concord.input_checks import ascii_digits
from ingest.issue_refs import (
    COLUMN_CHARS,
    GITEE_NUMBER,
    GITHUB_NUMBER,
    BadRepositoryName,
    repository_name_check,
)

T = TypeVar("T")
USER_AGENT = "Concord-harvester/0.1 (+https://github.com/concord-labeling)"
PER_PAGE = 100
READ_CHUNK = 64 * 1024
# Trouble on the way, worth asking again: the body is read from urllib3 directly, so its own
# errors (a read timeout, a connection cut mid-body) come unwrapped.
TRANSIENT_ERRORS = (
    requests.ConnectionError,
    requests.Timeout,
    requests.exceptions.ChunkedEncodingError,
    requests.exceptions.ContentDecodingError,
    urllib3.exceptions.HTTPError,
)


@dataclass(frozen=True)
class IssueRecord:
    number: str
    host_id: int | None
    url: str
    title: str
    body: str
    author: str
    state: str
    labels: list[str]
    created_at: datetime
    updated_at: datetime | None
    closed_at: datetime | None
    comment_count: int
    is_pull_request: bool
    moved_to: str = ""  # the web URL the host redirected this issue to (a transfer)


@dataclass(frozen=True)
class CommentRecord:
    comment_id: int
    issue_number: str | None  # None: a comment on something that is not an issue (a PR)
    author: str
    body: str
    created_at: datetime | None
    updated_at: datetime | None


@dataclass(frozen=True)
class RateState:
    """What is left of the rate limit, and when it refills: on the local clock (the host's
    reset, moved by how far the host's `Date` is from ours), so waits compare it to our now."""

    remaining: int | None = None
    reset_at: datetime | None = None


@dataclass(frozen=True)
class Page:
    url: str
    items: list = field(default_factory=list)
    next_url: str | None = None
    etag: str | None = None
    not_modified: bool = False
    rate: RateState = RateState()
    total: int | None = None  # items in the whole listing, when the host says
    # GraphQL: each issue's comments come with it (and the requests it took to get them all)
    comments: list = field(default_factory=list)
    comments_included: bool = False
    requests: int = 1
    host_date: datetime | None = None  # the host's clock when it answered (its `Date` header)
    renamed_to: tuple[str, str] | None = None  # GraphQL: the repository's current owner/name


class ForgeError(Exception):
    """A forge answered something the harvest cannot use; the message is for the admin."""


class Unauthorized(ForgeError):
    """The token is missing, wrong, revoked or expired (401). Retrying cannot help."""


class RepoNotFound(ForgeError):
    """The repository or issue does not exist, or the token cannot see it (404/410)."""


class CursorExpired(ForgeError):
    """A stored page URL is no longer accepted (422); restart the listing, upserts make it safe."""


class ForgeUnavailable(ForgeError):
    """5xx answers or timeouts, still failing after the bounded retries."""


class AnswerTooSlow(ForgeError):
    """An answer not read whole within the request's time bound; retried like a timeout."""


class OffHostUrl(ForgeError):
    """A URL (a `link` next page, a stored cursor) that is not on the configured API host and
    scheme: the token is never sent there, so the run stops."""


class Moved(ForgeError):
    """The host answered 301 (a renamed repository, a transferred issue): `location` is where.

    Redirects are never followed blindly: an issue fetched through one would be stored under
    another repository's number, and a listing under a name the host no longer uses."""

    def __init__(self, message: str, location: str) -> None:
        super().__init__(message)
        self.location = location


class RateLimited(ForgeError):
    """The forge asked us to wait; `wait_seconds` says how long (never hammer)."""

    def __init__(self, message: str, wait_seconds: float, rate: RateState | None = None) -> None:
        super().__init__(message)
        self.wait_seconds = wait_seconds
        self.rate = rate or RateState()


def answer_json(response: requests.Response, shape: type[T], what: str) -> T:
    """The JSON of a forge's answer when it has the shape asked for (`dict` for one issue, `list`
    for a page), else a ForgeError saying what came instead: "the host answered a list where an
    issue was expected"."""
    try:
        value = response.json()
    except ValueError:
        raise ForgeError(
            f"the host answered something that is not JSON where {what} was expected "
            f"({response.url})"
        ) from None
    if not isinstance(value, shape):
        raise ForgeError(
            f"the host answered {_shape_name(value)} where {what} was expected ({response.url})"
        )
    return value


@contextmanager
def readable(what: str, url: str) -> Iterator[None]:
    """Reading a forge's JSON into records: a member missing or of another type (a list where an
    issue, a number where a date was expected) is a ForgeError in words, not a crash."""
    try:
        yield
    except (KeyError, IndexError, TypeError, AttributeError, ValueError, OverflowError) as exc:
        if isinstance(exc, KeyError):
            detail = f"no {exc.args[0]!r} in it"
        elif isinstance(exc, AttributeError):  # .get on what is no object
            detail = "a member of another type than expected"
        else:
            detail = str(exc)[:100]
        message = f"the host answered {what} Concord cannot read ({detail}) from {url}"
        raise ForgeError(message) from exc


def page_items(
    response: requests.Response, url: str, parse: Callable[[dict], T], kind: str
) -> list[T]:
    """The records of a listing page's answer: a list of objects, each of `kind`."""
    article = "an" if kind[0] in "aeiou" else "a"
    items = answer_json(response, list, f"a page of {kind}s")
    return [record_of(item, parse, f"{article} {kind}", url) for item in items]


def record_of(item: object, parse: Callable[[dict], T], what: str, url: str) -> T:
    """`parse(item)` for one element of a forge's answer, which must be an object."""
    if not isinstance(item, dict):
        raise ForgeError(f"the host answered {_shape_name(item)} where {what} was expected ({url})")
    with readable(what, url):
        return parse(item)


def _shape_name(value: object) -> str:
    if isinstance(value, bool):
        return "true or false"
    names = {dict: "an object", list: "a list", str: "a string", int: "a number", float: "a number"}
    return names.get(type(value), "null" if value is None else type(value).__name__)


def parse_time(value: str | None) -> datetime | None:
    """ISO 8601 with `Z` (GitHub) or `+08:00` (Gitee) -> an aware datetime."""
    return parse_required_time(value) if value else None


def parse_required_time(value: str) -> datetime:
    """`parse_time` for a field every issue has (harvest windows compare `created_at`). A time
    without its zone is a ValueError (`readable` words it): read as some zone, it would be hours
    off; compared with the window, it raised a TypeError instead."""
    moment = datetime.fromisoformat(value)
    if moment.tzinfo is None:
        raise ValueError(f"the time {value!r} has no time zone")
    return moment


def origin(url: str) -> tuple[str, str, int | None]:
    """(scheme, host, port) with the default port filled in: what must match for the token."""
    parts = urlsplit(url)
    scheme = parts.scheme.lower()
    try:
        port = parts.port or {"http": 80, "https": 443}.get(scheme)
    except ValueError:  # a port that is not a number
        port = -1
    return scheme, (parts.hostname or "").lower(), port


def segment(value: str) -> str:
    """One path segment, percent-encoded: a '/' in it cannot add a segment."""
    return quote(value, safe="")


def clean_text(value: object) -> str:
    """Text PostgreSQL accepts: no NUL bytes, no lone surrogates from odd JSON escapes. A value
    that is not text (an object, a list, a number) is a TypeError: `readable` words it."""
    if value is None or value == "":
        return ""
    if not isinstance(value, str):
        raise TypeError(f"expected text, not {_shape_name(value)}")
    return value.replace("\x00", "").encode("utf-8", "replace").decode("utf-8")


def whole_number(value: object) -> int:
    """A count or an id from a forge: a whole number a bigint column holds, else ValueError."""
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value < 2**63:
        raise ValueError(f"expected a whole number, not {_shape_name(value)}")
    return value


def issue_number(value: object) -> str:
    """An issue's number as text: GitHub's a positive whole number, Gitee's an id such as
    'IBDZ87' (what ingest.issue_refs takes in a URL), else ValueError."""
    text = str(value) if isinstance(value, int | str) and not isinstance(value, bool) else ""
    if len(text) > COLUMN_CHARS["number"] or not (
        GITHUB_NUMBER.fullmatch(text) or GITEE_NUMBER.fullmatch(text)
    ):
        raise ValueError(f"expected an issue number, not {_shape_name(value)} {text[:20]!r}")
    return text


class ForgeClient:
    """One GET at a time per token, with a User-Agent, bounded retries on 5xx and timeouts, and
    rate limits turned into RateLimited. Subclasses say how their host words limits and errors."""

    host = ""  # 'github' or 'gitee': whose naming rules apply to owner and repository names

    def __init__(
        self,
        *,
        api_url: str,
        token: str = "",
        timeout: float = 30.0,
        request_seconds: float = 120.0,
        max_retries: int = 4,
        backoff: float = 1.0,
        secondary_wait: float = 60.0,
        sleep: Callable[[float], None] = time.sleep,
        session: requests.Session | None = None,
    ) -> None:
        self.api_url = api_url.rstrip("/")
        self.api_origin = origin(self.api_url)
        self.token = token
        self.timeout = timeout
        self.request_seconds = request_seconds
        self.max_retries = max_retries
        self.backoff = backoff
        self.secondary_wait = secondary_wait
        self.sleep = sleep
        self.session = session or requests.Session()
        self.session.headers["User-Agent"] = USER_AGENT
        for scheme in ("http://", "https://"):
            self.session.mount(scheme, _WatchedAdapter())
        self.requests_made = 0
        self.host_offset = timedelta(0)  # the host's clock minus ours, from its `Date` headers

    def headers(self) -> dict[str, str]:
        return {"Authorization": f"Bearer {self.token}"} if self.token else {}

    def on_api_host(self, url: str) -> bool:
        return origin(url) == self.api_origin

    def next_url(self, page_url: str, link: str | None) -> str | None:
        """The next page a forge named, resolved against the page; OffHostUrl when it is on
        another host or scheme than the API (the token would go there with it)."""
        if not link:
            return None
        url = urljoin(page_url, link)
        if not self.on_api_host(url):
            raise OffHostUrl(
                f"the forge sent a next page on another host: {url} (the API is at "
                f"{self.api_url}); it was not followed, so the token never went there"
            )
        return url

    def get(self, url: str, *, etag: str | None = None) -> requests.Response:
        """GET with retries on transient trouble; raises the ForgeError subclasses. Only URLs on
        the API's own host and scheme are fetched: the token goes nowhere else."""
        return self.send("GET", url, etag=etag)

    def send(
        self,
        method: str,
        url: str,
        *,
        etag: str | None = None,
        body: dict | None = None,
        check: Callable[[requests.Response], str | None] | None = None,
    ) -> requests.Response:
        """One request (GET, or POST with a JSON `body`), as `get` describes. `check` names what
        else makes an answer worth asking again (GraphQL's partial answers), in words."""
        if not self.on_api_host(url):
            raise OffHostUrl(
                f"refused to fetch {url}: it is not on the API host {self.api_url}, and the "
                "token is sent only there"
            )
        headers = self.headers()
        if etag:
            headers["If-None-Match"] = etag
        problem: str | None = None
        for attempt in range(self.max_retries + 1):
            self.requests_made += 1
            try:
                response = self._request_whole(method, url, headers, body)
            except TRANSIENT_ERRORS as exc:
                problem = f"{type(exc).__name__} from {url}"
            except AnswerTooSlow as exc:
                problem = str(exc)
            else:
                self._read_host_clock(response)
                problem = _transient_problem(response)
                if problem is None and check is not None:
                    problem = check(response)
                if problem is None:
                    self.raise_for_status(response)
                    return response
            if attempt < self.max_retries:
                delay = min(self.backoff * 2**attempt, 120.0)
                self.sleep(delay * (1 + random.random() / 10))  # noqa: S311 - jitter, not crypto
        raise ForgeUnavailable(f"{problem}, still failing after {self.max_retries} retries")

    def _request_whole(
        self, method: str, url: str, headers: dict[str, str], body: dict | None
    ) -> requests.Response:
        """The answer read to its end within `request_seconds`, else AnswerTooSlow. requests'
        timeout bounds each read of the socket, not the whole: a host trickling a byte at a time
        would hold the harvest for good."""
        deadline = time.monotonic() + self.request_seconds
        too_slow = AnswerTooSlow(
            f"no whole answer within {self.request_seconds:g} s from {url} (the host kept "
            "sending it slowly)"
        )
        with _cut_off_after(self.request_seconds) as watch:
            try:
                response = self.session.request(
                    method,
                    url,
                    headers=headers,
                    json=body,
                    timeout=min(self.timeout, self.request_seconds),
                    allow_redirects=False,
                    stream=True,
                )
                chunks = []
                while chunk := response.raw.read1(READ_CHUNK, decode_content=True):
                    chunks.append(chunk)
                    if time.monotonic() > deadline:
                        response.close()
                        raise too_slow
            except TRANSIENT_ERRORS:
                if watch.cut:
                    raise too_slow from None
                raise
            if watch.cut:  # cut off after the last byte came: not to be trusted whole
                raise too_slow
        # Read to its end, the connection is back in the pool for the next request.
        response._content = b"".join(chunks)
        response._content_consumed = True  # type: ignore[attr-defined]
        return response

    def _read_host_clock(self, response: requests.Response) -> None:
        """How far the host's clock is from ours, from its `Date` header (when it sends one)."""
        host_now = http_date(response.headers.get("date"))
        if host_now is not None:
            self.host_offset = host_now - datetime.now(UTC)

    def host_now(self) -> datetime:
        """The host's clock as of now: ours moved by the offset its last answer showed."""
        return datetime.now(UTC) + self.host_offset

    def to_local(self, host_time: datetime | None) -> datetime | None:
        """A time on the host's clock (a reset) as the same instant on ours."""
        return None if host_time is None else host_time - self.host_offset

    def raise_for_status(self, response: requests.Response) -> None:
        status = response.status_code
        if status in (200, 304):
            return
        if status in (301, 302, 307, 308):
            location = urljoin(response.url, response.headers.get("location", ""))
            raise Moved(f"moved ({status}) from {response.url} to {location}", location)
        message = _message(response)
        if status == 401:
            raise Unauthorized(f"the token was refused (401: {message}); check or replace it")
        # asked before the status is read as something else: GitHub has answered a used-up limit
        # with a 422 too (a tokenless deep page), which would otherwise restart the listing
        if status in (403, 422, 429) and self.is_rate_limited(response, message):
            raise RateLimited(
                f"rate limited ({status}: {message})",
                self.wait_seconds(response),
                self.rate(response),
            )
        if status in (404, 410):
            raise RepoNotFound(f"not found ({status}: {message}): {response.url}")
        if status == 422:
            raise CursorExpired(f"the forge refused this page (422: {message})")
        raise ForgeError(f"unexpected answer {status} ({message}) from {response.url}")

    def is_rate_limited(self, response: requests.Response, message: str) -> bool:
        lowered = message.lower()
        return (
            response.status_code == 429
            or response.headers.get("x-ratelimit-remaining") == "0"
            or "retry-after" in response.headers
            or "rate limit" in lowered
            # GitHub's older words for a secondary limit, sent without a retry-after
            or "abuse detection" in lowered
            or any(page in _documentation_url(response) for page in _LIMIT_DOCS)
        )

    def wait_seconds(self, response: requests.Response) -> float:
        """retry-after if given (seconds, or an HTTP date on the host's clock), else until the
        reset, else a minute (secondary limits)."""
        wait = retry_after_seconds(response.headers.get("retry-after"), self.host_now())
        if wait is not None:
            return wait
        rate = self.rate(response)
        if rate.remaining == 0 and rate.reset_at:
            return self.seconds_until(rate.reset_at)
        return self.secondary_wait

    def seconds_until(self, local_time: datetime) -> float:
        """The wait until a reset (on our clock), with a second of margin; never negative."""
        return max((local_time - datetime.now(UTC)).total_seconds(), 0.0) + 1.0

    def rate(self, response: requests.Response) -> RateState:
        remaining = response.headers.get("x-ratelimit-remaining")
        reset = response.headers.get("x-ratelimit-reset")
        return RateState(
            remaining=int(remaining) if remaining and ascii_digits(remaining) else None,
            reset_at=self.to_local(_epoch(reset)),
        )

    # Each host's client turns its JSON into records, and knows its pages and URLs.
    def parse_issue(self, item: dict) -> IssueRecord:
        raise NotImplementedError

    def parse_comment(self, item: dict) -> CommentRecord:
        raise NotImplementedError

    def repo_url(self, owner: str, repo: str) -> str:
        """The API address of a repository. The names are checked against the host's rules
        before they go into a path (never '..'), and percent-encoded besides."""
        try:
            repository_name_check(self.host, owner, repo)
        except BadRepositoryName as exc:
            raise ForgeError(exc.message) from exc
        return f"{self.api_url}/repos/{segment(owner)}/{segment(repo)}"

    def _page(self, url: str, etag: str | None, parse: Callable[[dict], object], kind: str) -> Page:
        """One page of a listing of `kind` ("issue" or "comment"), its items parsed."""
        raise NotImplementedError

    @staticmethod
    def page_follows(last: str, page: Page) -> bool:
        """Whether `page` follows on from a page whose last issue was number `last` with nothing
        between them (see harvest._moved_up); hosts whose pages cannot shift say so always."""
        return True

    @staticmethod
    def page_back(url: str, pages: int) -> str | None:
        """The listing `pages` pages before `url`, on hosts with numbered pages and totals (Gitee:
        a shift detected by `total_count` re-walks from there); None where pages are cursors."""
        return None

    def issues_page(self, url: str, *, etag: str | None = None) -> Page:
        return self._page(url, etag, self.parse_issue, "issue")

    def comments_page(self, url: str, *, etag: str | None = None) -> Page:
        return self._page(url, etag, self.parse_comment, "comment")

    def issue(self, owner: str, repo: str, number: str) -> IssueRecord:
        """One issue as asked for. A transferred issue (301 to another repository) comes back
        with its content and `moved_to` naming where it lives now; its number stays the caller's
        business, never the destination's. An answer that is no issue (a list, an object without
        a number) is a ForgeError saying so."""
        url = f"{self.repo_url(owner, repo)}/issues/{segment(number)}"
        try:
            return self._issue_at(url)
        except Moved as exc:
            record = self._issue_at(self.move_target(exc))
            return replace(record, moved_to=record.url or exc.location)

    def _issue_at(self, url: str) -> IssueRecord:
        item = answer_json(self.get(url), dict, "an issue")
        with readable("an issue", url):
            return self.parse_issue(item)

    def move_target(self, moved: Moved) -> str:
        """Where a 301 points, if it is on the API host (one hop, never elsewhere)."""
        if not self.on_api_host(moved.location):
            raise OffHostUrl(
                f"the forge redirected to another host: {moved.location}; not followed"
            )
        return moved.location


# The documentation GitHub links from a limit's answer (its words have changed over the years).
_LIMIT_DOCS = ("secondary-rate-limits", "abuse-rate-limits", "rate-limiting")


def _documentation_url(response: requests.Response) -> str:
    body = _error_body(response)
    return str(body.get("documentation_url", "")) if isinstance(body, dict) else ""


def _message(response: requests.Response) -> str:
    body = _error_body(response)
    if body is None:
        return response.text[:200].strip() or response.reason
    return str(body.get("message", body))[:300] if isinstance(body, dict) else str(body)[:300]


def _error_body(response: requests.Response) -> object | None:
    """An error answer's JSON, None when it is not JSON (a proxy's HTML page)."""
    try:
        return response.json()
    except ValueError:
        return None


# The connections a request of this thread is using (see _cut_off_after).
_in_use = threading.local()


class _Watch:
    """The connections one request used, and whether the deadline cut them off."""

    def __init__(self) -> None:
        self.connections: list[HTTPConnection] = []
        self.cut = False

    def cut_off(self) -> None:
        self.cut = True
        for connection in self.connections:
            sock = connection.sock
            if sock is not None:
                with contextlib.suppress(OSError):
                    sock.shutdown(socket.SHUT_RDWR)


@contextmanager
def _cut_off_after(seconds: float) -> Iterator[_Watch]:
    """Shut the request's connection down when `seconds` have passed, however the host sends
    (a byte of the headers at a time included): a blocked read then ends at once."""
    watch = _Watch()
    _in_use.watch = watch
    timer = threading.Timer(seconds, watch.cut_off)
    timer.daemon = True
    timer.start()
    try:
        yield watch
    finally:
        timer.cancel()
        _in_use.watch = None


class _WatchedConnection(HTTPConnection):
    def request(self, *args, **kwargs) -> None:
        watch = getattr(_in_use, "watch", None)
        if watch is not None:
            watch.connections.append(self)
        super().request(*args, **kwargs)


class _WatchedHTTPSConnection(HTTPSConnection):
    def request(self, *args, **kwargs) -> None:
        watch = getattr(_in_use, "watch", None)
        if watch is not None:
            watch.connections.append(self)
        super().request(*args, **kwargs)


class _WatchedPool(HTTPConnectionPool):
    ConnectionCls = _WatchedConnection


class _WatchedHTTPSPool(HTTPSConnectionPool):
    ConnectionCls = _WatchedHTTPSConnection


class _WatchedAdapter(HTTPAdapter):
    """requests' adapter whose connections a request's deadline can cut off."""

    def init_poolmanager(self, *args, **kwargs) -> None:
        super().init_poolmanager(*args, **kwargs)
        self.poolmanager.pool_classes_by_scheme = {
            "http": _WatchedPool,
            "https": _WatchedHTTPSPool,
        }


def _transient_problem(response: requests.Response) -> str | None:
    """What makes an answer worth asking again, in words: a 5xx, or a 200 whose body is an HTML
    page (a proxy's or the host's error page in front of the API) instead of JSON."""
    if response.status_code >= 500:
        return f"HTTP {response.status_code} from {response.url}"
    if response.status_code == 200 and _looks_like_html(response):
        return f"an HTML page instead of JSON (HTTP 200) from {response.url}"
    return None


def _looks_like_html(response: requests.Response) -> bool:
    kind = response.headers.get("content-type", "").lower()
    start = response.content[:100].lstrip().lower()
    return "html" in kind or start.startswith((b"<!doctype", b"<html"))


def http_date(value: str | None) -> datetime | None:
    """An HTTP date (`Wed, 21 Oct 2026 07:28:00 GMT`) as an aware time; None for anything else."""
    if not value:
        return None
    try:
        moment = parsedate_to_datetime(value)
    except (TypeError, ValueError, IndexError, OverflowError):
        return None
    return moment if moment.tzinfo else moment.replace(tzinfo=UTC)


def retry_after_seconds(value: str | None, host_now: datetime) -> float | None:
    """`Retry-After` as seconds to wait: a number of seconds, or an HTTP date on the host's
    clock (measured from `host_now`, never negative); None when absent or unreadable."""
    if not value:
        return None
    if ascii_digits(value.strip()):
        return float(value.strip())
    moment = http_date(value)
    return None if moment is None else max((moment - host_now).total_seconds(), 0.0)


def _epoch(value: str | None) -> datetime | None:
    """A reset header as a time; None for what a host should not send (text, a year past 9999)."""
    if not value or not ascii_digits(value):
        return None
    try:
        return datetime.fromtimestamp(int(value), UTC)
    except (OverflowError, ValueError, OSError):
        return None
