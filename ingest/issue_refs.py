"""Issue URLs <-> (host, owner, repo, number). No ORM: importers and harvesters share it."""

from __future__ import annotations

import re
from dataclasses import dataclass
from urllib.parse import urlsplit

HOSTS = {"github.com": "github", "gitee.com": "gitee"}
HOST_DOMAINS = {v: k for k, v in HOSTS.items()}
_NAME = r"[A-Za-z0-9_.-]+"
_PATH = re.compile(
    rf"^/(?P<owner>{_NAME})/(?P<repo>{_NAME})/(?P<kind>issues|pull|pulls)/(?P<number>[^/]+)/?$"
)
GITHUB_NUMBER = re.compile(r"^[1-9][0-9]*$")
GITEE_NUMBER = re.compile(r"^[A-Z0-9]+$")


class BadIssueUrl(ValueError):
    """Why a string is not an issue URL we can take; the message is shown to the user as is."""


@dataclass(frozen=True, order=True)
class IssueRef:
    host: str
    owner: str
    repo: str
    number: str

    @property
    def repository(self) -> str:
        return f"{self.owner}/{self.repo}"

    @property
    def url(self) -> str:
        return f"https://{HOST_DOMAINS[self.host]}/{self.owner}/{self.repo}/issues/{self.number}"


def parse_issue_url(text: str) -> IssueRef:
    url = text.strip()
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https"):
        raise BadIssueUrl(f"{url!r} is not an http(s) URL")
    host = HOSTS.get(parts.netloc.lower().removeprefix("www."))
    if host is None:
        raise BadIssueUrl(f"unknown host {parts.netloc!r}; Concord takes github.com and gitee.com")
    match = _PATH.match(parts.path)
    if match is None:
        raise BadIssueUrl(f"{url!r} is not an issue URL (expected /owner/repo/issues/NUMBER)")
    if match["kind"] != "issues":
        raise BadIssueUrl(f"{url!r} is a pull request, not an issue")
    number = match["number"]
    if host == "github" and not GITHUB_NUMBER.match(number):
        raise BadIssueUrl(f"GitHub issue numbers are positive integers, not {number!r}")
    if host == "gitee" and not GITEE_NUMBER.match(number):
        hint = " (Gitee ids are upper case)" if GITEE_NUMBER.match(number.upper()) else ""
        raise BadIssueUrl(f"{number!r} is not a Gitee issue id{hint}")
    return IssueRef(host, match["owner"], match["repo"], number)
