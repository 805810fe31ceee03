"""Submitting and editing labels: idempotent, locked, versioned; the node rules; cross-check at k;
the highlighter never brings unsafe HTML back."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone

from annotation.highlight import highlight_keywords, highlight_text
from annotation.labeling.assignment import next_item
from annotation.labeling.services import annotation_submit, label_node
from annotation.models import Action, Annotation, AuditEvent, Method, Reservation, Stage
from annotation.rendering import markdown_to_html, title_to_html
from concord.errors import ConcordError, Conflict
from taxonomy.models import Node, Taxonomy
from tests.annotation.labeling_helpers import items, label, node


def test_submit_stores_one_label_counts_it_and_audits(project, personas):
    (item,) = items(project, 1)
    me = personas["volunteer_a"]
    assert next_item(project=project, volunteer=me) == item
    Reservation.objects.filter(item=item).update(created_at=timezone.now() - timedelta(seconds=42))
    annotation, created = label(item, me)
    assert created
    assert 42 <= annotation.seconds_spent < 60
    assert not annotation.is_pilot
    item.refresh_from_db()
    assert (item.label_count, item.stage) == (1, Stage.LABELING)
    assert not Reservation.objects.filter(item=item).exists()
    event = AuditEvent.objects.get(item=item, action=Action.LABEL)
    assert event.actor == me
    # the first label also moves the item from open to labeling, in the same audit row
    assert event.before == {"stage": Stage.OPEN}
    assert event.after == {"stage": Stage.LABELING, "node": "C.1", "summary": "loss is NaN"}


def test_double_submit_with_the_same_content_is_one_annotation(project, personas):
    (item,) = items(project, 1)
    me = personas["volunteer_a"]
    first, created = label(item, me, summary="loss is  NaN ")
    again, created_again = label(item, me, summary="loss is NaN")
    assert (created, created_again) == (True, False)
    assert first.pk == again.pk
    assert Annotation.objects.filter(item=item).count() == 1
    item.refresh_from_db()
    assert item.label_count == 1
    assert AuditEvent.objects.filter(item=item).count() == 1


def test_edit_needs_the_current_version_and_bumps_it(project, personas):
    (item,) = items(project, 1)
    me = personas["volunteer_a"]
    annotation, _ = label(item, me)
    edited, created = label(item, me, code="C.2", summary="OOM", version=annotation.version)
    assert not created
    assert (edited.node.code, edited.summary, edited.version) == ("C.2", "OOM", 2)
    event = AuditEvent.objects.get(item=item, action=Action.EDIT)
    assert event.before == {"node": "C.1", "summary": "loss is NaN"}
    assert event.after == {"node": "C.2", "summary": "OOM"}
    item.refresh_from_db()
    assert item.label_count == 1  # an edit is not another label


@pytest.mark.parametrize("version", [1, None])
def test_stale_or_missing_version_is_a_conflict_never_an_overwrite(project, personas, version):
    (item,) = items(project, 1)
    me = personas["volunteer_a"]
    annotation, _ = label(item, me)
    label(item, me, code="C.2", summary="from tab one", version=1)
    with pytest.raises(Conflict, match=r"changed in another tab or by a retry at \d\d:\d\d"):
        label(item, me, code="C.3", summary="from tab two", version=version)
    annotation.refresh_from_db()
    assert (annotation.node.code, annotation.summary, annotation.version) == (
        "C.2",
        "from tab one",
        2,
    )


def test_kth_label_unanimous_makes_the_item_final(project, personas):
    (item,) = items(project, 1)
    for who in ("volunteer_a", "volunteer_b", "lead"):
        label(item, personas[who], code="C.1")
    item.refresh_from_db()
    assert item.stage == Stage.FINAL
    assert item.resolution.method == Method.UNANIMOUS
    assert item.agreement == 1.0


def test_kth_label_disagreeing_makes_the_item_disputed_and_closes_it(project, personas):
    (item,) = items(project, 1)
    label(item, personas["volunteer_a"], code="C.1")
    label(item, personas["volunteer_b"], code="C.1")
    label(item, personas["lead"], code="C.2")
    item.refresh_from_db()
    assert item.stage == Stage.DISPUTED
    assert item.agreement == pytest.approx(2 / 3)
    with pytest.raises(Conflict, match="already has its 3 labels"):
        label(item, personas["admin"])
    with pytest.raises(Conflict, match="can no longer be changed"):
        label(item, personas["volunteer_a"], code="C.3", version=1)
    # the same label again is still a harmless repeat
    assert label(item, personas["volunteer_a"], code="C.1")[1] is False


def test_items_not_open_for_labeling_are_refused(project, personas):
    (item,) = items(project, 1, stage=Stage.CANDIDATE)
    with pytest.raises(Conflict, match="not open for labeling"):
        label(item, personas["volunteer_a"])


def test_nodes_must_be_current_in_the_taxonomy_at_the_projects_depth(project, personas):
    (item,) = items(project, 1)
    me = personas["volunteer_a"]
    with pytest.raises(ConcordError, match="is a type; this project labels at theme depth"):
        label(item, me, code="C")
    with pytest.raises(ConcordError, match="is a sub-theme"):
        label(item, me, code="C.1.i")
    with pytest.raises(ConcordError, match="is not a category"):
        label_node(project=project, code="Z.9")
    retired = node(project, "C.2")
    Node.objects.filter(pk=retired.pk).update(retired_at=timezone.now())
    with pytest.raises(ConcordError, match="was retired"):
        label(item, me, code="C.2")
    other = Taxonomy.objects.create(name="Other", version="1")
    foreign = Node.objects.create(taxonomy=other, level="theme", code="C.1", name="x",
                                  parent=Node.objects.create(taxonomy=other, level="type",
                                                             code="C", name="y"))  # fmt: skip
    with pytest.raises(ConcordError, match="another taxonomy"):
        annotation_submit(item=item, volunteer=me, node=foreign, summary="x")
    assert not Annotation.objects.exists()


def test_summary_longer_than_allowed_is_refused(project, personas):
    (item,) = items(project, 1)
    with pytest.raises(ConcordError, match="keep it to 500"):
        label(item, personas["volunteer_a"], summary="x" * 501)


# ---------------------------------------------------------------- keyword highlighting


def test_highlighting_marks_words_in_text_only_and_stays_safe():
    dirty = (
        "<script>alert(1)</script> Llama2 fails "
        '<a href="https://x.org/llama" title="llama">llama</a>'
        "\n\n```\nllama.cpp &lt;b&gt;\n```\n<img src=x onerror=alert(1)> yield"
    )
    html = highlight_keywords(markdown_to_html(dirty), ["llama", "yi"])
    assert "<script" not in html
    assert "onerror" not in html
    assert '<mark class="kw">Llama</mark>2' in html  # the keyword, with a version after it
    assert 'href="https://x.org/llama"' in html  # attributes untouched
    assert 'title="llama"' in html
    assert "</span> yield</p>" in html  # "yi" is not a word of "yield"
    assert "&amp;lt;b&amp;gt;" in html  # escaped text stays escaped
    assert '<code><mark class="kw">llama</mark>.cpp' in html


def test_title_highlighting_escapes_first():
    assert highlight_text("<b>GPT-4</b> OOM", ["gpt"]) == (
        '&lt;b&gt;<mark class="kw">GPT</mark>-4&lt;/b&gt; OOM'
    )


def test_my_progress_counts_what_i_can_still_label_not_finished_items(project, personas):
    from annotation.labeling.selectors import volunteer_progress
    from tests.annotation.labeling_helpers import items

    items(project, 5, stage=Stage.FINAL)  # done before I came: not mine to label
    first, _, _ = items(project, 3)
    me = personas["volunteer_a"]
    label(first, me, summary="x")
    progress = volunteer_progress(project=project, volunteer=me)
    assert (progress.mine, progress.mine_target, progress.waiting_to_label) == (1, 3, 2)
    project.quota_per_volunteer = 10
    assert volunteer_progress(project=project, volunteer=me).mine_target == 10


# ---------------------------------------------------------------- reading the issue


def test_images_become_links_naming_alt_text_and_host_never_fetched():
    html = markdown_to_html(
        '![loss curve "bf16"](https://user-images.githubusercontent.com/1/loss.png)\n\n'
        '<img src="javascript:alert(1)" alt="bad"> <img src="shot.png"> '
        '<img src="https://x.org/a.png" onerror="alert(1)">'
    )
    assert "<img" not in html
    assert (
        '<a class="image-link" href="https://user-images.githubusercontent.com/1/loss.png" '
        'target="_blank" rel="nofollow noopener noreferrer">'
        'loss curve "bf16" (user-images.githubusercontent.com)</a>'
    ) in html
    assert '<span class="image-link">bad</span>' in html  # no link for another scheme
    assert '<span class="image-link">image</span>' in html  # nor for a relative one
    assert "javascript" not in html
    assert "onerror" not in html
    assert ">image (x.org)</a>" in html


def test_issue_markdown_renders_as_github_shows_it():
    html = markdown_to_html(
        "Steps:\nrun it\n\n| op | ms |\n|:--|--:|\n| matmul | 12 |\n\n"
        "~~fixed~~ see https://github.com/pytorch/pytorch/issues/1\n\n"
        "<details><summary>Environment</summary>\n\ntorch 2.1\n</details>\n\n"
        "```python\nx = 1\n```\n\n- [ ] add a test"
    )
    assert "<p>Steps:<br>\nrun it</p>" in html  # a newline is a line break, as on GitHub
    assert '<th align="left">op</th>' in html
    assert '<td align="right">12</td>' in html
    assert "<del>fixed</del>" in html
    assert (  # a bare URL is a link, opened in a new tab and never followed for ranking
        '<a href="https://github.com/pytorch/pytorch/issues/1" target="_blank" '
        'rel="nofollow noopener noreferrer">'
    ) in html
    assert "<details><summary>Environment</summary>" in html  # issue templates fold their parts
    assert '<code class="language-python">x = 1' in html
    assert "<li>[ ] add a test</li>" in html  # the box stays readable; no form control


def test_inline_code_in_titles_renders_as_code_and_stays_escaped():
    assert title_to_html("OOM in `torch.compile` with <b> & `stray") == (
        "OOM in <code>torch.compile</code> with &lt;b&gt; &amp; `stray"
    )
    assert title_to_html("`<script>`") == "<code>&lt;script&gt;</code>"
