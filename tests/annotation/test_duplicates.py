"""Near-duplicate issues (annotation.duplicates): what makes two reports duplicates and what does
not, the index built after items arrive, the lead's queue and side-by-side view, "not a duplicate"
kept across rebuilds, what volunteers see, the API and the command."""

from __future__ import annotations

import json

import pytest
from django.core.management import call_command
from django.db import transaction
from django.urls import reverse

from annotation.duplicates import similarity
from annotation.duplicates.index import duplicate_index_queue, duplicate_index_run
from annotation.duplicates.similarity import similar_pairs
from annotation.duplicates.text import Report
from annotation.gate import OPERATOR, Write
from annotation.models import DuplicateIndex, DuplicatePair, Item, JobStatus, NotDuplicate, Stage
from annotation.projects.services import project_items_add
from tests.annotation.lead_helpers import labeled_item, open_item, trio_fixture  # noqa: F401
from tests.bench.duplicate_cases import DUPLICATES, HARD_NEGATIVES, filler

TEMPLATE = """**Describe the bug**
{what}

**To Reproduce**
Steps to reproduce the behavior:
1. run the script

**Expected behavior**
A clear and concise description of what you expected to happen.

**Environment**
 - OS: Ubuntu 22.04
 - PyTorch version 2.2.0
 - CUDA version 12.3
"""

OOM = "CUDA out of memory at iteration 1 when sequence parallel is enabled with TP=4"
OOM_AGAIN = "With sequence parallel and TP=4 we hit CUDA out of memory at the first iteration"
HANG = "Checkpoint saving hangs forever with the distributed optimizer on 2 nodes"


def reports(*texts: tuple[str, str], tracker: str = "github/NVIDIA/Megatron-LM") -> list[Report]:
    return [Report(k, tracker, title, body) for k, (title, body) in enumerate(texts)]


def paired(found) -> set[tuple[int, int]]:
    return {(p.a, p.b) for p in found.pairs}


# ---------------------------------------------------------------- what is a duplicate


def test_a_reworded_report_in_the_same_template_is_a_duplicate():
    found = similar_pairs(
        reports(
            ("OOM with sequence parallel", TEMPLATE.format(what=OOM)),
            ("Sequence parallel runs out of memory", TEMPLATE.format(what=OOM_AGAIN)),
            ("Save hangs", TEMPLATE.format(what=HANG)),
        )
    )
    assert paired(found) == {(0, 1)}


def test_two_problems_in_the_same_template_are_not_duplicates():
    problems = [
        "Loss is nan after 20 steps in bf16",
        "Tokenizer drops the leading space when decoding",
        "Pipeline schedule deadlocks with virtual stages",
        "Checkpoint conversion fails with a KeyError on embeddings",
    ]
    found = similar_pairs(reports(*[(p, TEMPLATE.format(what=p)) for p in problems]))
    assert found.pairs == []


def test_template_lines_shared_by_most_of_a_trackers_issues_are_learned_and_left_out():
    texts = [(f"problem {n}", TEMPLATE.format(what=f"detail {n}")) for n in range(10)]
    learned = similar_pairs(reports(*texts)).boilerplate["github/NVIDIA/Megatron-LM"]
    assert "steps to reproduce the behavior" in learned.lines
    assert "pytorch version 2.2.0" in learned.lines


def test_shared_stack_frames_and_logs_do_not_make_duplicates():
    frames = "\n".join(
        f'  File "/usr/lib/python3.10/site-packages/torch/nn/module_{n}.py", line {n}, in call\n'
        f"    return self._call_impl(*args, **kwargs)"
        for n in range(30)
    )
    log = "\n".join(f"[INFO] 2024-03-11 10:21:{n:02d} iteration {n} loss 2.1" for n in range(30))
    found = similar_pairs(
        reports(
            ("Tokenizer drops spaces", f"Decoding drops the leading space\n{frames}\n{log}"),
            ("Save hangs", f"Saving the checkpoint never returns\n{frames}\n{log}"),
        )
    )
    assert found.pairs == []


def test_the_same_error_reported_in_chinese_and_english_is_a_duplicate():
    error = "RuntimeError: Out of Memory!!! Request memory size: 3221225472B"
    found = similar_pairs(
        [
            Report(
                0,
                "gitee/mindspore/mindformers",
                "显存不足, 训练时申请内存失败",
                f"训练报错\n{error}",
            ),
            Report(1, "github/mindspore-lab/mindnlp", "Out of Memory during training", error),
            Report(2, "github/mindspore-lab/mindnlp", "Tokenizer drops spaces", "decode fails"),
        ]
    )
    assert paired(found) == {(0, 1)}


def test_a_build_after_one_that_gave_the_dictionary_back_reads_chinese_as_it_did():
    """A build gives jieba's dictionary back once its reports are read (a worker's memory); the
    next loads it again and must segment, and so score, exactly as the first."""
    issues = [i for pair in DUPLICATES for i in pair if "gitee" in i.tracker] + filler(20)
    reports = [Report(k, i.tracker, i.title, i.body) for k, i in enumerate(issues)]
    first = similar_pairs(reports).pairs
    assert similar_pairs(reports).pairs == first
    assert first, "the Chinese cases pair: the comparison means something"


def test_a_term_repeated_past_what_a_count_holds_weighs_as_the_most_it_holds():
    """Counts are held in 2 bytes while reports are read: a term repeated more (hostile input)
    is capped, not an overflow that fails the build."""
    flood = " ".join(["overflow"] * (similarity.MOST_REPEATS + 10))
    found = similar_pairs(
        [Report(0, "t", "Flood", flood), Report(1, "t", "Flood", flood), Report(2, "t", "x", "y")]
    )
    assert paired(found) == {(0, 1)}


def test_the_evaluation_set_reaches_its_goal_at_the_default_threshold():
    """The bench's set (tests/bench/duplicate_cases.py): precision and recall >= 0.9."""
    issues = [i for pair in DUPLICATES + HARD_NEGATIVES for i in pair] + filler(150)
    labeled = 2 * (len(DUPLICATES) + len(HARD_NEGATIVES))
    found = similar_pairs([Report(k, i.tracker, i.title, i.body) for k, i in enumerate(issues)])
    predicted = {(p.a, p.b) for p in found.pairs if p.a < labeled}
    truth = {(2 * n, 2 * n + 1) for n in range(len(DUPLICATES))}
    hits = len(predicted & truth)
    assert hits / len(predicted) >= 0.9
    assert hits / len(truth) >= 0.9


@pytest.mark.parametrize("block", [1, 7])
def test_the_pairs_are_the_same_whatever_block_the_terms_are_counted_in(monkeypatch, block):
    """The terms' document frequencies are counted COUNT_BLOCK entries at a time (a 10x build's
    memory); blocks of 1 and 7 entries must find exactly the pairs, at the same cosines, as one
    block of them all."""
    issues = [i for pair in DUPLICATES + HARD_NEGATIVES for i in pair] + filler(60)
    reports = [Report(k, i.tracker, i.title, i.body) for k, i in enumerate(issues)]
    whole = similar_pairs(reports).pairs
    monkeypatch.setattr(similarity, "COUNT_BLOCK", block)
    assert similar_pairs(reports).pairs == whole
    assert len(whole) >= len(DUPLICATES) // 2  # enough pairs for the comparison to mean something


# ---------------------------------------------------------------- the index


def item_with(project, title: str, what: str, **issue) -> Item:
    return open_item(project, title=title, body=TEMPLATE.format(what=what), **issue)


def build(project) -> DuplicateIndex:
    job = duplicate_index_run(job_id=duplicate_index_queue(project=project).pk)
    assert job is not None
    assert job.status == "done", job.error
    return job


def pair_ids(project) -> set[tuple[int, int]]:
    return set(DuplicatePair.objects.filter(project=project).values_list("item_a", "item_b"))


def test_the_index_pairs_a_projects_near_duplicates(project):
    first = item_with(project, "OOM with sequence parallel", OOM)
    again = item_with(project, "Sequence parallel OOM", OOM_AGAIN)
    item_with(project, "Save hangs", HANG)
    job = build(project)
    assert pair_ids(project) == {(first.pk, again.pk)}
    assert (job.items_indexed, job.pairs_found) == (3, 1)


def test_items_added_are_indexed_after_commit_and_a_repeat_is_flagged_at_intake(
    project, personas, eager_tasks, django_capture_on_commit_callbacks
):
    first = item_with(project, "OOM with sequence parallel", OOM)
    item_with(project, "Save hangs", HANG)
    build(project)
    repeat = item_with(project, "Sequence parallel OOM", OOM_AGAIN)
    repeat.delete()  # re-added below through the one way items arrive
    with django_capture_on_commit_callbacks(execute=True):
        project_items_add(
            project=project,
            actor=personas["admin"],
            write=Write.ITEMS_IMPORT,
            issue_ids=[repeat.issue_id],
        )
    added = project.items.get(issue_id=repeat.issue_id)
    pair = DuplicatePair.objects.get(project=project)
    assert (pair.item_a_id, pair.item_b_id, pair.at_intake) == (first.pk, added.pk, True)


@pytest.mark.django_db(transaction=True)
def test_items_added_a_chunk_at_a_time_are_indexed_by_one_build(study_taxonomy, eager_tasks):
    """An item import adds a chunk at a time in one transaction. Without a broker (the embedded
    default) a queued build runs at once, after the commit: one queued per chunk built the index
    once per chunk."""
    from tests.conftest import make_personas, make_project

    project = make_project(study_taxonomy)
    admin = make_personas(project)["admin"]
    issues = [item_with(project, f"Report {n}", HANG) for n in range(3)]
    for item in issues:
        item.delete()  # re-added below, a chunk each, through the one way items arrive
    with transaction.atomic():
        for item in issues:
            project_items_add(
                project=project, actor=admin, write=Write.ITEMS_IMPORT, issue_ids=[item.issue_id]
            )
    (build,) = DuplicateIndex.objects.filter(project=project)
    assert (build.status, build.items_indexed) == (JobStatus.DONE, 3)


def test_one_queued_build_per_project_takes_every_arrival(project):
    assert duplicate_index_queue(project=project) == duplicate_index_queue(project=project)


def test_not_a_duplicate_is_kept_across_rebuilds(client, project, personas):
    first = item_with(project, "OOM with sequence parallel", OOM)
    again = item_with(project, "Sequence parallel OOM", OOM_AGAIN)
    build(project)
    client.force_login(personas["lead"])
    url = reverse("not-duplicate", args=[project.slug, again.pk, first.pk])
    assert client.post(url).status_code == 302
    build(project)
    assert pair_ids(project) == {(first.pk, again.pk)}  # the index still finds them
    assert NotDuplicate.objects.filter(item_a=first, item_b=again).exists()
    page = client.get(reverse("api-duplicates", args=[project.slug])).json()
    assert page["pairs"] == []
    assert page["counts"]["pairs"] == 0


# ---------------------------------------------------------------- the lead's views


@pytest.fixture
def inconsistent(project, trio):
    """Two near-duplicates that ended with different final labels, and an unrelated item."""
    a = labeled_item(project, trio, ["A.1"] * 3, title="OOM with sequence parallel")
    b = labeled_item(project, trio, ["B.1"] * 3, title="Sequence parallel OOM")
    for item, what in ((a, OOM), (b, OOM_AGAIN)):
        item.issue.body = TEMPLATE.format(what=what)
        item.issue.save()
    item_with(project, "Save hangs", HANG)
    build(project)
    return a, b


def test_the_lead_sees_pairs_whose_final_labels_differ(client, project, personas, inconsistent):
    a, b = inconsistent
    assert a.stage == b.stage == Stage.FINAL
    client.force_login(personas["lead"])
    page = client.get(reverse("duplicates", args=[project.slug]))
    assert page.status_code == 200
    rows = list(page.context["inconsistent"])
    assert [(p.item_a_id, p.item_b_id) for p in rows] == [(a.pk, b.pk)]
    api = client.get(reverse("api-duplicates", args=[project.slug]) + "?kind=inconsistent")
    pair = api.json()["pairs"][0]
    assert (pair["a"]["final_label"]["code"], pair["b"]["final_label"]["code"]) == ("A.1", "B.1")


def test_the_resolve_page_lists_the_items_duplicates_with_their_final_labels(
    client, project, personas, inconsistent
):
    a, b = inconsistent
    client.force_login(personas["lead"])
    page = client.get(reverse("item-resolve", args=[project.slug, a.pk]))
    assert [d.item.pk for d in page.context["duplicates"]] == [b.pk]
    assert 'id="item-duplicates"' in page.content.decode()


def test_side_by_side_marks_shared_words_and_escapes_the_texts(client, project, personas):
    hostile = '<script>alert("x")</script><img src=x onerror=alert(1)>'
    first = item_with(project, "OOM with sequence parallel", f"{OOM}\n{hostile}")
    again = item_with(project, "Sequence parallel OOM", OOM_AGAIN)
    build(project)
    client.force_login(personas["lead"])
    page = client.get(reverse("duplicate-compare", args=[project.slug, first.pk, again.pk]))
    html = page.content.decode()
    assert "<script>alert" not in html
    assert "<img src=x" not in html
    assert "&lt;img src=x onerror=alert(" in html  # shown as text
    assert '<mark class="dup-shared">memory</mark>' in html


@pytest.mark.parametrize(
    "name", ["duplicates", "duplicate-compare", "api-duplicates", "api-duplicate-index"]
)
def test_volunteers_may_not_open_the_lead_views(client, project, personas, inconsistent, name):
    a, b = inconsistent
    args = [project.slug, a.pk, b.pk] if name == "duplicate-compare" else [project.slug]
    client.force_login(personas["volunteer_a"])
    assert client.get(reverse(name, args=args)).status_code == 403


# ---------------------------------------------------------------- volunteers


def test_a_volunteer_sees_only_duplicates_already_revealed(client, project, personas, trio):
    final = labeled_item(project, trio, ["A.1"] * 3, title="OOM with sequence parallel")
    final.issue.body = TEMPLATE.format(what=OOM)
    final.issue.save()
    unfinished = item_with(project, "Sequence parallel OOM", OOM_AGAIN)
    current = item_with(project, "Sequence parallel OOM", OOM_AGAIN)
    build(project)
    assert len(pair_ids(project)) == 3
    client.force_login(personas["volunteer_a"])
    url = reverse("api-item-duplicates", args=[project.slug, current.pk])
    seen = [d["item"]["item"] for d in client.get(url).json()]
    assert seen == [final.pk]
    assert unfinished.pk not in seen
    client.force_login(personas["lead"])
    assert len(client.get(url).json()) == 2


# ---------------------------------------------------------------- the command


def test_the_command_lists_pairs_as_json(project, capsys):
    first = item_with(project, "OOM with sequence parallel", OOM)
    again = item_with(project, "Sequence parallel OOM", OOM_AGAIN)
    call_command("near_duplicates", project=project.slug, format="json")
    rows = json.loads(capsys.readouterr().out)
    assert [(r["item_a"], r["item_b"]) for r in rows] == [(first.pk, again.pk)]


def test_an_archived_projects_index_is_not_rebuilt_on_request(client, project, personas):
    from django.utils import timezone

    project.archived_at = timezone.now()
    project.save()
    client.force_login(personas["lead"])
    response = client.post(reverse("api-duplicate-index", args=[project.slug]))
    assert response.status_code == 409
    assert not DuplicateIndex.objects.filter(project=project).exists()
    assert OPERATOR  # the operator's builds are refused alike (gate policy, test_write_gate)


def test_reports_count_duplicates_per_repository(client, project, personas, inconsistent):
    client.force_login(personas["lead"])
    page = client.get(reverse("project-reports-distribution", args=[project.slug]))
    rows = [(r.repository, r.items, r.inconsistent) for r in page.context["duplicates"]]
    assert rows == [("NVIDIA/Megatron-LM", 2, 1)]
    assert 'id="near-duplicates-table"' in page.content.decode()


def test_the_project_page_says_when_an_added_item_repeats_one_already_there(
    client, project, personas
):
    item_with(project, "OOM with sequence parallel", OOM)
    build(project)
    item_with(project, "Sequence parallel OOM", OOM_AGAIN)  # arrives after the index was built
    build(project)
    client.force_login(personas["admin"])
    page = client.get(reverse("project-detail", args=[project.slug])).content.decode()
    assert 'id="intake-repeats"' in page
    assert "1 added item repeats one already here" in page
    client.force_login(personas["volunteer_a"])
    page = client.get(reverse("project-detail", args=[project.slug])).content.decode()
    assert 'id="duplicate-facts"' not in page
