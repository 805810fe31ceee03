"""HTTP clients for the GitHub REST API and Gitee API v5. No ORM here: they turn pages of JSON
into plain records and HTTP trouble into the exceptions below; the harvest service decides."""

from ingest.clients.base import (
    CommentRecord,
    CursorExpired,
    ForgeError,
    ForgeUnavailable,
    IssueRecord,
    Moved,
    Page,
    RateLimited,
    RepoNotFound,
    Unauthorized,
)
from ingest.clients.gitee import GiteeClient
from ingest.clients.github import GitHubClient

__all__ = [
    "CommentRecord",
    "CursorExpired",
    "ForgeError",
    "ForgeUnavailable",
    "GitHubClient",
    "GiteeClient",
    "IssueRecord",
    "Moved",
    "Page",
    "RateLimited",
    "RepoNotFound",
    "Unauthorized",
    "client_for",
]


def client_for(host: str, *, api_url: str, token: str = "", **options):
    """The client for a host ('github' or 'gitee')."""
    classes = {"github": GitHubClient, "gitee": GiteeClient}
    return classes[host](api_url=api_url, token=token, **options)
