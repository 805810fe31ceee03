"""GitHub REST API: issues listed newest first, `link` rel="next" followed exactly as given (large
repositories switch to opaque `after=` cursors) but only on the API host, comments listed in bulk
per repository."""

from __future__ import annotations

from datetime import UTC, datetime
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

from ingest.clients.base import (
    PER_PAGE,
    CommentRecord,
    ForgeClient,
    IssueRecord,
    Moved,
    Page,
    clean_text,
    http_date,
    issue_number,
    page_items,
    parse_required_time,
    parse_time,
    segment,
    whole_number,
)

API_VERSION = "2022-11-28"


class GitHubClient(ForgeClient):
    host = "github"

    @staticmethod
    def page_follows(last: str, page: Page) -> bool:
        """GitHub numbers issues and pull requests in one sequence as they are created, and the
        REST listing holds both, newest first: the first number follows the last of the page
        before, unless issues went away between them (deleted before the run, for good, or
        during it: the next one moved up into the page before)."""
        return int(page.items[0].number) >= int(last) - 1

    @staticmethod
    def page_back(url: str, pages: int) -> str | None:
        """The numbered listing `pages` pages earlier (never before page 1); None for a cursor
        page (`after=`), which is named by an item, not a position, and does not shift."""
        parts = urlsplit(url)
        query = dict(parse_qsl(parts.query, keep_blank_values=True))
        if "after" in query or "before" in query:
            return None
        page = int(query["page"]) if query.get("page", "").isdigit() else 1
        query["page"] = str(max(1, page - pages))
        return urlunsplit(parts._replace(query=urlencode(query)))

    @staticmethod
    def parse_issue(item: dict) -> IssueRecord:
        return issue_record(item)

    @staticmethod
    def parse_comment(item: dict) -> CommentRecord:
        return comment_record(item)

    def headers(self) -> dict[str, str]:
        return {
            **super().headers(),
            "Accept": "application/vnd.github+json",
            "X-GitHub-Api-Version": API_VERSION,
        }

    def issues_url(self, owner: str, repo: str, updated_since: datetime | None = None) -> str:
        """The listing's first page. `updated_since` is for GraphQL: REST re-harvests send the
        pages' ETags instead (a `since` would not end the newest-first walk any sooner)."""
        query = urlencode(
            {"state": "all", "sort": "created", "direction": "desc", "per_page": PER_PAGE}
        )
        return f"{self.repo_url(owner, repo)}/issues?{query}"

    def comments_url(self, owner: str, repo: str, since: datetime) -> str:
        # Every comment on an issue created in the window was updated after the window began.
        query = urlencode(
            {
                "sort": "updated",
                "direction": "asc",
                "per_page": PER_PAGE,
                "since": since.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
            }
        )
        return f"{self.repo_url(owner, repo)}/issues/comments?{query}"

    def issue_comments(self, owner: str, repo: str, number: str) -> list[CommentRecord]:
        url: str | None = (
            f"{self.repo_url(owner, repo)}/issues/{segment(number)}/comments?per_page={PER_PAGE}"
        )
        comments: list[CommentRecord] = []
        while url:
            try:
                page = self.comments_page(url)
            except Moved as moved:  # a transferred issue: its comments moved with it
                page = self.comments_page(self.move_target(moved))
            comments.extend(page.items)
            url = page.next_url
        return comments

    def _page(self, url: str, etag: str | None, parse, kind: str) -> Page:
        response = self.get(url, etag=etag)
        rate = self.rate(response)
        if response.status_code == 304:
            return Page(url=url, not_modified=True, etag=etag, rate=rate)
        return Page(
            url=url,
            items=page_items(response, url, parse, kind),
            next_url=self.next_url(url, response.links.get("next", {}).get("url")),
            etag=response.headers.get("etag"),
            rate=rate,
            host_date=http_date(response.headers.get("date")),
        )


def issue_record(item: dict) -> IssueRecord:
    user = item.get("user") or {}
    host_id = item.get("id")
    return IssueRecord(
        number=issue_number(item["number"]),
        host_id=None if host_id is None else whole_number(host_id),
        url=clean_text(item.get("html_url")),
        title=clean_text(item.get("title")),
        body=clean_text(item.get("body")),
        author=clean_text(user.get("login")),
        state=clean_text(item.get("state")),
        labels=[
            clean_text(label.get("name"))
            for label in item.get("labels") or []
            if isinstance(label, dict)
        ],
        created_at=parse_required_time(item["created_at"]),
        updated_at=parse_time(item.get("updated_at")),
        closed_at=parse_time(item.get("closed_at")),
        comment_count=whole_number(item.get("comments") or 0),
        is_pull_request="pull_request" in item,
    )


def comment_record(item: dict) -> CommentRecord:
    issue_url = clean_text(item.get("issue_url"))
    user = item.get("user") or {}
    return CommentRecord(
        comment_id=whole_number(item["id"]),
        issue_number=issue_url.rsplit("/issues/", 1)[1] if "/issues/" in issue_url else None,
        author=clean_text(user.get("login")),
        body=clean_text(item.get("body")),
        created_at=parse_time(item.get("created_at")),
        updated_at=parse_time(item.get("updated_at")),
    )
