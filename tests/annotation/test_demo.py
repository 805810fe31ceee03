"""The README's first command leaves a demo a person can try at once, and can be run again."""

import json

from django.core.management import call_command

from annotation.interviews.triangulation import project_triangulation
from annotation.models import Item, Membership, Project, Stage
from ingest.models import KeywordMatch
from taxonomy.interviews.models import Participant, Transcript
from taxonomy.models import Level


def test_setup_demo_twice_gives_one_demo_with_work_for_every_role(db, settings, tmp_path, capsys):
    settings.VAR_DIR = tmp_path
    call_command("setup_demo")
    first = capsys.readouterr().out
    call_command("setup_demo")
    again = capsys.readouterr().out

    project = Project.objects.get(slug="demo")
    demo = Item.objects.filter(project=project, issue__owner="concord-demo")
    stages = {stage: demo.filter(stage=stage).count() for stage in Stage.values}
    assert stages[Stage.CANDIDATE] == 4 + 1
    assert stages[Stage.OPEN] == 9 + 3
    disputed = demo.get(stage=Stage.DISPUTED)
    assert disputed.label_count == 3
    assert round(disputed.agreement, 3) == 0.667
    assert project.items.count() == 1114 + 14 + 4
    assert "18 new demo issues" in first
    assert "0 new demo issues" in again
    assert KeywordMatch.objects.filter(issue__items__project=project).exists()
    assert "19 participants (11 users, 8 developers)" in first
    assert "19 participants (11 users, 8 developers)" in again
    assert Participant.objects.filter(project=project).count() == 19
    (transcript,) = Transcript.objects.filter(project=project)  # to code in the browser
    assert transcript.text.count("\nQ: ") == 19 - 1  # a prompt before each quote
    assert {c.coder.username for c in transcript.coders.all()} == {
        "demo-volunteer-1",
        "demo-volunteer-2",
    }
    themes = project.taxonomy.nodes.filter(level=Level.THEME).values_list("code", flat=True)
    report = project_triangulation(project)
    assert sorted(r.code for r in report.themes) == sorted(themes)
    assert report.total_issues > 0
    expect_chinese_gitee_issues(demo)

    passwords = json.loads((tmp_path / "demo-credentials.json").read_text())
    accounts = {"demo-admin", "demo-lead", *(f"demo-volunteer-{n}" for n in (1, 2, 3))}
    assert set(passwords) == accounts
    assert Membership.objects.filter(project=project, user__username__in=accounts).count() == 5
    assert all(passwords[name] in first for name in passwords)
    assert passwords == json.loads((tmp_path / "demo-credentials.json").read_text())


def expect_chinese_gitee_issues(demo) -> None:
    """The walkthrough shows a Gitee tracker written in Chinese, like the study's MindSpore ones."""
    chinese = demo.filter(issue__host="gitee").select_related("issue")
    assert chinese.count() == 4
    for item in chinese:
        assert any("\u4e00" <= ch <= "\u9fff" for ch in item.issue.title), item.issue.title
        assert item.issue.url.startswith("https://gitee.com/concord-demo/llm-trainer-zh/issues/")
    oom = chinese.get(stage=Stage.CANDIDATE).issue
    # keywords match inside Chinese text too: "bf16 权重", "OOM" between full-width brackets
    assert [set(m.keywords) for m in oom.keyword_matches.all()] == [{"OOM", "bf16"}]
