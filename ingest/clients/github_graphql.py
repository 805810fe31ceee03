"""GitHub's GraphQL API, for runs with a token: the `issues` connection holds no pull requests and
nests each issue's comments, so a window costs about ceil(issues/100) requests, plus a page for
each further hundred comments of the few issues with more than 100.

The harvest's checkpoint is a URL, so a page of the connection is named by one on the API host:
`{api}/graphql?after=<endCursor>&since=<updatedAt>`; fetching it POSTs the query. There are no
ETags: a later run asks only for issues updated since the last finished run (`since`).
"""

from __future__ import annotations

import contextlib
from datetime import UTC, datetime
from urllib.parse import parse_qs, urlencode, urlsplit

from ingest.clients.base import (
    CommentRecord,
    CursorExpired,
    ForgeError,
    ForgeUnavailable,
    IssueRecord,
    OffHostUrl,
    Page,
    RateLimited,
    RateState,
    RepoNotFound,
    answer_json,
    clean_text,
    http_date,
    issue_number,
    parse_required_time,
    parse_time,
    readable,
    whole_number,
)
from ingest.clients.github import GitHubClient

PER_PAGE = 100
# Issues (and their first comments) asked for a page at a time: GitHub stops a query after about
# ten seconds, and a page of long issues can take longer at any hour, answering 502 or "Something
# went wrong ... timeout". Asking the same again fails again: a page that keeps failing is asked
# in smaller pages, from the same cursor (a cursor names an issue, not a position).
PAGE_SIZES = (PER_PAGE, 25, 5, 1)
# fullDatabaseId, not databaseId: a 32-bit Int, it cannot hold ids past 2^31 (comments are past)
_COMMENT_FIELDS = "fullDatabaseId body createdAt updatedAt author { login }"
_ISSUES_QUERY = f"""
query ConcordIssues(
  $owner: String!, $name: String!, $after: String, $since: DateTime, $first: Int!
) {{
  rateLimit {{ cost remaining resetAt }}
  repository(owner: $owner, name: $name) {{
    nameWithOwner
    issues(first: $first, after: $after, filterBy: {{since: $since}},
           orderBy: {{field: CREATED_AT, direction: DESC}}) {{
      pageInfo {{ hasNextPage endCursor }}
      nodes {{
        number fullDatabaseId url title body state createdAt updatedAt closedAt
        author {{ login }}
        labels(first: 100) {{ nodes {{ name }} }}
        comments(first: $first) {{
          totalCount
          pageInfo {{ hasNextPage endCursor }}
          nodes {{ {_COMMENT_FIELDS} }}
        }}
      }}
    }}
  }}
}}
"""
_COMMENTS_QUERY = f"""
query ConcordIssueComments($owner: String!, $name: String!, $number: Int!, $after: String) {{
  rateLimit {{ cost remaining resetAt }}
  repository(owner: $owner, name: $name) {{
    nameWithOwner
    issue(number: $number) {{
      comments(first: {PER_PAGE}, after: $after) {{
        pageInfo {{ hasNextPage endCursor }}
        nodes {{ {_COMMENT_FIELDS} }}
      }}
    }}
  }}
}}
"""


class GitHubGraphQLClient(GitHubClient):
    """Issues with their comments, a hundred a request; REST (the parent) for everything else."""

    # Its pages are cursors (named by an item, not a position): nothing shifts.
    @staticmethod
    def page_follows(last: str, page: Page) -> bool:
        return True

    @staticmethod
    def page_back(url: str, pages: int) -> str | None:
        return None

    @property
    def graphql_url(self) -> str:
        return f"{self.api_url}/graphql"

    def issues_url(self, owner: str, repo: str, updated_since: datetime | None = None) -> str:
        self.repo_url(owner, repo)  # the host's naming rules, as for REST
        query = {"owner": owner, "name": repo}
        if updated_since is not None:
            query["since"] = updated_since.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
        return f"{self.graphql_url}?{urlencode(query)}"

    def issues_page(self, url: str, *, etag: str | None = None) -> Page:
        if not self.on_api_host(url):
            raise OffHostUrl(
                f"refused to fetch {url}: it is not on the API host {self.api_url}, and the "
                "token is sent only there"
            )
        asked = {k: v[-1] for k, v in parse_qs(urlsplit(url).query).items()}
        if urlsplit(url).path != urlsplit(self.graphql_url).path or "owner" not in asked:
            # A checkpoint from a REST run (GITHUB_GRAPHQL or the token changed since)
            raise CursorExpired(f"{url} is a REST page; GraphQL starts its listing afresh")
        owner, name = asked["owner"], asked["name"]
        variables = {"owner": owner, "name": name, "after": asked.get("after")}
        variables["since"] = asked.get("since")
        data, rate, host_date, requests = self._issues_query(variables)
        repository = data.get("repository")
        if repository is None:
            raise RepoNotFound(f"not found: the repository {owner}/{name}")
        issues: list[IssueRecord] = []
        comments: list[CommentRecord] = []
        with readable("a page of issues", self.graphql_url):
            connection = repository["issues"]
            for node in connection["nodes"]:
                number = str(node["number"])
                issues.append(issue_record(node))
                notes = node["comments"]
                comments.extend(comment_record(c, number) for c in notes["nodes"])
                if notes["pageInfo"]["hasNextPage"]:
                    more, spent = self._more_comments(
                        owner, name, node["number"], notes["pageInfo"]
                    )
                    comments.extend(more)
                    requests += spent
            info = connection["pageInfo"]
            next_url = None
            if info["hasNextPage"]:
                next_url = f"{self.graphql_url}?{urlencode({**asked, 'after': info['endCursor']})}"
            current = _current_name(repository, owner, name)
        return Page(
            url=url,
            items=issues,
            next_url=next_url,
            rate=rate,
            comments=comments,
            comments_included=True,
            requests=requests,
            host_date=host_date,
            renamed_to=current,
        )

    def _issues_query(self, variables: dict) -> tuple[dict, RateState, datetime | None, int]:
        """The page's answer, asked in smaller pages while the host keeps failing on it (after
        the client's retries at each size); with how many sizes were asked."""
        *larger, smallest = PAGE_SIZES
        for tried, size in enumerate(larger, start=1):
            with contextlib.suppress(ForgeUnavailable):
                return (*self._query(_ISSUES_QUERY, {**variables, "first": size}), tried)
        return (*self._query(_ISSUES_QUERY, {**variables, "first": smallest}), len(PAGE_SIZES))

    def _more_comments(
        self, owner: str, name: str, number: int, info: dict
    ) -> tuple[list[CommentRecord], int]:
        """The comments of one issue after its first hundred; how many requests that took. An
        issue deleted meanwhile (NOT_FOUND, `issue: null`) has no more: what we have is all."""
        comments: list[CommentRecord] = []
        requests = 0
        while info["hasNextPage"]:
            variables = {"owner": owner, "name": name, "number": number}
            data, _, _ = self._query(_COMMENTS_QUERY, {**variables, "after": info["endCursor"]})
            requests += 1
            issue = (data.get("repository") or {}).get("issue")
            if issue is None:
                break
            comments.extend(comment_record(c, str(number)) for c in issue["comments"]["nodes"])
            info = issue["comments"]["pageInfo"]
        return comments, requests

    def _query(self, query: str, variables: dict) -> tuple[dict, RateState, datetime | None]:
        """The answer's data, the rate limit it reports, and the host's clock when it answered.

        Partial answers (errors beside null nodes) and timeouts are asked again by `send`; a
        limit is RateLimited, a repository that is not there RepoNotFound, a cursor the host no
        longer knows CursorExpired (the listing starts again), any other error a ForgeError."""
        body = {"query": query, "variables": variables}
        answer = self.send("POST", self.graphql_url, body=body, check=_partial_answer)
        payload = answer_json(answer, dict, "a GraphQL answer")
        with readable("a GraphQL answer", self.graphql_url):
            errors = [e for e in payload.get("errors") or [] if isinstance(e, dict)]
            data = payload.get("data") or {}
            rate = self._points(data.get("rateLimit")) or self.rate(answer)
        for error in errors:
            kind, message = str(error.get("type", "")), str(error.get("message", ""))
            if kind in RATE_LIMIT_TYPES or "rate limit" in message.lower():
                raise self._limited(answer, rate, kind, message)
            if kind == "NOT_FOUND" and error.get("path") in (None, ["repository"]):
                raise RepoNotFound(f"not found (GraphQL: {message})")
            if kind == "INVALID_CURSOR_ARGUMENTS":
                raise CursorExpired(f"GitHub no longer knows the saved cursor ({message})")
        if errors and not _only_gone_issues(errors) and not data.get("repository"):
            raise ForgeError(f"GitHub's GraphQL API refused the query: {errors[0].get('message')}")
        return data, rate, http_date(answer.headers.get("date"))

    def _limited(self, answer, rate: RateState, kind: str, message: str) -> RateLimited:
        """A primary limit (its reset named in the answer or its headers) waits until that reset,
        not past it; a secondary one (no reset: remaining points left) as `wait_seconds` says."""
        secondary = "secondary" in message.lower() or (rate.remaining or 0) > 0
        if not secondary and rate.reset_at is not None:
            primary = RateState(remaining=0, reset_at=rate.reset_at)
            wait = self.seconds_until(rate.reset_at)
            return RateLimited(f"rate limited (GraphQL {kind}: {message})", wait, primary)
        return RateLimited(
            f"rate limited (GraphQL {kind or 'error'}: {message})",
            self.wait_seconds(answer),
            RateState(remaining=rate.remaining if secondary else None),
        )

    def _points(self, limit: dict | None) -> RateState | None:
        """GraphQL counts points: what is left of them, and when they refill (on our clock)."""
        if not limit:
            return None
        reset = parse_time(limit.get("resetAt"))
        return RateState(remaining=limit.get("remaining"), reset_at=self.to_local(reset))


RATE_LIMIT_TYPES = ("RATE_LIMITED", "RATE_LIMIT")


def _only_gone_issues(errors: list[dict]) -> bool:
    """Every error says an issue is not there (deleted while its comments were being read)."""
    return all(e.get("type") == "NOT_FOUND" and e.get("path") != ["repository"] for e in errors)


def _partial_answer(response) -> str | None:
    """Why a 200 from GraphQL is worth asking again, in words: errors and no data (GitHub's
    timeouts), or errors beside data where an issue or a comment is null (a partial answer)."""
    if response.status_code != 200 or b'"errors"' not in response.content:
        return None
    try:
        payload = response.json()
    except ValueError:
        return None  # not JSON: answer_json says so
    if not isinstance(payload, dict) or not payload.get("errors"):
        return None
    errors = payload["errors"] if isinstance(payload["errors"], list) else []
    first = next((e for e in errors if isinstance(e, dict)), {})
    message = str(first.get("message", ""))[:200]
    if any(str(e.get("type", "")) in RATE_LIMIT_TYPES for e in errors if isinstance(e, dict)):
        return None  # a limit: waited out, not asked again at once
    if "rate limit" in message.lower():
        return None
    if payload.get("data") is None or _has_null_node(payload.get("data")):
        return f"GitHub's GraphQL API answered in part ({message or 'an error'})"
    return None


def _has_null_node(data: object) -> bool:
    """A null among a connection's `nodes`, anywhere in the answer."""
    if isinstance(data, dict):
        nodes = data.get("nodes")
        if isinstance(nodes, list) and any(n is None for n in nodes):
            return True
        return any(_has_null_node(v) for v in data.values() if isinstance(v, dict | list))
    if isinstance(data, list):
        return any(_has_null_node(v) for v in data)
    return False


def _current_name(repository: dict, owner: str, name: str) -> tuple[str, str] | None:
    """The repository's current owner/name when the host says it is not the one asked for."""
    current = repository.get("nameWithOwner")
    if not isinstance(current, str) or "/" not in current:
        return None
    new_owner, _, new_name = current.partition("/")
    if (new_owner.lower(), new_name.lower()) == (owner.lower(), name.lower()):
        return None
    return new_owner, new_name


def issue_record(node: dict) -> IssueRecord:
    host_id = node.get("fullDatabaseId")
    return IssueRecord(
        number=issue_number(node["number"]),
        host_id=None if host_id is None else big_int(host_id),
        url=clean_text(node.get("url")),
        title=clean_text(node.get("title")),
        body=clean_text(node.get("body")),
        author=author_login(node),
        state=clean_text(node.get("state")).lower(),
        labels=[
            clean_text(label["name"]) for label in (node.get("labels") or {}).get("nodes") or []
        ],
        created_at=parse_required_time(node["createdAt"]),
        updated_at=parse_time(node.get("updatedAt")),
        closed_at=parse_time(node.get("closedAt")),
        comment_count=whole_number((node.get("comments") or {}).get("totalCount") or 0),
        is_pull_request=False,  # the issues connection holds none
    )


def author_login(node: dict) -> str:
    """The author's login; a deleted account, null here, is `ghost`, as the REST API names it,
    so an issue is stored the same whichever API a run used."""
    author = node.get("author")
    return "ghost" if author is None else clean_text(author.get("login"))


def big_int(value: object) -> int:
    """GraphQL's BigInt (sent as a string of digits, or a number) as a whole number."""
    if isinstance(value, str) and value.isascii() and value.isdigit() and len(value) < 20:
        value = int(value)
    return whole_number(value)


def comment_record(node: dict, number: str) -> CommentRecord:
    return CommentRecord(
        comment_id=big_int(node["fullDatabaseId"]),
        issue_number=number,
        author=author_login(node),
        body=clean_text(node.get("body")),
        created_at=parse_time(node.get("createdAt")),
        updated_at=parse_time(node.get("updatedAt")),
    )
