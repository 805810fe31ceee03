"""Issue URLs <-> (host, owner, repo, number). No ORM: importers and harvesters share it."""

from __future__ import annotations

import re
from dataclasses import dataclass
from urllib.parse import urlsplit

from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy, pgettext_lazy

HOSTS = {"github.com": "github", "gitee.com": "gitee"}
HOST_DOMAINS = {v: k for k, v in HOSTS.items()}
_NAME = r"[A-Za-z0-9_.-]+"
_PATH = re.compile(
    rf"^/(?P<owner>{_NAME})/(?P<repo>{_NAME})/(?P<kind>issues|pull|pulls)/(?P<number>[^/]+)/?$"
)
GITHUB_NUMBER = re.compile(r"^[1-9][0-9]*$")
GITEE_NUMBER = re.compile(r"^[A-Z0-9]+$")
# Issue's owner, repo and number columns: a longer part would fail the whole import (issue 12).
COLUMN_CHARS = {"owner": 100, "repository": 100, "number": 20}
PART_NAMES = {
    "owner": pgettext_lazy("issue URL part", "owner"),
    "repository": pgettext_lazy("issue URL part", "repository"),
    "number": pgettext_lazy("issue URL part", "number"),
}

# What each forge allows as account and repository names (matched whole, with fullmatch). They
# become path segments of API requests, so `..` or `/` must never get through.
GITHUB_OWNER = re.compile(r"[A-Za-z0-9](?:[A-Za-z0-9-]{0,38})")
GITHUB_REPO = re.compile(r"[A-Za-z0-9._-]{1,100}")
GITEE_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,190}")
_GITEE_RULE = gettext_lazy("letters, digits, '_', '.' or '-', starting with a letter or digit")
_NAME_RULES = {
    "github": (
        (
            GITHUB_OWNER,
            gettext_lazy("1 to 39 letters, digits or hyphens, starting with a letter or digit"),
        ),
        (
            GITHUB_REPO,
            gettext_lazy("1 to 100 letters, digits, '.', '_' or '-', and not '.' or '..'"),
        ),
    ),
    "gitee": (
        (GITEE_NAME, _GITEE_RULE),
        (GITEE_NAME, _GITEE_RULE),
    ),
}
_HOST_NAMES = {"github": "GitHub", "gitee": "Gitee"}
_WEB_URL = re.compile(r"https?://[^\s\x00-\x1f\x7f/?#@\\]+(?:[/?#][^\s\x00-\x1f\x7f\\]*)?", re.I)


class BadIssueUrl(ValueError):
    """Why a string is not an issue URL we can take; the message is shown to the user as is."""


class BadRepositoryName(ValueError):
    """An owner or repository name the forge would not allow; `field` is 'owner' or 'repo'."""

    def __init__(self, field: str, message: str) -> None:
        super().__init__(message)
        self.field = field
        self.message = message


def repository_name_check(host: str, owner: str, repo: str) -> None:
    """Raise BadRepositoryName unless `owner` and `repo` are names `host` allows (so they are safe
    as path segments: never '.', '..', empty, or holding '/')."""
    rules = _NAME_RULES.get(host)
    if rules is None:
        message = _("unknown host %(host)s; Concord takes github and gitee")
        raise BadRepositoryName("host", message % {"host": repr(host)})
    (owner_rule, owner_says), (repo_rule, repo_says) = rules
    forge = _HOST_NAMES[host]
    if not isinstance(owner, str) or not owner_rule.fullmatch(owner) or owner in (".", ".."):
        message = _("%(name)s is not an account name %(forge)s allows: %(rule)s.")
        place = {"name": repr(owner), "forge": forge, "rule": owner_says}
        raise BadRepositoryName("owner", message % place)
    if not isinstance(repo, str) or not repo_rule.fullmatch(repo) or repo in (".", ".."):
        message = _("%(name)s is not a repository name %(forge)s allows: %(rule)s.")
        place = {"name": repr(repo), "forge": forge, "rule": repo_says}
        raise BadRepositoryName("repo", message % place)


def web_url(value: object) -> str:
    """`value` if it is an absolute http(s) URL with a host (and nothing a browser would read
    differently: no whitespace, control characters or backslashes), else ''. Anything else from a
    forge, such as `javascript:` or `data:`, must never become a link."""
    if isinstance(value, str) and _WEB_URL.fullmatch(value):
        return value
    return ""


@dataclass(frozen=True)
class IssueRef:
    """An issue as a URL names it. Owner and repository names keep the spelling given (for
    display), but identify the issue whatever their case: GitHub's and Gitee's names are
    case-insensitive, so `NVIDIA/Megatron-LM#1` and `nvidia/megatron-lm#1` are one issue (equal,
    same hash). The number is compared exactly: Gitee ids are case-sensitive."""

    host: str
    owner: str
    repo: str
    number: str

    @property
    def key(self) -> tuple[str, str, str, str]:
        """What identifies the issue: host, owner and repository in lower case, number."""
        return (self.host, self.owner.lower(), self.repo.lower(), self.number)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, IssueRef):
            return NotImplemented
        return self.key == other.key

    def __hash__(self) -> int:
        return hash(self.key)

    def __lt__(self, other: IssueRef) -> bool:
        return self.key < other.key

    @property
    def repository(self) -> str:
        return f"{self.owner}/{self.repo}"

    @property
    def url(self) -> str:
        return f"https://{HOST_DOMAINS[self.host]}/{self.owner}/{self.repo}/issues/{self.number}"


def issue_web_url(given: object, ref: IssueRef) -> str:
    """The URL to store for an issue: the forge's own if it is an issue URL on the issue's own
    tracker (a transferred issue's may name another repository there), in its canonical form;
    else the one built from the ref. The forge's word is not trusted to be a link, nor to lead
    anywhere but its own tracker."""
    if isinstance(given, str) and web_url(given):
        try:
            named = parse_issue_url(given)
        except BadIssueUrl:
            return ref.url
        if named.host == ref.host:
            return named.url
    return ref.url


def parse_issue_url(text: str) -> IssueRef:
    url = text.strip()
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https"):
        raise BadIssueUrl(_("%(url)s is not an http(s) URL") % {"url": repr(url)})
    host = HOSTS.get(parts.netloc.lower().removeprefix("www."))
    if host is None:
        message = _("unknown host %(host)s; Concord takes github.com and gitee.com")
        raise BadIssueUrl(message % {"host": repr(parts.netloc)})
    match = _PATH.match(parts.path)
    if match is None:
        message = _("%(url)s is not an issue URL (expected /owner/repo/issues/NUMBER)")
        raise BadIssueUrl(message % {"url": repr(url)})
    if match["kind"] != "issues":
        raise BadIssueUrl(_("%(url)s is a pull request, not an issue") % {"url": repr(url)})
    try:
        repository_name_check(host, match["owner"], match["repo"])
    except BadRepositoryName as exc:
        raise BadIssueUrl(f"{url!r}: {exc.message}") from exc
    number = match["number"]
    if host == "github" and not GITHUB_NUMBER.match(number):
        message = _("GitHub issue numbers are positive integers, not %(number)s")
        raise BadIssueUrl(message % {"number": repr(number)})
    if host == "gitee" and not GITEE_NUMBER.match(number):
        if GITEE_NUMBER.match(number.upper()):
            message = _("%(number)s is not a Gitee issue id (Gitee ids are upper case)")
        else:
            message = _("%(number)s is not a Gitee issue id")
        raise BadIssueUrl(message % {"number": repr(number)})
    parts_given = (("owner", match["owner"]), ("repository", match["repo"]), ("number", number))
    for part, value in parts_given:
        if len(value) > COLUMN_CHARS[part]:
            message = _(
                "the %(part)s %(value)s… has %(length)s characters; Concord keeps at most %(limit)s"
            )
            raise BadIssueUrl(
                message
                % {
                    "part": PART_NAMES[part],
                    "value": repr(value[:20]),
                    "length": len(value),
                    "limit": COLUMN_CHARS[part],
                }
            )
    return IssueRef(host, match["owner"], match["repo"], number)
