"""A local fake of the GitHub REST API and the Gitee API v5, served over real HTTP.

Why a real server (stdlib ThreadingHTTPServer on 127.0.0.1, in a background thread): the
harvester's paging, retry and checkpoint logic is all about status codes, headers and `link`
URLs, so tests must exercise it over sockets, exactly as against api.github.com / gitee.com.
Shapes follow /work/shared/reference/forge-apis.md (§1, §2, §5 and the §5.10 checklist).

    with FakeForge() as forge:
        issues, comments = make_github_issues("vllm-project", "vllm", 200, n_prs=50)
        forge.add_github_repo("vllm-project", "vllm", issues, comments)
        urlopen(forge.github_api + "/repos/vllm-project/vllm/issues?state=all")

Payload URLs (`url`, `html_url`, `issue_url`) stay the real api.github.com / gitee.com ones, as a
harvester stores them; only `link` headers and redirects point back at the fake.

Speed: every item is serialized to JSON once (lazily) and every sorted/filtered listing is built
once, so answering a page is a slice plus a bytes join: a few ms for a 40,000-issue repository.
"""

from __future__ import annotations

import base64
import bisect
import contextlib
import functools
import hashlib
import json
import math
import random
import re
import socket
import threading
import time
import zlib
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from datetime import UTC, date, datetime, timedelta, timezone
from email.utils import formatdate
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qsl, unquote, urlencode, urlsplit

GITHUB_PREFIX = "/github"
GITEE_PREFIX = "/gitee/api/v5"
API_VERSIONS = ("2022-11-28", "2026-03-10")
CST = timezone(timedelta(hours=8), "CST")  # Gitee stamps are +08:00

_GH_DOCS = "https://docs.github.com/rest"
_GH_401 = {"message": "Bad credentials", "documentation_url": _GH_DOCS, "status": "401"}
_GH_404 = {"message": "Not Found", "documentation_url": _GH_DOCS, "status": "404"}
_GH_PAGE_422 = {
    "message": "Pagination with the page parameter is not supported for large datasets, please "
    "use cursor based pagination (after/before)",
    "documentation_url": "https://docs.github.com/rest/issues/issues#list-repository-issues",
    "status": "422",
}
_GH_COMMENTS_422 = {
    "message": "In order to keep the API fast for everyone, pagination is limited for this "
    "resource. Check the rel=last link relation in the Link response header to see how far back "
    "you can traverse.",
    "documentation_url": "https://docs.github.com/rest/issues/comments"
    "#list-issue-comments-for-a-repository",
    "status": "422",
}
_GH_INVALID = {"message": "Validation Failed", "documentation_url": _GH_DOCS, "status": "422"}
_GH_PRIMARY = {
    "message": "API rate limit exceeded for user ID 1010101.",
    "documentation_url": "https://docs.github.com/rest/overview/rate-limits-for-the-rest-api",
}
# How GitHub worded a secondary limit until 2022 (clients still meet it on GitHub Enterprise)
_GH_ABUSE = {
    "message": "You have triggered an abuse detection mechanism. Please wait a few minutes before "
    "you try again.",
    "documentation_url": "https://docs.github.com/rest/overview/resources-in-the-rest-api"
    "#abuse-rate-limits",
}
_GH_SECONDARY = {
    "message": "You have exceeded a secondary rate limit. Please wait a few minutes before you "
    "try again. If you reach out to GitHub Support for help, please include the request ID "
    "FA2D:87B1:8879E3:1176C87:6570B7E6.",
    "documentation_url": "https://docs.github.com/free-pro-team@latest/rest/overview/"
    "rate-limits-for-the-rest-api#about-secondary-rate-limits",
}
_GITEE_401 = {"message": "401 Unauthorized: Access token does not exist"}
_GITEE_NO_PROJECT = {"message": "Not Found Project"}
_GITEE_404 = {"message": "404 Not Found"}
_GITEE_RATE = {"message": "Rate Limit Exceeded"}  # [UNVERIFIED] placeholder of §5.9
_BAD_GATEWAY = (
    b"<html>\r\n<head><title>502 Bad Gateway</title></head>\r\n<body>\r\n"
    b"<center><h1>502 Bad Gateway</h1></center>\r\n</body>\r\n</html>\r\n"
)
_UNICORN = (
    b"<!DOCTYPE html>\n<html><head><title>Unicorn! &middot; GitHub</title></head>\n<body>"
    b"<p>No server is currently available to service your request.</p></body></html>\n"
)
_PAGING_KEYS = frozenset({"page", "after", "before", "access_token"})


# ----------------------------------------------------------------------------- small helpers


_ENCODER = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"), check_circular=False)


def _dumps(obj) -> bytes:
    """Compact UTF-8 JSON, as both forges send it (control characters such as NUL stay escaped)."""
    return _ENCODER.encode(obj).encode()


def _epoch(stamp: str) -> int:
    """Seconds since the epoch of an ISO 8601 stamp ("...Z", "+08:00"; naive means UTC)."""
    moment = datetime.fromisoformat(stamp)
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    return int(moment.timestamp())


@functools.cache
def _day(days_since_epoch: int) -> str:
    return (date(1970, 1, 1) + timedelta(days=days_since_epoch)).isoformat()


def _stamp(epoch: int, offset: int, suffix: str) -> str:
    """ISO 8601 from epoch seconds; by hand, as strftime costs a second per 160,000 stamps."""
    day, second = divmod(epoch + offset, 86_400)
    hour, rest = divmod(second, 3600)
    return f"{_day(day)}T{hour:02d}:{rest // 60:02d}:{rest % 60:02d}{suffix}"


def _gh_time(epoch: int) -> str:
    """GitHub's "2024-04-24T09:12:45Z"."""
    return _stamp(epoch, 0, "Z")


def _gitee_time(epoch: int) -> str:
    """Gitee's "2024-12-10T16:05:11+08:00"."""
    return _stamp(epoch, 8 * 3600, "+08:00")


def _int_or(raw: str | None, default: int) -> int:
    try:
        return int(raw) if raw not in (None, "") else default
    except ValueError:
        return default


def _per_page(raw: str | None, default: int) -> int:
    """Both forges cap per_page at 100; nonsense falls back to the default like the real ones."""
    return min(100, max(1, _int_or(raw, default)))


def _since(raw: str | None) -> int | None:
    """`since` filters on updated_at (>=) on both hosts; ValueError when it is not ISO 8601."""
    return None if raw in (None, "") else _epoch(raw)


def _cursor(key: tuple, epoch: int = 0) -> str:
    """An opaque `after=`/`before=` token; it encodes the sort key, so it survives insertions,
    and the forge's cursor epoch: bumping `cursor_epoch` expires every cursor handed out."""
    prefix = b"cursor:v2:" if not epoch else f"cursor:v2e{epoch}:".encode()
    return base64.b64encode(prefix + json.dumps(list(key)).encode()).decode()


def _uncursor(token: str, epoch: int = 0) -> tuple:
    raw = base64.b64decode(token.encode(), validate=True)
    prefix = b"cursor:v2:" if not epoch else f"cursor:v2e{epoch}:".encode()
    if not raw.startswith(prefix):
        raise ValueError("not a cursor (or one from an earlier cursor epoch)")
    key = json.loads(raw[len(prefix) :])
    if not (isinstance(key, list) and len(key) == 2 and all(isinstance(k, int) for k in key)):
        raise ValueError("not a cursor")
    return tuple(key)


def _asks_issues(req: _Request, more_than: int) -> bool:
    """Whether the request is the issues query asking for more than `more_than` issues."""
    try:
        payload = json.loads(req.body or b"{}")
        first = int(payload["variables"].get("first", 100))
    except (ValueError, KeyError, TypeError, AttributeError):
        return False
    return "ConcordIssues(" in payload.get("query", "") and first > more_than


def _graphql_author(user: dict) -> dict | None:
    """REST's user as GraphQL's author: a deleted account, REST's `ghost`, is null there."""
    return None if user["login"] == "ghost" else {"login": user["login"]}


def _etag(target: str, body: bytes) -> str:
    """A weak ETag per URL and content, like GitHub's W/"..." (ETags are per page)."""
    digest = hashlib.blake2b(target.encode(), digest_size=16)
    digest.update(body)
    return f'W/"{digest.hexdigest()}"'


def _etag_matches(header: str | None, etag: str) -> bool:
    if not header:
        return False
    tags = [tag.strip().removeprefix("W/") for tag in header.split(",")]
    return "*" in tags or etag.removeprefix("W/") in tags


def _token_from_header(value: str) -> str | None:
    """`Bearer <t>` and `token <t>` both work on GitHub (§1.1) and on Gitee (§2.1)."""
    scheme, _, token = value.strip().partition(" ")
    return token.strip() if scheme.lower() in ("bearer", "token") and token else None


def _link(base: str, pairs: list[tuple[str, str]], rels: list[tuple[str, dict]]) -> str:
    """A GitHub `link` header: the client's query kept, only the paging keys replaced."""
    kept = [(k, v) for k, v in pairs if k not in _PAGING_KEYS]
    return ", ".join(
        f'<{base}?{urlencode(kept + list(change.items()))}>; rel="{rel}"' for rel, change in rels
    )


# ----------------------------------------------------------------------------- HTTP plumbing


@dataclass
class _Request:
    method: str
    target: str  # path and query exactly as received (the ETag is per URL)
    path: str
    pairs: list[tuple[str, str]]
    query: dict[str, str]
    headers: dict[str, str]
    ordinal: int
    body: bytes = b""


@dataclass
class _Response:
    status: int
    body: bytes = b""
    headers: dict[str, str] = field(default_factory=dict)
    conditional: bool = False  # a GitHub 200 that gets an etag and may be answered 304


_GH_JSON = "application/json; charset=utf-8"


def _json(status: int, obj, **headers: str) -> _Response:
    return _Response(status, _dumps(obj), {"content-type": _GH_JSON, **headers})


def _github_ok(body: bytes) -> _Response:
    """A GitHub 200 carrying JSON already serialized; it gets an ETag and may become a 304."""
    return _Response(200, body, {"content-type": _GH_JSON}, conditional=True)


def _server_error(status: int) -> _Response:
    """A proxy-style 502 (HTML, as GitHub's edge sends) or a JSON 5xx for anything else."""
    if status == 502:
        return _Response(502, _BAD_GATEWAY, {"content-type": "text/html"})
    return _json(status, {"message": "Service Unavailable"})


# ----------------------------------------------------------------------------- listings


@dataclass
class _View:
    """One sorted, filtered listing: item indices and their ascending sort keys (for cursors)."""

    indices: list[int]
    keys: list[tuple] = field(default_factory=list)


class _Collection:
    """One repository's items of one kind; sort keys are computed, and JSON serialized, once.

    Serializing up front (about 30 us an issue) keeps that cost in setup, out of a benchmark.
    """

    def __init__(
        self,
        items: list[dict],
        sorts: dict[str, Callable[[dict], int]],
        tiebreak: Callable[[dict], int],
    ):
        self.items = items
        self.values = {name: [fn(item) for item in items] for name, fn in sorts.items()}
        self.ties = [tiebreak(item) for item in items]
        self._blobs = [_dumps(item) for item in items]
        self._orders: dict[tuple, _View] = {}
        self._views: dict[tuple, _View] = {}

    def blob(self, index: int) -> bytes:
        return self._blobs[index]

    def body(self, indices: Iterable[int]) -> bytes:
        return b"[" + b",".join(map(self._blobs.__getitem__, indices)) + b"]"

    def view(
        self, sort: str, descending: bool, filters: tuple, keep: Callable[[int], bool] | None
    ) -> _View:
        """The listing for (sort, direction, filters), built once; `keep` must match `filters`."""
        key = (sort, descending, filters)
        found = self._views.get(key)
        if found is None:
            if len(self._views) > 256:  # many distinct `since` values: start over, stay bounded
                self._views.clear()
            base = self._order(sort, descending)
            if keep is None:
                found = base
            else:
                pairs = [(i, k) for i, k in zip(base.indices, base.keys, strict=True) if keep(i)]
                found = _View([i for i, _ in pairs], [k for _, k in pairs])
            self._views[key] = found
        return found

    def updated_since(self, since: int) -> _View:
        """The listing by update time, oldest first, from `since` on: a tail of that order,
        found by bisection (filtering every item anew for each `since` would make the fake, not
        the harvester, what a benchmark measures)."""
        base = self._order("updated", False)
        start = bisect.bisect_left(base.keys, (since,))
        return _View(base.indices[start:], base.keys[start:])

    def _order(self, sort: str, descending: bool) -> _View:
        found = self._orders.get((sort, descending))
        if found is None:
            sign = -1 if descending else 1
            values = self.values[sort]
            keys = [(sign * v, sign * t) for v, t in zip(values, self.ties, strict=True)]
            order = sorted(range(len(keys)), key=keys.__getitem__)
            found = self._orders[(sort, descending)] = _View(order, [keys[i] for i in order])
        return found


def _created(item: dict) -> int:
    return _epoch(item["created_at"])


def _updated(item: dict) -> int:
    return _epoch(item.get("updated_at") or item["created_at"])


def _number_in_issue_url(url: str | None) -> int | None:
    """GitHub comments name their issue only through `issue_url` (…/issues/{n}), PRs included."""
    tail = (url or "").rstrip("/").rpartition("/")[2]
    return int(tail) if tail.isdigit() else None


class _GithubRepo:
    def __init__(
        self, owner: str, name: str, repo_id: int, issues: list[dict], comments: list[dict]
    ):
        self.owner, self.name, self.repo_id = owner, name, repo_id
        self.issues = _Collection(
            list(issues),
            {
                "created": _created,
                "updated": _updated,
                "comments": lambda item: item.get("comments") or 0,
            },
            tiebreak=lambda item: item["number"],
        )
        self.states = [item.get("state") for item in self.issues.items]
        self.labels = [
            frozenset(lb.get("name") for lb in item.get("labels") or ())
            for item in self.issues.items
        ]
        self.by_number = {item["number"]: i for i, item in enumerate(self.issues.items)}
        self.graphql_issues: dict[int | None, list[int]] = {}
        self.comments = _Collection(
            list(comments), {"created": _created, "updated": _updated}, tiebreak=lambda c: c["id"]
        )
        self.comments_of: dict[int | None, list[int]] = {}
        for i in sorted(range(len(self.comments.items)), key=self.comments.ties.__getitem__):
            number = _number_in_issue_url(self.comments.items[i].get("issue_url"))
            self.comments_of.setdefault(number, []).append(i)

    def meta(self) -> dict:
        full = f"{self.owner}/{self.name}"
        return {
            "id": self.repo_id,
            "node_id": f"R_kgDO{self.repo_id}",
            "name": self.name,
            "full_name": full,
            "private": False,
            "owner": {"login": self.owner, "type": "Organization"},
            "html_url": f"https://github.com/{full}",
            "url": f"https://api.github.com/repos/{full}",
            "has_issues": True,
            "default_branch": "main",
            "open_issues_count": self.states.count("open"),
        }


def _gitee_target_number(comment: dict) -> str | None:
    """Gitee comments name their issue via target.issue.number; PR comments have issue: null."""
    target = comment.get("target") or {}
    issue = target.get("issue") if isinstance(target, dict) else None
    return issue.get("number") if issue else None


class _GiteeRepo:
    def __init__(self, owner: str, name: str, issues: list[dict], comments: list[dict]):
        self.owner, self.name = owner, name
        self.issues = _Collection(
            list(issues),
            {"created": _created, "updated": _updated},
            tiebreak=lambda item: item["id"],
        )
        self.states = [item.get("state") for item in self.issues.items]
        self.by_number = {item["number"]: i for i, item in enumerate(self.issues.items)}
        self.comments = _Collection(
            list(comments), {"created": _created, "updated": _updated}, tiebreak=lambda c: c["id"]
        )
        self.comments_of: dict[str | None, list[int]] = {}
        for i in sorted(range(len(self.comments.items)), key=self.comments.ties.__getitem__):
            number = _gitee_target_number(self.comments.items[i])
            self.comments_of.setdefault(number, []).append(i)


# ----------------------------------------------------------------------------- GitHub routes

_GH_BY_NAME = re.compile(r"^/repos/([^/]+)/([^/]+)(/.*)?$")
_GH_BY_ID = re.compile(r"^/repositories/(\d+)(/.*)?$")
_ISSUE = re.compile(r"^/issues/(\d+)$")
_ISSUE_COMMENTS = re.compile(r"^/issues/(\d+)/comments$")


class _GithubApi:
    """GitHub REST routes under /github; `forge` holds the repos and the knobs."""

    def __init__(self, forge: FakeForge):
        self.forge = forge

    def route(self, req: _Request, subpath: str) -> _Response:
        repo, rest = None, ""
        if match := _GH_BY_NAME.match(subpath):
            key, rest = (match[1].lower(), match[2].lower()), match[3] or ""
            if key in self.forge._redirects:
                return self._moved(req, self.forge._redirects[key], rest)
            repo = self.forge._github.get(key)
        elif match := _GH_BY_ID.match(subpath):
            repo, rest = self.forge._github_by_id.get(int(match[1])), match[2] or ""
        if repo is None:
            return _json(404, _GH_404)
        try:
            return self._dispatch(req, repo, rest.rstrip("/"))
        except ValueError:  # a malformed since / cursor
            return _json(422, _GH_INVALID)

    def _dispatch(self, req: _Request, repo: _GithubRepo, rest: str) -> _Response:
        if rest == "":
            return _github_ok(_dumps(repo.meta()))
        if rest == "/issues":
            return self._issues(req, repo)
        if rest == "/issues/comments":
            return self._repo_comments(req, repo)
        if moved := self._transferred(repo, rest):
            return moved
        if match := _ISSUE.match(rest):
            index = repo.by_number.get(int(match[1]))
            if (repo.owner, repo.name, int(match[1])) in self.forge.github_deleted:
                return _json(410, {"message": "This issue was deleted", "status": "410"})
            if index is None:
                return _json(404, _GH_404)
            return _github_ok(repo.issues.blob(index))
        if match := _ISSUE_COMMENTS.match(rest):
            return self._issue_comments(req, repo, int(match[1]))
        return _json(404, _GH_404)

    def _transferred(self, repo: _GithubRepo, rest: str) -> _Response | None:
        """A transferred issue (and its comments) answers 301 to /repositories/{id}/issues/{n}
        of the repository it went to, as GitHub does."""
        match = _ISSUE.match(rest) or _ISSUE_COMMENTS.match(rest)
        key = (repo.owner.lower(), repo.name.lower(), int(match[1])) if match else None
        if key not in self.forge._transfers:
            return None
        owner, name, number = self.forge._transfers[key]
        target = self.forge._github[(owner.lower(), name.lower())]
        location = f"{self.forge.github_api}/repositories/{target.repo_id}/issues/{number}"
        location += "/comments" if rest.endswith("/comments") else ""
        body = {"message": "Moved Permanently", "url": location, "documentation_url": _GH_DOCS}
        return _json(301, body, location=location)

    def _moved(self, req: _Request, target: tuple[str, str], rest: str) -> _Response:
        """A renamed/transferred repo answers 301 to the same path under the repository's id,
        `/repositories/{id}` (as GitHub does), or with `redirect_by_name` under the new
        `/repos/{owner}/{name}`."""
        query = urlsplit(req.target).query
        moved_to = self.forge._github.get((target[0].lower(), target[1].lower()))
        if self.forge.redirect_by_name or moved_to is None:
            location = f"{self.forge.github_api}/repos/{target[0]}/{target[1]}{rest}"
        else:
            location = f"{self.forge.github_api}/repositories/{moved_to.repo_id}{rest}"
        location += f"?{query}" if query else ""
        body = {
            "message": "Moved Permanently",
            "url": location,
            "documentation_url": "https://docs.github.com/v3/#http-redirects",
        }
        return _json(301, body, location=location)

    def _issues(self, req: _Request, repo: _GithubRepo) -> _Response:
        q = req.query
        state, sort = q.get("state", "open"), q.get("sort", "created")
        direction = q.get("direction", "desc")
        if state not in ("open", "closed", "all") or direction not in ("asc", "desc"):
            return _json(422, _GH_INVALID)
        if sort not in ("created", "updated", "comments"):
            return _json(422, _GH_INVALID)
        since = _since(q.get("since"))
        wanted = frozenset(n.strip() for n in q.get("labels", "").split(",") if n.strip())
        keep = None
        if state != "all" or since is not None or wanted:
            states, updated, labels = repo.states, repo.issues.values["updated"], repo.labels

            def keep(i: int) -> bool:
                return (
                    (state == "all" or states[i] == state)
                    and (since is None or updated[i] >= since)
                    and wanted <= labels[i]
                )

        view = repo.issues.view(sort, direction == "desc", (state, since, wanted), keep)
        base = f"{self.forge.github_api}/repositories/{repo.repo_id}/issues"
        return self._page(req, repo.issues, view, base, cursors=True)

    def _repo_comments(self, req: _Request, repo: _GithubRepo) -> _Response:
        """Repo-wide comments; `direction` counts only together with `sort` (§1.5)."""
        q = req.query
        sort = q.get("sort", "created")
        direction = q.get("direction", "asc") if "sort" in q else "asc"
        if sort not in ("created", "updated") or direction not in ("asc", "desc"):
            return _json(422, _GH_INVALID)
        since = _since(q.get("since"))
        keep = None
        if since is not None:
            updated = repo.comments.values["updated"]

            def keep(i: int) -> bool:
                return updated[i] >= since

        if since is not None and (sort, direction) == ("updated", "asc"):
            view = repo.comments.updated_since(since)  # a harvest asks one `since` a page
        else:
            view = repo.comments.view(sort, direction == "desc", (since,), keep)
        base = f"{self.forge.github_api}/repositories/{repo.repo_id}/issues/comments"
        limit = self.forge.comments_page_limit
        return self._page(req, repo.comments, view, base, cursors=False, page_limit=limit)

    def _issue_comments(self, req: _Request, repo: _GithubRepo, number: int) -> _Response:
        """One issue's (or PR's) comments, in ascending id order (§1.5)."""
        if number not in repo.by_number:
            return _json(404, _GH_404)
        indices = repo.comments_of.get(number, [])
        since = _since(req.query.get("since"))
        if since is not None:
            updated = repo.comments.values["updated"]
            indices = [i for i in indices if updated[i] >= since]
        base = f"{self.forge.github_api}/repositories/{repo.repo_id}/issues/{number}/comments"
        return self._page(req, repo.comments, _View(indices), base, cursors=False)

    def _page(
        self,
        req: _Request,
        coll: _Collection,
        view: _View,
        base: str,
        *,
        cursors: bool,
        page_limit: int | None = None,
    ) -> _Response:
        """Page-number paging with §1.4 links; beyond `cursor_after_page` the issues list 422s."""
        q = req.query
        per_page = _per_page(q.get("per_page"), 30)
        if cursors and (q.get("after") or q.get("before")):
            if self.forge.refuse_cursors:
                return _json(422, _GH_INVALID)
            return self._cursor_page(req, coll, view, base, per_page)
        page = max(1, _int_or(q.get("page"), 1))
        limit = self.forge.cursor_after_page if cursors else page_limit
        if limit is not None and page > limit:
            return _json(422, _GH_PAGE_422 if cursors else _GH_COMMENTS_422)
        total, start = len(view.indices), (page - 1) * per_page
        end, last = start + per_page, max(1, math.ceil(total / per_page))
        rels: list[tuple[str, dict]] = []
        if page > 1:
            rels.append(("prev", {"page": page - 1}))
        if end < total:
            if cursors and limit is not None and page >= limit:
                rels.append(
                    ("next", {"after": _cursor(view.keys[end - 1], self.forge.cursor_epoch)})
                )
            elif not (self._silent_cap(cursors, limit, page)):
                rels.append(("next", {"page": page + 1}))
            if limit is None or last <= limit:
                rels.append(("last", {"page": last}))
        if page > 1:
            rels.append(("first", {"page": 1}))
        return self._listing(req, coll.body(view.indices[start:end]), base, rels)

    def _silent_cap(self, cursors: bool, limit: int | None, page: int) -> bool:
        """The capped comment listing that stops sending `next` instead of answering 422."""
        return (
            not cursors and self.forge.comments_cap_silent and limit is not None and page >= limit
        )

    def _cursor_page(
        self, req: _Request, coll: _Collection, view: _View, base: str, per_page: int
    ) -> _Response:
        """`after=`/`before=` paging: the cursor is a sort key, found again by bisection."""
        after = req.query.get("after")
        key = _uncursor(after or req.query["before"], self.forge.cursor_epoch)
        if after:
            start = bisect.bisect_right(view.keys, key)
        else:
            start = max(0, bisect.bisect_left(view.keys, key) - per_page)
        total = len(view.keys)
        end = min(total, start + per_page)
        rels: list[tuple[str, dict]] = []
        epoch = self.forge.cursor_epoch
        if 0 < start < total:
            rels.append(("prev", {"before": _cursor(view.keys[start], epoch)}))
        if end < total:
            rels.append(("next", {"after": _cursor(view.keys[end - 1], epoch)}))
        rels.append(("first", {"page": 1}))
        return self._listing(req, coll.body(view.indices[start:end]), base, rels)

    def _listing(self, req: _Request, body: bytes, base: str, rels: list) -> _Response:
        resp = _github_ok(body)
        if self.forge.link_origin:  # links name another scheme://host:port than the fake's own
            base = self.forge.link_origin + base.removeprefix(self.forge.base_url)
        if rels:
            resp.headers["link"] = _link(base, req.pairs, rels)
        return resp


# ----------------------------------------------------------------------------- GitHub GraphQL


def _gql_cursor(kind: str, offset: int, epoch: int = 0) -> str:
    return base64.b64encode(f"{kind}:{offset}:{epoch}".encode()).decode()


def _gql_offset(kind: str, cursor: str | None, epoch: int = 0) -> int:
    """Where a connection goes on after `cursor` (its last item's offset, plus one); ValueError
    for a cursor of another connection or of an earlier cursor epoch."""
    if not cursor:
        return 0
    try:
        text = base64.b64decode(cursor.encode(), validate=True).decode()
    except (ValueError, UnicodeDecodeError) as exc:
        raise ValueError("not a cursor") from exc
    found, offset, made = [*text.split(":"), "", ""][:3]
    if found != kind or not offset.isdigit() or made != str(epoch):
        raise ValueError("not a cursor of this connection")
    return int(offset) + 1


_INT32 = 2**31  # GraphQL's Int: `databaseId` cannot hold an id past it (`fullDatabaseId` does)


class _InvalidCursor(Exception):
    def __init__(self, cursor: str, path: list[str]):
        self.cursor, self.path = cursor, path


class _GithubGraphql:
    """The two queries the harvester sends, told apart by operation name (a fake, not a GraphQL
    engine): `ConcordIssues` (repository.issues, newest first, `filterBy.since` on updatedAt, each
    issue with its first 100 comments) and `ConcordIssueComments` (one issue's comments after a
    cursor). Shapes follow GitHub's GraphQL reference; pull requests are never in `issues`.

    As on GitHub: a renamed repository answers under its old name too (with its current
    `nameWithOwner`); an unknown cursor is an INVALID_CURSOR_ARGUMENTS error; an issue that is
    gone is a NOT_FOUND error beside `issue: null`; `databaseId` is null past 32 bits."""

    def __init__(self, forge: FakeForge):
        self.forge = forge

    def answer(self, query: str, variables: dict) -> dict:
        key = (variables["owner"].lower(), variables["name"].lower())
        if key in self.forge._redirects:
            key = tuple(part.lower() for part in self.forge._redirects[key])
        repo = self.forge._github.get(key)
        if repo is None:
            message = f"Could not resolve to a Repository with the name '{variables['owner']}/"
            message += f"{variables['name']}'."
            error = {"type": "NOT_FOUND", "path": ["repository"], "message": message}
            return {"data": {"repository": None}, "errors": [error]}
        named = {"nameWithOwner": f"{repo.owner}/{repo.name}"}
        try:
            if "ConcordIssueComments" in query:
                return self._issue_comments(repo, variables, named)
            if "ConcordIssues" in query:
                return {"data": {"repository": {**named, "issues": self._issues(repo, variables)}}}
        except _InvalidCursor as bad:
            error = {
                "type": "INVALID_CURSOR_ARGUMENTS",
                "path": bad.path,
                "message": f"`{bad.cursor}` does not appear to be a valid cursor.",
            }
            return {"data": {"repository": {**named, bad.path[-1]: None}}, "errors": [error]}
        raise ValueError("the fake answers only the harvester's two queries")

    def _offset(self, kind: str, cursor: str | None, path: list[str]) -> int:
        try:
            return _gql_offset(kind, cursor, self.forge.cursor_epoch)
        except ValueError:
            raise _InvalidCursor(cursor or "", path) from None

    def _issues(self, repo: _GithubRepo, variables: dict) -> dict:
        since = _since(variables.get("since"))
        items = repo.issues.items
        listed = repo.graphql_issues.get(since)
        if listed is None:  # built once per `since`, as the REST listings are
            updated = repo.issues.values["updated"]
            view = repo.issues.view("created", True, ("all", None, frozenset()), None)
            listed = repo.graphql_issues[since] = [
                i
                for i in view.indices
                if "pull_request" not in items[i] and (since is None or updated[i] >= since)
            ]
        start = self._offset("issues", variables.get("after"), ["repository", "issues"])
        first = int(variables.get("first", 100))
        page = listed[start : start + first]
        epoch = self.forge.cursor_epoch
        return {
            "pageInfo": {
                "hasNextPage": start + first < len(listed),
                "endCursor": _gql_cursor("issues", start + len(page) - 1, epoch) if page else None,
            },
            "nodes": [self._issue_node(repo, items[i], first) for i in page],
        }

    def _issue_node(self, repo: _GithubRepo, item: dict, first: int) -> dict:
        return {
            "number": item["number"],
            **_database_ids(item["id"]),
            "url": item["html_url"],
            "title": item["title"],
            "body": item["body"] or "",
            "state": item["state"].upper(),
            "createdAt": item["created_at"],
            "updatedAt": item["updated_at"],
            "closedAt": item["closed_at"],
            "author": _graphql_author(item["user"]),
            "labels": {"nodes": [{"name": label["name"]} for label in item["labels"]]},
            "comments": self._comments(repo, item["number"], None, first),
        }

    def _issue_comments(self, repo: _GithubRepo, variables: dict, named: dict) -> dict:
        number = int(variables["number"])
        if number not in repo.by_number:
            error = {
                "type": "NOT_FOUND",
                "path": ["repository", "issue"],
                "message": f"Could not resolve to an Issue with the number of {number}.",
            }
            return {"data": {"repository": {**named, "issue": None}}, "errors": [error]}
        comments = self._comments(repo, number, variables.get("after"))
        return {"data": {"repository": {**named, "issue": {"comments": comments}}}}

    def _comments(
        self, repo: _GithubRepo, number: int, after: str | None, first: int = 100
    ) -> dict:
        indices = repo.comments_of.get(number, [])
        path = ["repository", "issue", "comments"]
        start = self._offset("comments", after, path)
        page = indices[start : start + first]
        notes = repo.comments.items
        epoch = self.forge.cursor_epoch
        return {
            "totalCount": len(indices),
            "pageInfo": {
                "hasNextPage": start + first < len(indices),
                "endCursor": _gql_cursor("comments", start + len(page) - 1, epoch)
                if page
                else None,
            },
            "nodes": [
                {
                    **_database_ids(notes[i]["id"]),
                    "body": notes[i]["body"],
                    "createdAt": notes[i]["created_at"],
                    "updatedAt": notes[i]["updated_at"],
                    "author": _graphql_author(notes[i]["user"]),
                }
                for i in page
            ],
        }


def _null_a_node(data: dict, fault: str) -> None:
    """GitHub's partial answer: the first issue (or its first comment) null, an error beside."""
    nodes = data["data"]["repository"]["issues"]["nodes"]
    if not nodes:
        return
    path = ["repository", "issues", "nodes", 0]
    if fault == "null_issue":
        nodes[0] = None
    else:
        nodes[0]["comments"]["nodes"][0] = None
        path += ["comments", "nodes", 0]
    error = {"message": "Something went wrong while executing your query.", "path": path}
    data["errors"] = [error]


def _database_ids(host_id: int) -> dict:
    """`databaseId` (a 32-bit Int, null past it) and `fullDatabaseId` (a BigInt, as a string)."""
    return {"databaseId": host_id if host_id < _INT32 else None, "fullDatabaseId": str(host_id)}


# ----------------------------------------------------------------------------- Gitee routes

_GITEE_REPO = re.compile(r"^/repos/([^/]+)/([^/]+)(/.*)?$")
_GITEE_ISSUE = re.compile(r"^/issues/([^/]+)$")
_GITEE_ISSUE_COMMENTS = re.compile(r"^/issues/([^/]+)/comments$")
_GITEE_STATES = ("open", "progressing", "closed", "rejected")


class _GiteeApi:
    """Gitee API v5 routes under /gitee/api/v5: numbered pages with total_count/total_page."""

    def __init__(self, forge: FakeForge):
        self.forge = forge

    def route(self, req: _Request, subpath: str) -> _Response:
        match = _GITEE_REPO.match(subpath)
        if match is None:
            return _json(404, _GITEE_404)
        repo = self.forge._gitee.get((match[1].lower(), match[2].lower()))
        if repo is None:
            return _json(404, _GITEE_NO_PROJECT)
        try:
            return self._dispatch(req, repo, (match[3] or "").rstrip("/"))
        except ValueError:
            return _json(400, {"message": "since is invalid"})

    def _dispatch(self, req: _Request, repo: _GiteeRepo, rest: str) -> _Response:
        if rest == "/issues":
            return self._issues(req, repo)
        if rest == "/issues/comments":
            return self._repo_comments(req, repo)
        if match := _GITEE_ISSUE.match(rest):
            index = repo.by_number.get(match[1])  # case-sensitive, as Gitee says
            if index is None:
                return _json(404, _GITEE_404)
            return _Response(200, repo.issues.blob(index), {"content-type": "application/json"})
        if match := _GITEE_ISSUE_COMMENTS.match(rest):
            return self._issue_comments(req, repo, match[1])
        return _json(404, _GITEE_404)

    def _issues(self, req: _Request, repo: _GiteeRepo) -> _Response:
        q = req.query
        state, sort = q.get("state", "open"), q.get("sort", "created")
        direction = q.get("direction", "desc")
        if state not in (*_GITEE_STATES, "all"):
            return _json(400, {"message": "state does not have a valid value"})
        if sort not in ("created", "updated") or direction not in ("asc", "desc"):
            return _json(400, {"message": "sort or direction does not have a valid value"})
        since = _since(q.get("since"))
        keep = None
        if state != "all" or since is not None:
            states, updated = repo.states, repo.issues.values["updated"]

            def keep(i: int) -> bool:
                return (state == "all" or states[i] == state) and (
                    since is None or updated[i] >= since
                )

        view = repo.issues.view(sort, direction == "desc", (state, since), keep)
        return self._page(req, repo.issues, view.indices)

    def _repo_comments(self, req: _Request, repo: _GiteeRepo) -> _Response:
        q = req.query
        sort = q.get("sort", "created")
        direction = q.get("direction", "asc") if "sort" in q else "asc"
        if sort not in ("created", "updated") or direction not in ("asc", "desc"):
            return _json(400, {"message": "sort or direction does not have a valid value"})
        since = _since(q.get("since"))
        keep = None
        if since is not None:
            updated = repo.comments.values["updated"]

            def keep(i: int) -> bool:
                return updated[i] >= since

        if since is not None and (sort, direction) == ("updated", "asc"):
            view = repo.comments.updated_since(since)  # a harvest asks one `since` a page
        else:
            view = repo.comments.view(sort, direction == "desc", (since,), keep)
        return self._page(req, repo.comments, view.indices)

    def _issue_comments(self, req: _Request, repo: _GiteeRepo, number: str) -> _Response:
        if number not in repo.by_number:
            return _json(404, _GITEE_404)
        indices = repo.comments_of.get(number, [])
        since = _since(req.query.get("since"))
        if since is not None:
            updated = repo.comments.values["updated"]
            indices = [i for i in indices if updated[i] >= since]
        if req.query.get("order") == "desc":
            indices = indices[::-1]
        return self._page(req, repo.comments, indices)

    @staticmethod
    def _page(req: _Request, coll: _Collection, indices: list[int]) -> _Response:
        """Numbered pages, default 20, [] past the end, totals in headers (§2.3)."""
        per_page = _per_page(req.query.get("per_page"), 20)
        page = max(1, _int_or(req.query.get("page"), 1))
        start, total = (page - 1) * per_page, len(indices)
        body = coll.body(indices[start : start + per_page])
        head = {
            "content-type": "application/json",
            "total_count": str(total),
            "total_page": str(math.ceil(total / per_page)),
        }
        return _Response(200, body, head)


# ----------------------------------------------------------------------------- the server


class _Handler(BaseHTTPRequestHandler):
    """Hands every request to the forge; HTTP/1.1 keep-alive so clients can reuse sockets."""

    protocol_version = "HTTP/1.1"
    server_version = "FakeForge/1.0"
    timeout = 30  # idle keep-alive connections end after this

    def setup(self):
        super().setup()
        # headers and body go out in two writes: without NODELAY, Nagle + delayed ACK add 40 ms
        self.connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.server.connections.add(self.connection)

    def finish(self):
        self.server.connections.discard(self.connection)
        super().finish()

    def date_time_string(self, timestamp=None):  # the `Date` header, on the host's clock
        return formatdate(time.time() + self.server.forge.clock_offset, usegmt=True)

    def do_GET(self):  # the http.server naming
        self.server.forge._serve(self)

    def do_POST(self):  # GitHub's GraphQL endpoint
        self.server.forge._serve(self)

    def do_HEAD(self):
        self.server.forge._serve(self)

    def log_message(self, format, *args):  # quiet: tests read forge.requests
        pass


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    block_on_close = False  # keep-alive clients must not make stop() wait
    request_queue_size = 128

    def __init__(self, address, forge: FakeForge):
        self.forge = forge
        self.connections: set[socket.socket] = set()
        super().__init__(address, _Handler)


class FakeForge:
    """A fake GitHub (under /github) and Gitee (under /gitee/api/v5) on one local port.

    Knobs are plain attributes, read on every request, so tests may change them while it runs.
    Request ordinals (for `secondary_limit_on` / `fail_5xx_on`) count every request since start
    or the last `reset_log()`, from 1.
    """

    def __init__(self, host: str = "127.0.0.1", port: int = 0):
        self._address = (host, port)
        self._server: _Server | None = None
        self._thread: threading.Thread | None = None
        self._lock = threading.Lock()
        self._github: dict[tuple[str, str], _GithubRepo] = {}
        self._github_by_id: dict[int, _GithubRepo] = {}
        self._gitee: dict[tuple[str, str], _GiteeRepo] = {}
        self._redirects: dict[tuple[str, str], tuple[str, str]] = {}
        self._transfers: dict[tuple[str, str, int], tuple[str, str, int]] = {}
        self._github_api, self._gitee_api = _GithubApi(self), _GiteeApi(self)
        self._graphql_api = _GithubGraphql(self)
        self.requests: list[dict] = []
        self._count = 0
        self.reset_knobs()

    def reset_knobs(self) -> None:
        """Every knob back to its default (all faults off) and the rate budget state cleared."""
        self.token: str | None = None
        self.cursor_after_page: int | None = None
        self.comments_page_limit: int | None = None  # repo-wide comments 422 beyond this page
        # ... or, True, the last page served just has no `next` (a listing quietly cut short)
        self.comments_cap_silent = False
        self.cursor_epoch = 0  # bump it: every `after=` cursor handed out so far is refused (422)
        self.refuse_cursors = False  # every `after=`/`before=` cursor is refused (422)
        self.rate_limit: int | None = None
        self.rate_limit_status = 403
        self.rate_limit_reset_in: float = 2
        self.rate_limit_refill = 5000
        self.secondary_limit_on: set[int] = set()
        self.secondary_limit_status = 403
        self.retry_after: int | None = 1
        self.secondary_in_old_words = False  # GitHub's "abuse detection mechanism" (_GH_ABUSE)
        self.fail_5xx_on: set[int] = set()
        self.fail_5xx_status = 502
        # Paths answered with that 5xx every time (GitHub's 502 for an issue too heavy to render)
        self.fail_5xx_paths: set[str] = set()
        # Answers that keep trickling: after the headers, one byte of the body every
        # `trickle_seconds` (each read returns in time, the whole never does).
        self.trickle_on: set[int] = set()
        # Answers cut off halfway: the headers promise the whole body, half of it comes, then the
        # connection closes (a proxy or load balancer dropping it)
        self.cut_on: set[int] = set()
        self.trickle_headers_on: set[int] = set()  # ... the status line and headers too
        self.trickle_seconds = 0.05
        # 200 answers whose body is an HTML error page (a proxy or the host's unicorn page).
        self.html_on: set[int] = set()
        # GraphQL answers gone wrong, by ordinal: "timeout" (errors, no data), "null_issue" /
        # "null_comment" (errors beside partial data with that node null)
        self.graphql_fault_on: dict[int, str] = {}
        # A page of more issues than this takes GitHub past its ten seconds: the timeout answer
        self.graphql_timeout_above: int | None = None
        # How GraphQL words a used-up budget: the error type, and whether `data.rateLimit` is
        # there too (else only the x-ratelimit-* headers tell the reset)
        self.graphql_limit_type = "RATE_LIMITED"
        self.graphql_limit_data = True
        # Secondary limits on GraphQL answered as GitHub may: HTTP 200 with an error, no data
        self.secondary_as_graphql_error = False
        self.retry_after_date = False  # `retry-after` as an HTTP date instead of seconds
        # Seconds the host's clock is ahead of (or, negative, behind) ours: its `Date` header,
        # resets and Retry-After dates are on its clock
        self.clock_offset = 0.0
        # Something to do just before answering the request of that ordinal (a deletion, an
        # edit, a transfer mid-harvest)
        self.on_request: dict[int, Callable[[], None]] = {}
        self.delay = 0.0
        # GitHub `link` URLs point at this origin (e.g. "http://127.0.0.2:8123") instead of the
        # fake's own: a forge, or someone between, sending the client's token elsewhere.
        self.link_origin: str | None = None
        self.redirect_by_name = False  # a renamed repository's 301 names /repos/{new} instead
        # (owner, repo, number) of issues an admin deleted: GitHub answers them 410 Gone
        self.github_deleted: set[tuple[str, str, int]] = set()
        self._reset_at: int | None = None
        self._window_reset = int(time.time()) + 3600

    # -- lifecycle

    def start(self) -> FakeForge:
        if self._server is None:
            self._server = _Server(self._address, self)
            self._thread = threading.Thread(
                target=self._server.serve_forever,
                kwargs={"poll_interval": 0.05},
                name="fake-forge",
                daemon=True,
            )
            self._thread.start()
        return self

    def stop(self) -> None:
        """Stop serving and cut open keep-alive connections, so clients see a dead forge."""
        server, self._server = self._server, None
        if server is None:
            return
        server.shutdown()
        for conn in list(server.connections):
            with contextlib.suppress(OSError):
                conn.shutdown(socket.SHUT_RDWR)
        server.server_close()
        self._thread.join(timeout=5)

    def __enter__(self) -> FakeForge:
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()

    @property
    def base_url(self) -> str:
        if self._server is None:
            raise RuntimeError("FakeForge is not started: call start() or use it as a context")
        host, port = self._server.server_address[:2]
        return f"http://{host}:{port}"

    @property
    def github_api(self) -> str:
        return self.base_url + GITHUB_PREFIX

    @property
    def gitee_api(self) -> str:
        return self.base_url + GITEE_PREFIX

    # -- data

    def add_github_repo(
        self,
        owner: str,
        repo: str,
        issues: list[dict],
        comments: list[dict],
        repo_id: int | None = None,
    ) -> int:
        """Serve a repository (replacing one of the same name); returns its numeric id."""
        key = (owner.lower(), repo.lower())
        with self._lock:
            old = self._github.get(key)
            if repo_id is None:
                repo_id = old.repo_id if old else self._free_repo_id(key)
            made = _GithubRepo(owner, repo, repo_id, issues, comments)
            if old is not None:
                self._github_by_id.pop(old.repo_id, None)
            self._github[key], self._github_by_id[repo_id] = made, made
        return repo_id

    def _free_repo_id(self, key: tuple[str, str]) -> int:
        repo_id = 100_000_000 + zlib.crc32("/".join(key).encode()) % 900_000_000
        while repo_id in self._github_by_id:
            repo_id += 1
        return repo_id

    def github_repo_id(self, owner: str, repo: str) -> int:
        return self._github[(owner.lower(), repo.lower())].repo_id

    def upsert_github_items(
        self, owner: str, repo: str, issues: Iterable[dict] = (), comments: Iterable[dict] = ()
    ) -> None:
        """Add or replace issues (by number) and comments (by id), e.g. between two harvests."""
        old = self._github[(owner.lower(), repo.lower())]
        merged = {i["number"]: i for i in old.issues.items} | {i["number"]: i for i in issues}
        notes = {c["id"]: c for c in old.comments.items} | {c["id"]: c for c in comments}
        self.add_github_repo(
            old.owner, old.name, list(merged.values()), list(notes.values()), repo_id=old.repo_id
        )

    def add_gitee_repo(
        self, owner: str, repo: str, issues: list[dict], comments: list[dict]
    ) -> None:
        made = _GiteeRepo(owner, repo, issues, comments)
        with self._lock:
            self._gitee[(owner.lower(), repo.lower())] = made

    def upsert_gitee_items(
        self, owner: str, repo: str, issues: Iterable[dict] = (), comments: Iterable[dict] = ()
    ) -> None:
        old = self._gitee[(owner.lower(), repo.lower())]
        merged = {i["number"]: i for i in old.issues.items} | {i["number"]: i for i in issues}
        notes = {c["id"]: c for c in old.comments.items} | {c["id"]: c for c in comments}
        self.add_gitee_repo(old.owner, old.name, list(merged.values()), list(notes.values()))

    def redirect_github_repo(
        self, old_owner: str, old_repo: str, new_owner: str, new_repo: str
    ) -> None:
        """Requests under /repos/{old} answer 301 to the same path under /repos/{new}."""
        self._redirects[(old_owner.lower(), old_repo.lower())] = (new_owner, new_repo)

    def transfer_github_issue(
        self, owner: str, repo: str, number: int, to_owner: str, to_repo: str, to_number: int
    ) -> None:
        """The issue (and its comments) under owner/repo answer 301 to to_owner/to_repo's issue
        to_number, which must be served; the caller takes it out of the old listing."""
        key = (owner.lower(), repo.lower(), number)
        self._transfers[key] = (to_owner, to_repo, to_number)

    # -- the log

    @property
    def request_count(self) -> int:
        return self._count

    def reset_log(self) -> None:
        """Empty the log and restart request ordinals at 1."""
        with self._lock:
            self.requests.clear()
            self._count = 0

    # -- serving

    def _serve(self, handler: _Handler) -> None:
        req = self._parse(handler)
        if self.delay:
            time.sleep(self.delay)
        try:
            resp = self._answer(req)
        except Exception as exc:  # a fake must say what broke instead of hanging up
            resp = _json(500, {"message": f"fake forge error: {exc!r}"})
        self._log(req, resp.status)  # before writing: a client may look the moment it reads
        trickle = self.trickle_seconds if req.ordinal in self.trickle_on else None
        if req.ordinal in self.trickle_headers_on:
            self._write_trickling(handler, resp)
            return
        if req.ordinal in self.cut_on:
            self._write_cut(handler, resp)
            return
        self._write(handler, resp, trickle)

    def _parse(self, handler: _Handler) -> _Request:
        parts = urlsplit(handler.path)
        pairs = parse_qsl(parts.query, keep_blank_values=True)
        headers = {name.lower(): value for name, value in handler.headers.items()}
        with self._lock:
            self._count += 1
            ordinal = self._count
        length = _int_or(headers.get("content-length"), 0)
        body = handler.rfile.read(length) if length > 0 else b""
        return _Request(
            handler.command,
            handler.path,
            unquote(parts.path),
            pairs,
            dict(pairs),
            headers,
            ordinal,
            body,
        )

    def _answer(self, req: _Request) -> _Response:
        """Faults first (5xx, auth, secondary), then the route, then ETag and the budget."""
        host, subpath = self._host_of(req.path)
        if host is None:
            return _json(404, {"message": "Not Found"})
        if req.ordinal in self.on_request:
            self.on_request[req.ordinal]()
        if req.ordinal in self.fail_5xx_on or req.path in self.fail_5xx_paths:
            return _server_error(self.fail_5xx_status)
        if req.ordinal in self.html_on:
            return _Response(200, _UNICORN, {"content-type": "text/html; charset=utf-8"})
        if not self._authorized(host, req):
            resp = _json(401, _GH_401 if host == "github" else _GITEE_401)
            return self._rate_headers(host, req, resp, self._budget(consume=False))
        if req.ordinal in self.secondary_limit_on:
            if subpath == "/graphql" and self.secondary_as_graphql_error:
                error = {"message": _GH_SECONDARY["message"]}
                return self._later(_json(200, {"data": None, "errors": [error]}))
            return self._secondary(host, req)
        if host == "github" and subpath == "/graphql":
            return self._graphql(req)
        api = self._github_api if host == "github" else self._gitee_api
        resp = api.route(req, subpath)
        if host == "github" and resp.conditional and resp.status == 200:
            resp.headers["etag"] = _etag(req.target, resp.body)
            if _etag_matches(req.headers.get("if-none-match"), resp.headers["etag"]):
                not_modified = _Response(304, headers={"etag": resp.headers["etag"]})
                # free only "while correctly authorized with an Authorization header" (GitHub)
                signed = bool(_token_from_header(req.headers.get("authorization", "")))
                budget = self._budget(consume=not signed)
                return self._rate_headers(host, req, not_modified, budget)
        budget = self._budget(consume=True)
        if not budget[0]:
            body = _GH_PRIMARY if host == "github" else _GITEE_RATE
            resp = _json(self.rate_limit_status, body)
        return self._rate_headers(host, req, resp, budget)

    def _graphql(self, req: _Request) -> _Response:
        """GitHub's GraphQL endpoint: a token is required; each query costs a point of the same
        budget (the queries the harvester sends cost 1 on GitHub too)."""
        if req.method != "POST":
            return _json(404, _GH_404)
        if not _token_from_header(req.headers.get("authorization", "")):
            resp = _json(401, {"message": "This endpoint requires you to be authenticated."})
            return self._rate_headers("github", req, resp, self._budget(consume=False))
        budget = self._budget(consume=True)
        _, remaining, reset = budget
        if not budget[0]:
            message = "API rate limit exceeded for user ID 1."
            error = {"type": self.graphql_limit_type, "message": message}
            points = {"rateLimit": self._points(remaining, reset)}
            body = {"data": points if self.graphql_limit_data else None, "errors": [error]}
            return self._rate_headers("github", req, _json(200, body), budget)
        fault = self.graphql_fault_on.get(req.ordinal)
        if self.graphql_timeout_above is not None and _asks_issues(req, self.graphql_timeout_above):
            fault = "timeout"
        if fault == "timeout":
            message = "Something went wrong while executing your query. This may be the result of "
            message += "a timeout, or it could be a GitHub bug."
            body = {"data": None, "errors": [{"message": message}]}
            return self._rate_headers("github", req, _json(200, body), budget)
        try:
            payload = json.loads(req.body or b"{}")
            data = self._graphql_api.answer(payload.get("query", ""), payload["variables"])
        except (ValueError, KeyError, TypeError) as exc:
            return _json(400, {"message": f"Problems parsing JSON: {exc}"})
        if fault in ("null_issue", "null_comment"):
            _null_a_node(data, fault)
        data["data"]["rateLimit"] = self._points(remaining, reset)
        return self._rate_headers("github", req, _json(200, data), budget)

    def _points(self, remaining: int, reset: int) -> dict:
        return {"cost": 1, "remaining": remaining, "resetAt": _gh_time(self._host_epoch(reset))}

    def _host_epoch(self, epoch: float) -> int:
        """A time of ours (epoch seconds) as the host's clock shows it."""
        return int(epoch + self.clock_offset)

    def _later(self, resp: _Response) -> _Response:
        """`retry-after` on a secondary limit, as seconds or as an HTTP date on the host's clock."""
        if self.retry_after is not None:
            resp.headers["retry-after"] = (
                formatdate(self._host_epoch(time.time() + self.retry_after), usegmt=True)
                if self.retry_after_date
                else str(self.retry_after)
            )
        return resp

    @staticmethod
    def _host_of(path: str) -> tuple[str | None, str]:
        for host, prefix in (("github", GITHUB_PREFIX), ("gitee", GITEE_PREFIX)):
            if path == prefix or path.startswith(prefix + "/"):
                return host, path[len(prefix) :]
        return None, path

    def _authorized(self, host: str, req: _Request) -> bool:
        if self.token is None:
            return True
        given = {_token_from_header(req.headers.get("authorization", ""))}
        if host == "gitee":
            given.add(req.query.get("access_token"))
        return self.token in given

    def _secondary(self, host: str, req: _Request) -> _Response:
        """A secondary-limit 403 (or 429): remaining stays non-zero; retry-after is optional."""
        github = _GH_ABUSE if self.secondary_in_old_words else _GH_SECONDARY
        body = github if host == "github" else _GITEE_RATE
        resp = self._later(_json(self.secondary_limit_status, body))
        return self._rate_headers(host, req, resp, self._budget(consume=False))

    def _budget(self, *, consume: bool) -> tuple[bool, int, int]:
        """(allowed, remaining, reset epoch) of the primary budget; refills once reset passes."""
        with self._lock:
            now = time.time()
            if self._reset_at is not None and now >= self._reset_at:
                if self.rate_limit is not None and self.rate_limit <= 0:
                    self.rate_limit = self.rate_limit_refill
                self._reset_at = None
            if now >= self._window_reset:
                self._window_reset = int(now) + 3600
            if self.rate_limit is None:
                return True, self.rate_limit_refill, self._window_reset
            if self.rate_limit <= 0:
                if self._reset_at is None:
                    self._reset_at = math.ceil(now + self.rate_limit_reset_in)
                return False, 0, self._reset_at
            if consume:
                self.rate_limit -= 1
                if self.rate_limit == 0:
                    self._reset_at = math.ceil(now + self.rate_limit_reset_in)
            return True, self.rate_limit, self._reset_at or self._window_reset

    def _rate_headers(
        self, host: str, req: _Request, resp: _Response, budget: tuple[bool, int, int]
    ) -> _Response:
        """GitHub sends x-ratelimit-* always; the Gitee fake only while a budget is set."""
        _, remaining, reset = budget
        limit = max(self.rate_limit_refill, remaining)
        if host == "github":
            version = req.headers.get("x-github-api-version", API_VERSIONS[0])
            resp.headers.update(
                {
                    "x-ratelimit-limit": str(limit),
                    "x-ratelimit-remaining": str(remaining),
                    "x-ratelimit-used": str(limit - remaining),
                    "x-ratelimit-reset": str(self._host_epoch(reset)),
                    "x-ratelimit-resource": "core",
                    "x-github-api-version-selected": version
                    if version in API_VERSIONS
                    else API_VERSIONS[0],
                }
            )
        elif self.rate_limit is not None:
            resp.headers.update(
                {
                    "X-RateLimit-Limit": str(limit),
                    "X-RateLimit-Remaining": str(remaining),
                    "X-RateLimit-Reset": str(self._host_epoch(reset)),
                }
            )
        return resp

    def _log(self, req: _Request, status: int) -> None:
        entry = {
            "method": req.method,
            "path": req.path,
            "query": req.query,
            "headers": req.headers,
            "status": status,
            "body": req.body,
            "ordinal": req.ordinal,
            "time": time.monotonic(),  # when it was answered: tests check the waits between
        }
        with self._lock:
            self.requests.append(entry)

    def _write_trickling(self, handler: _Handler, resp: _Response) -> None:
        """The whole answer, from its status line on, a byte at a time."""
        head = [f"HTTP/1.1 {resp.status} OK"]
        head += [f"{name}: {value}" for name, value in resp.headers.items()]
        head.append(f"content-length: {len(resp.body)}")
        head.append("x-fake-padding: " + "." * 4000)  # minutes of headers alone
        raw = ("\r\n".join(head) + "\r\n\r\n").encode() + resp.body
        with contextlib.suppress(BrokenPipeError, ConnectionResetError):
            _trickle(handler, raw, self.trickle_seconds)
        handler.close_connection = True

    @staticmethod
    def _write_cut(handler: _Handler, resp: _Response) -> None:
        with contextlib.suppress(BrokenPipeError, ConnectionResetError):
            handler.send_response(resp.status)
            for name, value in resp.headers.items():
                handler.send_header(name, value)
            handler.send_header("content-length", str(len(resp.body)))
            handler.end_headers()
            handler.wfile.write(resp.body[: len(resp.body) // 2])
            handler.wfile.flush()
        handler.close_connection = True

    @staticmethod
    def _write(handler: _Handler, resp: _Response, trickle: float | None = None) -> None:
        try:
            handler.send_response(resp.status)
            for name, value in resp.headers.items():
                handler.send_header(name, value)
            if resp.status != 304:
                handler.send_header("content-length", str(len(resp.body)))
            handler.end_headers()
            if resp.status != 304 and handler.command != "HEAD":
                if trickle is None:
                    handler.wfile.write(resp.body)
                else:
                    _trickle(handler, resp.body, trickle)
        except (BrokenPipeError, ConnectionResetError):
            handler.close_connection = True


def _trickle(handler: _Handler, body: bytes, every: float) -> None:
    """The body a byte at a time until the client hangs up (or, long after, the body ends)."""
    handler.wfile.flush()
    for k in range(len(body)):
        handler.wfile.write(body[k : k + 1])
        handler.wfile.flush()
        time.sleep(every)


# ----------------------------------------------------------------------------- synthetic data

_MODELS = (
    "Llama-2-7B",
    "Llama-2-70B",
    "Llama-3-8B-Instruct",
    "Llama-3-70B",
    "Qwen2-7B",
    "Qwen2.5-72B",
    "Mixtral-8x7B",
    "Mistral-7B-v0.1",
    "DeepSeek-V2-Lite",
    "Baichuan2-13B",
    "ChatGLM3-6B",
    "GPT-NeoX-20B",
    "Falcon-40B",
    "Phi-3-mini",
    "Gemma-7B",
    "InternLM2-20B",
)
_SYMPTOMS = (
    "CUDA out of memory",
    "loss becomes NaN after a few hundred steps",
    "training hangs at the first all-reduce",
    "NCCL watchdog timeout",
    "generation returns empty strings",
    "throughput drops by half",
    "checkpoint fails to load",
    "KV cache allocation fails",
    "tokenizer produces wrong ids",
    "gradient norm explodes",
    "segfault in a fused kernel",
    "accuracy regresses after upgrade",
    "outputs repeat the prompt",
    "RuntimeError: expected all tensors to be on the same device",
    "illegal memory access in flash attention",
    "process killed by the OOM killer",
    "shape mismatch when resuming from a checkpoint",
    "deadlock in the pipeline schedule",
)
_CONTEXTS = (
    "with tensor_parallel_size=4",
    "with ZeRO stage 3",
    "under FP8 mixed precision",
    "when fine-tuning with LoRA",
    "with pipeline parallelism",
    "on 8x A100 80GB",
    "on Ascend 910B",
    "with sequence length 32k",
    "with continuous batching",
    "after enabling activation checkpointing",
    "with bf16 and gradient accumulation",
    "when quantized to int4 (AWQ)",
    "with speculative decoding",
    "on multi-node InfiniBand",
    "with prefix caching enabled",
)
_TITLE_FORMS = (
    "[Bug]: {symptom} {context} ({model})",
    "{model}: {symptom} {context}",
    "{symptom} {context}",
    "[Usage]: how to avoid '{symptom}' {context}?",
    "[Performance]: {model} {symptom} {context}",
)
_ENVS = (
    "PyTorch 2.1.2, CUDA 12.1, 8x A100-SXM4-80GB",
    "PyTorch 2.3.0, CUDA 12.4, 4x H100 80GB",
    "torch_npu 2.1.0, CANN 8.0.RC2, 8x Ascend 910B",
    "PyTorch 2.2.1, ROCm 6.0, 8x MI250X",
    "PyTorch 2.4.0, CUDA 11.8, 2x RTX 4090",
    "MindSpore 2.3.0, CANN 7.0, 8x Ascend 910B",
)
_DETAILS = (
    "It happens right after the first optimizer step.",
    "Smaller models run fine with the same script.",
    "Reducing micro_batch_size to 1 does not help.",
    "The same config worked on the previous release.",
    "It only reproduces with more than one node.",
    "Memory grows steadily until the process is killed.",
    "Nothing is logged; the job just stops making progress.",
)
_PR_AREAS = ("Kernel", "Core", "Bugfix", "Doc", "CI", "Model", "Perf", "Frontend")
_PR_CHANGES = (
    "Fuse RMSNorm into the attention prologue",
    "Fix NCCL timeout when resuming from checkpoint",
    "Add an FP8 GEMM path for {model}",
    "Support sequence parallelism in the MoE layer",
    "Reduce host overhead in the scheduler loop",
    "Speed up checkpoint resharding",
    "Handle empty prompts in the tokenizer",
    "Add a test for KV cache eviction",
)
_REPLIES = (
    "Can you share the full traceback and the launch command?",
    "Try `--gpu-memory-utilization 0.85`.",
    "Same issue here on {model}.",
    "Fixed in #{ref}, please upgrade.",
    "This looks like a duplicate of #{ref}.",
    "Setting `NCCL_P2P_DISABLE=1` worked for me.",
    "Could you try the latest nightly?",
    "We reduced the micro batch size to 1 and it runs now.",
    "Closing as stale, feel free to reopen.",
    "Thanks, confirmed on our side; a fix is in progress.",
)
_NAMES = (
    "alice",
    "bob",
    "carol",
    "dmitri",
    "erin",
    "feng",
    "gita",
    "hiro",
    "ines",
    "jun",
    "kofi",
    "lena",
    "mei",
    "nils",
    "omar",
    "priya",
    "quinn",
    "rui",
    "sven",
    "tao",
    "uma",
    "wei",
    "xin",
    "yara",
    "zoe",
)
_GH_LABELS = (
    ("bug", "d73a4a", True, "Something isn't working"),
    ("enhancement", "a2eeef", True, "New feature or request"),
    ("question", "d876e3", True, "Further information is requested"),
    ("documentation", "0075ca", True, "Improvements or additions to documentation"),
    ("performance", "fbca04", False, "Speed or memory use"),
    ("stale", "ededed", False, "Over 90 days without activity"),
)
_GITEE_ISSUE_STATE = {
    "open": "待办的",
    "progressing": "进行中",
    "closed": "已完成",
    "rejected": "已拒绝",
}
_DAY = 86_400


class _Rng(random.Random):
    """A seeded generator with cheap choice/randint: 160,000 synthetic items must stay quick."""

    def choice(self, seq):
        return seq[int(self.random() * len(seq))]

    def randint(self, a: int, b: int) -> int:
        return a + int(self.random() * (b - a + 1))


def _bound(value: str | date | datetime, zone: timezone, *, end: bool) -> int:
    """A window bound in epoch seconds; a bare date means its whole day in the host's own zone
    (UTC for GitHub, +08:00 for Gitee)."""
    if isinstance(value, datetime):
        return int((value if value.tzinfo else value.replace(tzinfo=zone)).timestamp())
    if isinstance(value, str) and "T" in value:
        return _bound(datetime.fromisoformat(value), zone, end=end)
    day = value if isinstance(value, date) else date.fromisoformat(value)
    moment = int(datetime(day.year, day.month, day.day, tzinfo=zone).timestamp())
    return moment + _DAY - 1 if end else moment


def _spread(n: int, low: int, high: int, rng: _Rng) -> list[int]:
    """n increasing moments inside [low, high], jittered so that they do not look like a grid."""
    span = high - low
    return [low + int(span * (i + rng.random()) / n) for i in range(n)]


def _id_base(kind: str, owner: str, repo: str) -> int:
    """A per-repo id block (10^6 ids wide), so ids from different repos do not collide."""
    return zlib.crc32(f"{kind}:{owner}/{repo}".lower().encode()) % 1_000_000 * 1_000_000


def _node_id(prefix: str, number: int) -> str:
    return prefix + base64.b64encode(str(number).encode()).decode().rstrip("=")


def _cap(text: str) -> str:
    return text[:1].upper() + text[1:]


def _issue_title(rng: _Rng) -> str:
    return rng.choice(_TITLE_FORMS).format(
        symptom=rng.choice(_SYMPTOMS), context=rng.choice(_CONTEXTS), model=rng.choice(_MODELS)
    )


def _issue_body(rng: _Rng) -> str | None:
    if rng.random() < 0.08:
        return None  # real bodies are often null
    return (
        f"### Your current environment\n{rng.choice(_ENVS)}\n\n### Describe the bug\n"
        f"{_cap(rng.choice(_SYMPTOMS))} {rng.choice(_CONTEXTS)}. {rng.choice(_DETAILS)}\n"
    )


def _pr_title(rng: _Rng) -> str:
    change = rng.choice(_PR_CHANGES).format(model=rng.choice(_MODELS))
    return f"[{rng.choice(_PR_AREAS)}] {change}"


def _reply(rng: _Rng, n_items: int) -> str:
    return rng.choice(_REPLIES).format(model=rng.choice(_MODELS), ref=rng.randint(1, n_items))


def _nul_body() -> str:
    return "Worker log ends with a NUL byte:\n```\nrank 3: step 812 loss=nan\u0000\n```\n"


def _logins(rng: _Rng, count: int) -> list[str]:
    suffixes = ("-dev", "-ml", "_npu", "2023", "-ai", "")
    return sorted({rng.choice(_NAMES) + rng.choice(suffixes) for _ in range(count)})


def _github_user(login: str) -> dict:
    uid = 1_000_000 + zlib.crc32(login.encode()) % 90_000_000
    return {
        "login": login,
        "id": uid,
        "node_id": _node_id("MDQ6VXNlcj", uid),
        "avatar_url": f"https://avatars.githubusercontent.com/u/{uid}?v=4",
        "gravatar_id": "",
        "url": f"https://api.github.com/users/{login}",
        "html_url": f"https://github.com/{login}",
        "type": "User",
        "user_view_type": "public",
        "site_admin": False,
    }


def _github_labels(owner: str, repo: str) -> dict[str, dict]:
    base = _id_base("label", owner, repo)
    return {
        name: {
            "id": base + i,
            "node_id": _node_id("LA_kwDO", base + i),
            "url": f"https://api.github.com/repos/{owner}/{repo}/labels/{name}",
            "name": name,
            "color": color,
            "default": default,
            "description": text,
        }
        for i, (name, color, default, text) in enumerate(_GH_LABELS)
    }


_NO_REACTIONS = dict.fromkeys(("-1", "laugh", "hooray", "confused", "heart", "rocket", "eyes"), 0)


def _reactions(url: str, rng: _Rng) -> dict:
    plus = rng.choice((0, 0, 0, 1, 2, 5))
    return {"url": url, "total_count": plus, "+1": plus, **_NO_REACTIONS}


@dataclass
class _Plan:
    """One issue-or-PR before it becomes a payload: its times and its comments' times."""

    number: int | str
    created: int  # epoch seconds, all three
    updated: int
    comment_times: list[tuple[int, int]]


def _plan_comments(created: int, count: int, rng: _Rng) -> list[tuple[int, int]]:
    """(created, updated) of `count` comments after the issue; about 1 in 10 edited later."""
    times = sorted(created + rng.randint(60, 30 * _DAY) for _ in range(count))
    return [(t, t if rng.random() < 0.9 else t + rng.randint(60, 2 * _DAY)) for t in times]


def _plan(number: int | str, created: int, n_comments: int, rng: _Rng) -> _Plan:
    notes = _plan_comments(created, n_comments, rng)
    touched = created + rng.randint(0, 45 * _DAY)
    updated = max([touched, *(u for _, u in notes)])
    return _Plan(number, created, updated, notes)


def make_github_issues(
    owner: str,
    repo: str,
    n_issues: int,
    n_prs: int = 0,
    comments_per_issue: int = 0,
    start="2023-01-01",
    end="2025-04-30",
    seed: int = 0,
    *,
    nul_in_body: bool = False,
) -> tuple[list, list]:
    """Deterministic GitHub issues, PRs (with `pull_request`) and their comments.

    Creation times spread over [start, end] (a bare date: that whole UTC day), numbers 1..n
    increase with creation time; every item, PRs included, gets `comments_per_issue` comments,
    so the repo-wide comment list holds PR comments the harvester must drop.
    """
    rng = _Rng(f"github:{owner}/{repo}:{seed}")
    total = n_issues + n_prs
    times = _spread(total, _bound(start, UTC, end=False), _bound(end, UTC, end=True), rng)
    prs = set(rng.sample(range(total), n_prs))
    nul = _nul_index(total, prs, owner, repo, seed) if nul_in_body else None
    users = [_github_user(login) for login in _logins(rng, 60)]
    labels = _github_labels(owner, repo)
    plans = [_plan(i + 1, t, comments_per_issue, rng) for i, t in enumerate(times)]
    base = 2_000_000_000 + _id_base("issue", owner, repo)
    issues = [
        _github_item(
            owner,
            repo,
            plan,
            base + plan.number,
            plan.number - 1 in prs,
            users,
            labels,
            rng,
            _nul_body() if plan.number - 1 == nul else None,
        )
        for plan in plans
    ]
    return issues, _github_comments(owner, repo, plans, prs, users, rng)


def _nul_index(total: int, prs: set[int], owner: str, repo: str, seed: int) -> int | None:
    """Which issue carries the NUL body; its own rng, so the flag changes nothing else."""
    candidates = [i for i in range(total) if i not in prs]
    if not candidates:
        return None
    return _Rng(f"nul:{owner}/{repo}:{seed}").choice(candidates)


def _github_item(
    owner: str,
    repo: str,
    plan: _Plan,
    item_id: int,
    is_pr: bool,
    users: list[dict],
    labels: dict[str, dict],
    rng: _Rng,
    body: str | None,
) -> dict:
    api, web = f"https://api.github.com/repos/{owner}/{repo}", f"https://github.com/{owner}/{repo}"
    n = plan.number
    closed = rng.random() < (0.8 if is_pr else 0.6)
    names = (
        []
        if is_pr and rng.random() < 0.5
        else rng.choice(
            (["bug"], ["bug"], ["bug", "performance"], ["question"], ["enhancement"], ["stale"], [])
        )
    )
    item = {
        "url": f"{api}/issues/{n}",
        "repository_url": api,
        "labels_url": f"{api}/issues/{n}/labels{{/name}}",
        "comments_url": f"{api}/issues/{n}/comments",
        "events_url": f"{api}/issues/{n}/events",
        "html_url": f"{web}/{'pull' if is_pr else 'issues'}/{n}",
        "id": item_id,
        "node_id": _node_id("PR_kwDO" if is_pr else "I_kwDO", item_id),
        "number": n,
        "title": _pr_title(rng) if is_pr else _issue_title(rng),
        "user": rng.choice(users),
        "labels": [labels[name] for name in names],
        "state": "closed" if closed else "open",
        "locked": False,
        "assignee": None,
        "assignees": [],
        "milestone": None,
        "comments": len(plan.comment_times),
        "created_at": _gh_time(plan.created),
        "updated_at": _gh_time(plan.updated),
        "closed_at": _gh_time(plan.updated) if closed else None,
        "author_association": rng.choice(("NONE", "NONE", "CONTRIBUTOR", "MEMBER")),
        "type": None,
        "active_lock_reason": None,
        "body": body if body is not None else (_pr_body(rng) if is_pr else _issue_body(rng)),
        "reactions": _reactions(f"{api}/issues/{n}/reactions", rng),
        "timeline_url": f"{api}/issues/{n}/timeline",
        "performed_via_github_app": None,
        "state_reason": _state_reason(rng) if closed and not is_pr else None,
    }
    if is_pr:
        item["draft"] = False
        merged = _gh_time(plan.updated) if closed and rng.random() < 0.85 else None
        item["pull_request"] = {
            "url": f"{api}/pulls/{n}",
            "html_url": f"{web}/pull/{n}",
            "diff_url": f"{web}/pull/{n}.diff",
            "patch_url": f"{web}/pull/{n}.patch",
            "merged_at": merged,
        }
    return item


def _state_reason(rng: _Rng) -> str:
    return "completed" if rng.random() < 0.8 else "not_planned"


def _pr_body(rng: _Rng) -> str | None:
    if rng.random() < 0.1:
        return None
    return f"{rng.choice(_DETAILS)}\n\nTested {rng.choice(_CONTEXTS)} on {rng.choice(_ENVS)}.\n"


def _github_comments(
    owner: str, repo: str, plans: list[_Plan], prs: set[int], users: list[dict], rng: _Rng
) -> list[dict]:
    """Comments of every item; ids increase with creation time, as GitHub's do."""
    api, web = f"https://api.github.com/repos/{owner}/{repo}", f"https://github.com/{owner}/{repo}"
    timeline = sorted((c, u, plan.number) for plan in plans for c, u in plan.comment_times)
    base = 3_000_000_000 + _id_base("comment", owner, repo)
    comments = []
    for offset, (created, updated, n) in enumerate(timeline, start=1):
        cid, kind = base + offset, "pull" if n - 1 in prs else "issues"
        comments.append(
            {
                "url": f"{api}/issues/comments/{cid}",
                "html_url": f"{web}/{kind}/{n}#issuecomment-{cid}",
                "issue_url": f"{api}/issues/{n}",
                "id": cid,
                "node_id": _node_id("IC_kwDO", cid),
                "user": rng.choice(users),
                "created_at": _gh_time(created),
                "updated_at": _gh_time(updated),
                "author_association": rng.choice(("NONE", "CONTRIBUTOR", "MEMBER")),
                "body": _reply(rng, len(plans)),
                "reactions": _reactions(f"{api}/issues/comments/{cid}/reactions", rng),
                "performed_via_github_app": None,
            }
        )
    return comments


# -- Gitee

_B36 = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ"


def _gitee_numbers(n: int, rng: _Rng) -> list[str]:
    """Unique "I" + 5 upper-case base-36 ids (like IBDZ87), increasing with creation time."""
    values = sorted(rng.sample(range(36**4, 36**5), n))
    out = []
    for value in values:
        digits = ""
        for _ in range(5):
            value, rest = divmod(value, 36)
            digits = _B36[rest] + digits
        out.append("I" + digits)
    return out


def _gitee_user(login: str) -> dict:
    uid = 8_000_000 + zlib.crc32(login.encode()) % 1_000_000
    return {
        "id": uid,
        "login": login,
        "name": login.split("_")[0].split("-")[0],
        "avatar_url": "https://gitee.com/assets/no_portrait.png",
        "url": f"https://gitee.com/api/v5/users/{login}",
        "html_url": f"https://gitee.com/{login}",
        "remark": "",
        "type": "User",
    }


def _gitee_context(owner: str, repo: str) -> dict:
    """Objects shared by every issue of a repo (labels, the trimmed repository object)."""
    rid = 28_000_000 + _id_base("repo", owner, repo) // 1_000_000
    api = f"https://gitee.com/api/v5/repos/{owner}/{repo}"
    stamp = "2023-06-01T10:00:00+08:00"
    labels = {
        name: {
            "id": 75_000_000 + rid % 100_000 * 10 + i,
            "color": color.upper(),
            "name": name,
            "repository_id": rid,
            "url": f"{api}/labels/{name}",
            "created_at": stamp,
            "updated_at": stamp,
        }
        for i, (name, color, _, _) in enumerate(_GH_LABELS)
    }
    repository = {
        "id": rid,
        "full_name": f"{owner}/{repo}",
        "human_name": f"{owner}/{repo}",
        "url": api,
        "path": repo,
        "name": repo,
        "namespace": {
            "id": 5_000_000 + rid % 100_000,
            "type": "group",
            "name": owner,
            "path": owner,
            "html_url": f"https://gitee.com/{owner}",
        },
        "html_url": f"https://gitee.com/{owner}/{repo}.git",
    }
    return {
        "labels": labels,
        "repository": repository,
        "api": api,
        "web": f"https://gitee.com/{owner}/{repo}",
    }


def make_gitee_issues(
    owner: str,
    repo: str,
    n_issues: int,
    comments_per_issue: int = 0,
    n_pr_comments: int = 0,
    start="2023-01-01",
    end="2025-04-30",
    seed: int = 0,
    *,
    nul_in_body: bool = False,
) -> tuple[list, list]:
    """Deterministic Gitee issues (string numbers, +08:00 stamps) and comments.

    A bare-date window bound means that whole day in +08:00. `n_pr_comments` PR comments
    (target.issue null) are mixed into the comment list, as the repo-wide endpoint returns them.
    """
    rng = _Rng(f"gitee:{owner}/{repo}:{seed}")
    times = _spread(n_issues, _bound(start, CST, end=False), _bound(end, CST, end=True), rng)
    numbers = _gitee_numbers(n_issues, rng)
    nul = _nul_index(n_issues, set(), owner, repo, seed) if nul_in_body else None
    users = [_gitee_user(login.replace("-", "_")) for login in _logins(rng, 60)]
    ctx = _gitee_context(owner, repo)
    plans = [_plan(numbers[i], t, comments_per_issue, rng) for i, t in enumerate(times)]
    base = 23_000_000 + _id_base("issue", owner, repo)
    issues = [
        _gitee_item(ctx, plan, base + i, users, rng, _nul_body() if i == nul else None)
        for i, plan in enumerate(plans)
    ]
    low, high = times[0] if times else _bound(start, CST, end=False), _bound(end, CST, end=True)
    return issues, _gitee_comments(
        owner, repo, issues, plans, n_pr_comments, (low, high), users, rng
    )


def _gitee_item(
    ctx: dict, plan: _Plan, item_id: int, users: list[dict], rng: _Rng, body: str | None
) -> dict:
    n, api = plan.number, ctx["api"]
    state = rng.choices(_GITEE_STATES, weights=(25, 10, 55, 10))[0]
    done = state in ("closed", "rejected")
    kind = rng.choice(("缺陷", "缺陷", "任务", "需求"))
    names = rng.choice((["bug"], ["bug"], ["question"], ["enhancement"], []))
    return {
        "id": item_id,
        "url": f"{api}/issues/{n}",
        "repository_url": api,
        "labels_url": f"{api}/issues/{n}/labels",
        "comments_url": f"{api}/issues/{n}/comments",
        "html_url": f"{ctx['web']}/issues/{n}",
        "parent_url": None,
        "number": n,
        "parent_id": 0,
        "depth": 0,
        "state": state,
        "title": _issue_title(rng),
        "body": body if body is not None else _issue_body(rng),
        "user": rng.choice(users),
        "labels": [ctx["labels"][name] for name in names],
        "assignee": None,
        "collaborators": [],
        "repository": ctx["repository"],
        "milestone": None,
        "created_at": _gitee_time(plan.created),
        "updated_at": _gitee_time(plan.updated),
        "plan_started_at": None,
        "deadline": None,
        "finished_at": _gitee_time(plan.updated) if done else None,
        "scheduled_time": 0,
        "comments": len(plan.comment_times),
        "priority": rng.randint(0, 4),
        "issue_type": kind,
        "program": None,
        "security_hole": False,
        "issue_state": _GITEE_ISSUE_STATE[state],
        "branch": None,
    }


def _gitee_comments(
    owner: str,
    repo: str,
    issues: list[dict],
    plans: list[_Plan],
    n_pr_comments: int,
    window: tuple[int, int],
    users: list[dict],
    rng: _Rng,
) -> list[dict]:
    """Issue comments plus PR comments (target.issue null); ids increase with time."""
    timeline = [(c, u, i) for i, plan in enumerate(plans) for c, u in plan.comment_times]
    for c in _spread(n_pr_comments, *window, rng) if n_pr_comments else []:
        timeline.append((c, c, -1 - rng.randint(0, 40)))  # negative: PR number -index
    timeline.sort(key=lambda row: (row[0], row[2]))
    base = 35_000_000 + _id_base("comment", owner, repo)
    comments = []
    for offset, (created, updated, who) in enumerate(timeline, start=1):
        if who >= 0:
            issue = issues[who]
            target = {
                "issue": {"id": issue["id"], "title": issue["title"], "number": issue["number"]},
                "pull_request": None,
            }
        else:
            target = {
                "issue": None,
                "pull_request": {"id": 9_000_000 - who, "number": -who, "title": _pr_title(rng)},
            }
        comments.append(
            {
                "id": base + offset,
                "body": _reply(rng, max(1, len(issues))),
                "user": rng.choice(users),
                "source": None,
                "target": target,
                "created_at": _gitee_time(created),
                "updated_at": _gitee_time(updated),
            }
        )
    return comments
