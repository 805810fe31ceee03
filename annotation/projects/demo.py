"""The demo a person can click through at once: open and candidate items with readable issue text
(written for the demo, in concord/data/demo/issues.json, and in Chinese on a Gitee tracker in
issues-zh.json), and one disputed item for the lead. Safe to run again: what exists is left as it
is."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path

from django.contrib.auth import get_user_model
from django.db import transaction

from annotation.lifecycle import item_settle
from annotation.models import Annotation, Item, Project, Stage
from ingest.candidates import candidates_mark, keyword_set_save
from ingest.models import Comment, Issue

DEMO_KEYWORDS = ["NaN", "bf16", "FP8", "LoRA", "OOM", "NCCL", "all-reduce", "tensor parallelism"]
ISSUE_URLS = {
    "github": "https://github.com/{owner}/{repo}/issues/{number}",
    "gitee": "https://gitee.com/{owner}/{repo}/issues/{number}",
}
# Comment ids of the demo live far above any real host's, so they can never collide.
DEMO_COMMENT_ID_BASE = 9_000_000_000_000


@transaction.atomic
def demo_items_load(*, project: Project, path: Path) -> int:
    """Add the demo issues to `project` as items in the stage the file gives; returns how many
    items were new. A disputed issue gets its demo labels and goes through cross-check."""
    data = json.loads(path.read_text(encoding="utf-8"))
    created_at = datetime(2025, 3, 1, 9, 0, tzinfo=UTC)
    new_items = 0
    issues = []
    for n, entry in enumerate(data["issues"]):
        issue = _demo_issue(data, n, entry, created_at + timedelta(hours=7 * n))
        issues.append(issue)
        item, created = Item.objects.get_or_create(
            project=project,
            issue=issue,
            defaults={"stage": Stage.OPEN if entry["stage"] == "disputed" else entry["stage"]},
        )
        if created:
            new_items += 1
            if entry.get("demo_labels"):
                _demo_labels(item, entry["demo_labels"])
    keyword_set = keyword_set_save(name="demo", keywords=DEMO_KEYWORDS)
    candidates_mark(keyword_set=keyword_set, issues=issues)
    return new_items


def _demo_issue(data: dict, index: int, entry: dict, created_at: datetime) -> Issue:
    number = str(entry["number"])
    url = ISSUE_URLS[data["host"]].format(owner=data["owner"], repo=data["repo"], number=number)
    issue, _ = Issue.objects.update_or_create(
        host=data["host"],
        owner=data["owner"],
        repo=data["repo"],
        number=number,
        defaults={
            "url": url,
            "title": entry["title"],
            "body": entry["body"],
            "author": "demo-reporter",
            "state": "open",
            "labels": entry["labels"],
            "created_at": created_at,
            "updated_at": created_at,
            "comment_count": len(entry["comments"]),
            "fetched_at": created_at,
        },
    )
    for i, body in enumerate(entry["comments"]):
        Comment.objects.update_or_create(
            host=data["host"],
            comment_id=_demo_comment_id(data, index, entry, i),
            defaults={
                "issue": issue,
                "author": "demo-maintainer",
                "body": body,
                "created_at": created_at + timedelta(hours=i + 1),
            },
        )
    return issue


def _demo_comment_id(data: dict, index: int, entry: dict, i: int) -> int:
    """Stable per comment: the English file numbers its issues (101...), files with Gitee-style
    ids (DEMO01) give an offset and count by position."""
    if "comment_id_offset" in data:
        return DEMO_COMMENT_ID_BASE + data["comment_id_offset"] + index * 100 + i
    return DEMO_COMMENT_ID_BASE + entry["number"] * 100 + i


def _demo_labels(item: Item, labels: list[dict]) -> None:
    users = get_user_model().objects
    nodes = dict(item.project.taxonomy.nodes.values_list("code", "pk"))
    for label in labels:
        Annotation.objects.create(
            item=item,
            volunteer=users.get(username=label["volunteer"]),
            node_id=nodes[label["node"]],
            summary=label["summary"],
            seconds_spent=95,
        )
    item.label_count = len(labels)
    item.save(update_fields=["label_count"])
    if item.label_count >= item.project.overlap_k:
        item_settle(item=item)
