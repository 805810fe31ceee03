"""GitHub's GraphQL API, for runs with a token: the `issues` connection holds no pull requests and
nests each issue's comments, so a window costs about ceil(issues/100) requests, plus a page for
each further hundred comments of the few issues with more than 100.

The harvest's checkpoint is a URL, so a page of the connection is named by one on the API host:
`{api}/graphql?after=<endCursor>&since=<updatedAt>`; fetching it POSTs the query. There are no
ETags: a later run asks only for issues updated since the last finished run (`since`).
"""

from __future__ import annotations

from datetime import UTC, datetime
from urllib.parse import parse_qs, urlencode, urlsplit

from ingest.clients.base import (
    CommentRecord,
    CursorExpired,
    ForgeError,
    IssueRecord,
    OffHostUrl,
    Page,
    RateLimited,
    RateState,
    RepoNotFound,
    answer_json,
    clean_text,
    issue_number,
    parse_required_time,
    parse_time,
    readable,
    whole_number,
)
from ingest.clients.github import GitHubClient

PER_PAGE = 100
_COMMENT_FIELDS = "databaseId body createdAt updatedAt author { login }"
_ISSUES_QUERY = f"""
query ConcordIssues($owner: String!, $name: String!, $after: String, $since: DateTime) {{
  rateLimit {{ cost remaining resetAt }}
  repository(owner: $owner, name: $name) {{
    issues(first: {PER_PAGE}, after: $after, filterBy: {{since: $since}},
           orderBy: {{field: CREATED_AT, direction: DESC}}) {{
      pageInfo {{ hasNextPage endCursor }}
      nodes {{
        number databaseId url title body state createdAt updatedAt closedAt
        author {{ login }}
        labels(first: 100) {{ nodes {{ name }} }}
        comments(first: {PER_PAGE}) {{
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
        data, rate = self._query(_ISSUES_QUERY, variables)
        repository = data.get("repository")
        if repository is None:
            raise RepoNotFound(f"not found: the repository {owner}/{name}")
        issues: list[IssueRecord] = []
        comments: list[CommentRecord] = []
        requests = 1
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
        return Page(
            url=url,
            items=issues,
            next_url=next_url,
            rate=rate,
            comments=comments,
            comments_included=True,
            requests=requests,
        )

    def _more_comments(
        self, owner: str, name: str, number: int, info: dict
    ) -> tuple[list[CommentRecord], int]:
        """The comments of one issue after its first hundred; how many requests that took."""
        comments: list[CommentRecord] = []
        requests = 0
        while info["hasNextPage"]:
            variables = {"owner": owner, "name": name, "number": number}
            data, _ = self._query(_COMMENTS_QUERY, {**variables, "after": info["endCursor"]})
            issue = (data.get("repository") or {}).get("issue")
            if issue is None:  # deleted meanwhile: what we have is what there is
                break
            requests += 1
            comments.extend(comment_record(c, str(number)) for c in issue["comments"]["nodes"])
            info = issue["comments"]["pageInfo"]
        return comments, requests

    def _query(self, query: str, variables: dict) -> tuple[dict, RateState]:
        body = {"query": query, "variables": variables}
        answer = self.send("POST", self.graphql_url, body=body)
        payload = answer_json(answer, dict, "a GraphQL answer")
        with readable("a GraphQL answer", self.graphql_url):
            errors = [e for e in payload.get("errors") or [] if isinstance(e, dict)]
            data = payload.get("data") or {}
            rate = _rate(data.get("rateLimit")) or RateState()
        for error in errors:
            kind, message = error.get("type", ""), error.get("message", "")
            if kind == "RATE_LIMITED":
                wait = (rate.reset_at - datetime.now(UTC)).total_seconds() if rate.reset_at else 0
                raise RateLimited(f"rate limited (GraphQL: {message})", max(wait, 0) + 1, rate)
            if kind == "NOT_FOUND":
                raise RepoNotFound(f"not found (GraphQL: {message})")
        if errors and not data.get("repository"):
            raise ForgeError(f"GitHub's GraphQL API refused the query: {errors[0].get('message')}")
        return data, rate


def _rate(limit: dict | None) -> RateState | None:
    """GraphQL counts points: what is left of them, and when they refill."""
    if not limit:
        return None
    return RateState(remaining=limit.get("remaining"), reset_at=parse_time(limit.get("resetAt")))


def issue_record(node: dict) -> IssueRecord:
    host_id = node.get("databaseId")
    return IssueRecord(
        number=issue_number(node["number"]),
        host_id=None if host_id is None else whole_number(host_id),
        url=clean_text(node.get("url")),
        title=clean_text(node.get("title")),
        body=clean_text(node.get("body")),
        author=clean_text((node.get("author") or {}).get("login")),
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


def comment_record(node: dict, number: str) -> CommentRecord:
    return CommentRecord(
        comment_id=whole_number(node["databaseId"]),
        issue_number=number,
        author=clean_text((node.get("author") or {}).get("login")),
        body=clean_text(node.get("body")),
        created_at=parse_time(node.get("createdAt")),
        updated_at=parse_time(node.get("updatedAt")),
    )
