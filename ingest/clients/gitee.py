"""Gitee API v5: numbered pages with `total_page` / `total_count` headers (no `link`), string
issue numbers such as `IBDZ87`, `+08:00` timestamps, repository-wide comments keyed by
`target.issue.number`. Gitee's rate limits are undocumented: 403/429 mentioning a limit wait."""

from __future__ import annotations

from datetime import datetime
from urllib.parse import parse_qs, urlencode, urlsplit, urlunsplit

from concord.input_checks import ascii_digits
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

CLOSED_STATES = {"closed", "rejected"}


class GiteeClient(ForgeClient):
    host = "gitee"

    @staticmethod
    def parse_issue(item: dict) -> IssueRecord:
        return issue_record(item)

    @staticmethod
    def parse_comment(item: dict) -> CommentRecord:
        return comment_record(item)

    def issues_url(self, owner: str, repo: str, updated_since: datetime | None = None) -> str:
        """The listing's first page (`updated_since` is GitHub GraphQL's; unused here)."""
        query = urlencode(
            {
                "state": "all",
                "sort": "created",
                "direction": "desc",
                "page": 1,
                "per_page": PER_PAGE,
            }
        )
        return f"{self.repo_url(owner, repo)}/issues?{query}"

    def comments_url(self, owner: str, repo: str, since: datetime) -> str:
        query = urlencode(
            {
                "sort": "updated",
                "direction": "asc",
                "page": 1,
                "per_page": PER_PAGE,
                "since": since.isoformat(),
            }
        )
        return f"{self.repo_url(owner, repo)}/issues/comments?{query}"

    def issue_comments(self, owner: str, repo: str, number: str) -> list[CommentRecord]:
        query = urlencode({"page": 1, "per_page": PER_PAGE})
        url: str | None = f"{self.repo_url(owner, repo)}/issues/{segment(number)}/comments?{query}"
        comments: list[CommentRecord] = []
        while url:
            try:
                page = self.comments_page(url)
            except Moved as moved:  # a transferred issue: its comments moved with it
                page = self.comments_page(self.move_target(moved))
            comments.extend(
                CommentRecord(**{**c.__dict__, "issue_number": c.issue_number or number})
                for c in page.items
            )
            url = page.next_url
        return comments

    @staticmethod
    def page_back(url: str, pages: int) -> str:
        return page_back(url, pages)

    @staticmethod
    def page_follows(last: str, page: Page) -> bool:
        """Pages of issues overlap (see _overlapping_next): the next holds the last of the page
        before, unless more issues went away before it than they overlap by."""
        return any(record.number == last for record in page.items)

    def _page(self, url: str, etag: str | None, parse, kind: str) -> Page:
        response = self.get(url, etag=etag)
        rate = self.rate(response)
        if response.status_code == 304:
            return Page(url=url, not_modified=True, etag=etag, rate=rate)
        items = page_items(response, url, parse, kind)
        total_pages = _int_header(response, "total_page")
        total = _int_header(response, "total_count")
        next_url = (
            _overlapping_next(url, len(items), total)
            if kind == "issue"
            else _next_page_url(url, len(items), total_pages)
        )
        return Page(
            url=url,
            items=items,
            next_url=next_url,
            etag=response.headers.get("etag"),
            rate=rate,
            total=total,
            host_date=http_date(response.headers.get("date")),
        )


def page_back(url: str, pages: int) -> str:
    """The same numbered listing `pages` pages earlier, never before page 1."""
    parts = urlsplit(url)
    query = {k: v[-1] for k, v in parse_qs(parts.query).items()}
    query["page"] = str(max(1, int(query.get("page", "1")) - pages))
    return urlunsplit(parts._replace(query=urlencode(query)))


def _int_header(response, name: str) -> int | None:
    value = response.headers.get(name)
    return int(value) if value and ascii_digits(value) else None


def _overlapping_next(url: str, count: int, total: int | None) -> str | None:
    """The next page of issues, overlapping this one by a few: Gitee numbers pages, so an issue
    deleted before them moves every later one up a place, and one that comes in further down
    keeps `total_count` as it was. Asking for the next page from a little before this one ended
    (a page size of 90 to 100 whose multiple falls there) finds the issue that moved up; when
    more went away than the pages overlap by, the last one read is not on the next page and the
    harvest reads the page before again (harvest._moved_up)."""
    parts = urlsplit(url)
    query = {k: v[-1] for k, v in parse_qs(parts.query).items()}
    per_page = int(query.get("per_page", "20"))
    end = (int(query.get("page", "1")) - 1) * per_page + count  # offset after this page
    if count == 0 or count < per_page or (total is not None and end >= total):
        return None
    # at least two back: one issue gone before leaves the last one read on the next page
    start, size = max(((end - 2) // size * size, size) for size in range(90, PER_PAGE + 1))
    query["page"], query["per_page"] = str(start // size + 1), str(size)
    return urlunsplit(parts._replace(query=urlencode(query)))


def _next_page_url(url: str, count: int, total_pages: int | None) -> str | None:
    """Stop at `total_page`, on an empty or short page: whichever the host gives first."""
    parts = urlsplit(url)
    query = {k: v[-1] for k, v in parse_qs(parts.query).items()}
    page = int(query.get("page", "1"))
    per_page = int(query.get("per_page", "20"))
    if count == 0 or count < per_page or (total_pages is not None and page >= total_pages):
        return None
    query["page"] = str(page + 1)
    return urlunsplit(parts._replace(query=urlencode(query)))


def issue_record(item: dict) -> IssueRecord:
    user = item.get("user") or {}
    state = item.get("state") or ""
    return IssueRecord(
        number=issue_number(item["number"]),
        host_id=item.get("id") if isinstance(item.get("id"), int) else None,
        url=clean_text(item.get("html_url")),
        title=clean_text(item.get("title")),
        body=clean_text(item.get("body")),
        author=clean_text(user.get("login")),
        state="closed" if state in CLOSED_STATES else "open",
        labels=[
            clean_text(label.get("name"))
            for label in item.get("labels") or []
            if isinstance(label, dict)
        ],
        created_at=parse_required_time(item["created_at"]),
        updated_at=parse_time(item.get("updated_at")),
        closed_at=parse_time(item.get("finished_at")),
        comment_count=whole_number(item.get("comments") or 0),
        is_pull_request=False,  # Gitee lists pull requests elsewhere
    )


def comment_record(item: dict) -> CommentRecord:
    target = item.get("target")
    issue = target.get("issue") if isinstance(target, dict) else None
    if not isinstance(issue, dict):
        issue = None
    user = item.get("user") or {}
    return CommentRecord(
        comment_id=whole_number(item["id"]),
        issue_number=issue_number(issue["number"]) if issue and issue.get("number") else None,
        author=clean_text(user.get("login")),
        body=clean_text(item.get("body")),
        created_at=parse_time(item.get("created_at")),
        updated_at=parse_time(item.get("updated_at")),
    )
