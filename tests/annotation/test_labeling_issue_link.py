"""'open the original' leads to the issue's own tracker and to nothing else: a URL a forge or an
import gave (another host, a `"` that would end the attribute) never reaches the labeling page's
link, neither as the server renders the first item nor in the JSON the page's script renders the
next ones from. Stored URLs are issue addresses on the issue's own host (tests/browser/
test_labeling_page.py checks the script's rendering in chromium)."""

from __future__ import annotations

import importlib
from datetime import date

import pytest
from django.apps import apps
from rest_framework.test import APIClient

from annotation.models import Item, Stage
from ingest.harvest import harvest_advance, harvest_start
from ingest.issue_refs import IssueRef, issue_web_url
from ingest.models import Issue, RunStatus, Source
from tests.annotation.labeling_helpers import items
from tests.fakes.forge import make_github_issues

HOSTILE = [
    'https://github.com/NVIDIA/Megatron-LM/issues/1" onmouseover="window.__x=1',
    "https://evil.example/NVIDIA/Megatron-LM/issues/1",
    "https://gitee.com/NVIDIA/Megatron-LM/issues/1",  # another tracker than the issue's
    "http://github.com.evil.example/NVIDIA/Megatron-LM/issues/1",
    "https://github.com/NVIDIA/Megatron-LM/issues/1'><script>window.__x=1</script>",
    "javascript:alert(1)",
]
REF = IssueRef("github", "NVIDIA", "Megatron-LM", "1")


@pytest.mark.parametrize("given", HOSTILE)
def test_only_an_issue_address_on_the_issues_own_tracker_is_stored(given):
    assert issue_web_url(given, REF) == "https://github.com/NVIDIA/Megatron-LM/issues/1"


def test_a_transferred_issues_address_on_its_tracker_is_kept_in_canonical_form():
    moved = "http://www.github.com/NVIDIA/Megatron-Core/issues/7/"
    assert issue_web_url(moved, REF) == "https://github.com/NVIDIA/Megatron-Core/issues/7"


@pytest.mark.parametrize("stored", HOSTILE)
def test_the_labeling_page_links_to_the_tracker_whatever_the_stored_url(
    client, personas, project, stored
):
    """A row stored before the check: the page builds its link from the issue's names."""
    (item,) = items(project, 1)
    Issue.objects.filter(pk=item.issue_id).update(url=stored)
    issue = Issue.objects.get(pk=item.issue_id)
    client.force_login(personas["volunteer_a"])
    page = client.get(f"/projects/{project.slug}/label/").content.decode()
    own = f"https://github.com/{issue.owner}/{issue.repo}/issues/{issue.number}"
    assert f'<a id="issue-link" href="{own}" target="_blank"' in page
    for part in ("evil.example", "onmouseover", "window.__x", "javascript:", "gitee.com/NVIDIA"):
        assert part not in page


def test_the_json_the_page_renders_from_holds_the_trackers_address(forge, personas, project):
    """Issues as the harvest stores them from a forge that names other addresses: the next-item
    JSON carries the issue's own address, and the host, names and number the page's script
    builds its link from."""
    issues, _ = make_github_issues("NVIDIA", "Megatron-LM", 3, start="2024-01-01", end="2024-01-31")
    issues[0]["html_url"] = HOSTILE[0].replace("/1", f"/{issues[0]['number']}", 1)
    issues[1]["html_url"] = HOSTILE[1]
    issues[2]["html_url"] = HOSTILE[2]
    forge.add_github_repo("NVIDIA", "Megatron-LM", issues, [])
    source = Source.objects.create(
        host="github",
        owner="NVIDIA",
        repo="Megatron-LM",
        created_from=date(2024, 1, 1),
        created_until=date(2024, 1, 31),
    )
    run = harvest_advance(run_id=harvest_start(source=source, enqueue=False).pk)
    assert run.status == RunStatus.DONE, run.error
    for issue in Issue.objects.all():
        Item.objects.create(project=project, issue=issue, stage=Stage.OPEN)
    api = APIClient()
    api.force_authenticate(personas["volunteer_a"])
    seen = set()
    for _ in range(3):
        payload = api.post(f"/api/projects/{project.slug}/next-item/").json()["issue"]
        api.post(f"/api/projects/{project.slug}/items/{_item(project, payload)}/skip/", {})
        own = f"https://github.com/NVIDIA/Megatron-LM/issues/{payload['number']}"
        assert payload["url"] == own
        assert (payload["host"], payload["repository"]) == ("github", "NVIDIA/Megatron-LM")
        seen.add(payload["number"])
    assert seen == {str(i["number"]) for i in issues}


def _item(project, payload) -> int:
    return project.items.get(issue__number=payload["number"]).pk


def test_the_migration_sets_stray_stored_urls_to_the_trackers_address(db):
    good = Issue.objects.create(
        host="gitee",
        owner="ascend",
        repo="MindSpeed",
        number="IBDZ87",
        url="https://gitee.com/ascend/MindSpeed/issues/IBDZ87",
    )
    names = {"host": "github", "owner": "NVIDIA", "repo": "Megatron-LM"}
    stray = [
        Issue.objects.create(**names, number=str(n), url=url)
        for n, url in enumerate(HOSTILE, start=1)
    ]
    migration = importlib.import_module("ingest.migrations.0008_issue_urls_on_their_tracker")
    migration.urls_on_their_tracker(apps, None)
    good.refresh_from_db()
    assert good.url == "https://gitee.com/ascend/MindSpeed/issues/IBDZ87"
    for issue in stray:
        issue.refresh_from_db()
        assert issue.url == f"https://github.com/NVIDIA/Megatron-LM/issues/{issue.number}"
