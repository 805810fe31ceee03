"""Creating sources; the owner/repo check shared by the page form and the API."""

from __future__ import annotations

import re
from datetime import date
from typing import cast

from django.core.exceptions import ValidationError
from django.db import IntegrityError, models, transaction
from django.utils.translation import gettext as _

from concord.errors import ConcordError
from ingest.issue_refs import BadRepositoryName, repository_name_check
from ingest.models import HOST_TIME_ZONES, KeywordSet, Source, time_zone_check

REPOSITORY = re.compile(r"^(?P<owner>[A-Za-z0-9_.-]+)/(?P<repo>[A-Za-z0-9_.-]+)$")


def repository_parse(text: str) -> tuple[str, str]:
    """'owner/repo' -> (owner, repo); anything else raises ConcordError saying what is expected."""
    match = REPOSITORY.match(text.strip().removesuffix("/"))
    if match is None or match["repo"] in (".", ".."):
        raise ConcordError(
            _("%(text)s is not a repository: write it as owner/repo, e.g. NVIDIA/Megatron-LM.")
            % {"text": repr(text.strip())}
        )
    return match["owner"], match["repo"]


def repository_check(host: str, owner: str, repo: str) -> None:
    """ConcordError unless `host` allows these names and they fit the columns; shared by the page
    form, the API and source_create (the admin checks the same rules in Source.clean)."""
    try:
        repository_name_check(host, owner, repo)
    except BadRepositoryName as exc:
        raise ConcordError(exc.message) from exc
    for field, value in (("owner", owner), ("repo", repo)):
        limit = cast(models.CharField, Source._meta.get_field(field)).max_length or 0
        if len(value) > limit:
            raise ConcordError(
                _("%(value)s… is too long: Concord keeps up to %(limit)d characters.")
                % {"value": repr(value[:20]), "limit": limit}
            )


def source_create(
    *,
    host: str,
    owner: str,
    repo: str,
    created_from: date,
    created_until: date,
    token: str = "",
    keyword_set: KeywordSet | None = None,
    time_zone: str = "",
) -> Source:
    """A new source; the same tracker and window twice, or a window ending before it starts, is
    refused with a message (both are also database constraints), and so are names the host would
    not allow and time zones that do not exist. No time zone: the one the host shows dates in."""
    repository_check(host, owner, repo)
    time_zone = time_zone or HOST_TIME_ZONES.get(host, "UTC")
    try:
        time_zone_check(time_zone)
    except ValidationError as exc:
        raise ConcordError(f"Time zone: {exc.messages[0]}") from exc
    if created_from > created_until:
        raise ConcordError(
            _("The window starts on %(start)s but ends earlier, on %(end)s.")
            % {"start": created_from, "end": created_until}
        )
    try:
        with transaction.atomic():
            return Source.objects.create(
                host=host,
                owner=owner,
                repo=repo,
                created_from=created_from,
                created_until=created_until,
                token=token,
                keyword_set=keyword_set,
                time_zone=time_zone,
            )
    except IntegrityError as exc:
        raise ConcordError(
            _("%(owner)s/%(repo)s on %(host)s is already a source for %(start)s..%(end)s.")
            % {
                "owner": owner,
                "repo": repo,
                "host": host,
                "start": created_from,
                "end": created_until,
            }
        ) from exc
