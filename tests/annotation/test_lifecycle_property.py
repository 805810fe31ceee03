"""Random sequences of everything that changes an item (live labels, edits, skips, direct submits,
study imports, item imports of an issue another project holds, screening votes and decisions,
the pilot, proposals' send-back, resolves and re-opens) and of the rule's inputs (k up and down,
the depth, archive and restore), checked after every step against the lifecycle's rule:

- each item's stage is what annotation.lifecycle.item_outcome derives from its stored rows at
  the project's k (an item at rest is a fixed point of the rule, with no unanimous resolution
  pending); a disputed or final item was complete under the k it was labeled with, so for it
  a k raised since counts as its label count (a disputed item has at least the lowest k ever
  in force);
- label_count equals the stored labels; an item still open or labeling has fewer than k, and no
  item more than the highest k ever in force;
- every stage change has its audit row: the item's audit rows that carry a stage chain from the
  stage it was created in to the stage it is in now, each row starting where the last ended;
- the depth never changes once a label exists; an archived project takes no label and no vote;
- an item import into this project leaves the other project's item, and the text of the issue
  it holds, as they were.
"""

from __future__ import annotations

import itertools
import json
from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize, invariant, precondition, rule

from annotation.labeling.assignment import item_skip, next_item_claim
from annotation.labeling.services import annotation_submit
from annotation.lifecycle import InvalidTransition, item_outcome
from annotation.models import (
    Annotation,
    AuditEvent,
    Item,
    JobStatus,
    Membership,
    ProposalStatus,
    Resolution,
    Role,
    ScreeningRule,
    ScreeningVote,
    Stage,
)
from annotation.projects.importers import study_labels_import
from annotation.projects.item_imports import item_import_run, item_import_start
from annotation.projects.settings import project_archive, project_update
from annotation.review.pilot import pilot_close, pilot_start
from annotation.review.proposals import (
    electorate,
    proposal_create,
    proposal_send_back,
    proposal_vote,
)
from annotation.review.services import item_reopen, item_resolve
from annotation.screening.services import screening_decide, screening_next_claim, screening_vote
from concord.errors import ConcordError
from taxonomy.models import Level
from tests.annotation.labeling_helpers import node
from tests.factories import IssueFactory, ProjectFactory, UserFactory

K = 2  # k at the start; rules change it within KS
KS = (1, 2, 3, 4)
CODES = ["C.1", "C.2", "A.1"]  # themes: the project's depth at the start
VOLUNTEERS = 3
ITEMS = 5
ANY_ITEM = st.integers(0, 63)  # an index into the items, those imported later included
projects = itertools.count()


class Lifecycle(RuleBasedStateMachine):
    def __init__(self, taxonomy, tmp_path: Path) -> None:
        super().__init__()
        self.taxonomy = taxonomy
        self.tmp_path = tmp_path

    @initialize(rule_=st.sampled_from(ScreeningRule.values))
    def setup(self, rule_: str) -> None:
        n = next(projects)
        self.project = ProjectFactory(
            taxonomy=self.taxonomy,
            slug=f"life-{n}",
            overlap_k=K,
            screening_votes=2,
            screening_rule=rule_,
        )
        self.volunteers = [UserFactory(username=f"life{n}-v{i}") for i in range(VOLUNTEERS)]
        self.lead = UserFactory(username=f"life{n}-lead")
        self.admin = UserFactory(username=f"life{n}-admin")
        for user in self.volunteers:
            Membership.objects.create(project=self.project, user=user, role=Role.VOLUNTEER)
        Membership.objects.create(project=self.project, user=self.lead, role=Role.LEAD)
        Membership.objects.create(project=self.project, user=self.admin, role=Role.ADMIN)
        self.items = [
            Item.objects.create(
                project=self.project,
                issue=IssueFactory(),
                stage=Stage.CANDIDATE if i < 2 else Stage.OPEN,
            )
            for i in range(ITEMS)
        ]
        self.created_stage = {item.pk: item.stage for item in self.items}
        self.imports = 0
        self.refused = 0
        self.k_low = self.k_high = K  # the lowest and highest k ever in force
        self.labeled_depth = self.project.label_depth  # the depth when the first label came
        # Another project holds an issue, labeled there, that an item import may name.
        self.other = ProjectFactory(taxonomy=self.taxonomy, slug=f"life-{n}-other", overlap_k=3)
        self.held = Item.objects.create(
            project=self.other, issue=IssueFactory(title="held"), stage=Stage.LABELING
        )
        Annotation.objects.create(
            item=self.held, volunteer=self.lead, node=self._node("C.1"), summary="theirs"
        )
        Item.objects.filter(pk=self.held.pk).update(label_count=1)

    def _item(self, i: int) -> Item:
        return Item.objects.select_related("project").get(pk=self.items[i % len(self.items)].pk)

    def _project(self):
        self.project.refresh_from_db()
        return self.project

    def _node(self, code: str):
        return node(self.project, code)

    def attempt(self, action) -> None:
        """Refusals (a ConcordError: not yours, stale, wrong stage ...) are part of the game; a
        move the lifecycle does not allow is a bug in the path that asked for it."""
        try:
            action()
        except InvalidTransition:
            raise
        except ConcordError:
            self.refused += 1

    # ------------------------------------------------------------ volunteers

    @rule(v=st.integers(0, VOLUNTEERS - 1), code=st.sampled_from(CODES))
    def claim_and_label(self, v: int, code: str) -> None:
        volunteer = self.volunteers[v]
        claim = next_item_claim(project=self.project, volunteer=volunteer)
        if claim.item is not None:
            self.attempt(
                lambda: annotation_submit(
                    item=claim.item, volunteer=volunteer, node=self._node(code), summary="s"
                )
            )

    @rule(codes=st.lists(st.sampled_from(CODES), min_size=VOLUNTEERS, max_size=VOLUNTEERS))
    def everyone_claims_and_labels(self, codes: list[str]) -> None:
        """A round of labeling, so that items reach k (and a k change finds labeled items)."""
        for v, code in enumerate(codes):
            self.claim_and_label(v, code)

    @rule(v=st.integers(0, VOLUNTEERS - 1), i=ANY_ITEM, code=st.sampled_from(CODES))
    def label_without_claiming(self, v: int, i: int, code: str) -> None:
        volunteer, item = self.volunteers[v], self._item(i)
        self.attempt(
            lambda: annotation_submit(
                item=item, volunteer=volunteer, node=self._node(code), summary="direct"
            )
        )

    @rule(v=st.integers(0, VOLUNTEERS - 1), i=ANY_ITEM, code=st.sampled_from(CODES))
    def edit(self, v: int, i: int, code: str) -> None:
        volunteer, item = self.volunteers[v], self._item(i)
        mine = Annotation.objects.filter(item=item, volunteer=volunteer).first()
        if mine is not None:
            self.attempt(
                lambda: annotation_submit(
                    item=item,
                    volunteer=volunteer,
                    node=self._node(code),
                    summary="edited",
                    version=mine.version,
                )
            )

    @rule(v=st.integers(0, VOLUNTEERS - 1))
    def claim_and_skip(self, v: int) -> None:
        volunteer = self.volunteers[v]
        claim = next_item_claim(project=self.project, volunteer=volunteer)
        if claim.item is not None:
            self.attempt(lambda: item_skip(item=claim.item, volunteer=volunteer, reason="skip"))

    @rule(v=st.integers(0, VOLUNTEERS - 1), relevant=st.booleans())
    def claim_and_screen(self, v: int, relevant: bool) -> None:
        volunteer = self.volunteers[v]
        claim = screening_next_claim(project=self._project(), volunteer=volunteer)
        if claim.item is not None:
            self.attempt(
                lambda: screening_vote(item=claim.item, volunteer=volunteer, relevant=relevant)
            )

    @rule(v=st.integers(0, VOLUNTEERS - 1), i=ANY_ITEM, relevant=st.booleans())
    def screen_without_claiming(self, v: int, i: int, relevant: bool) -> None:
        """A changed mind on one's own vote, or a vote on a candidate never handed out (refused:
        the project reserves items)."""
        volunteer, item = self.volunteers[v], self._item(i)
        voted = ScreeningVote.objects.filter(item=item, volunteer=volunteer).exists()
        before = ScreeningVote.objects.filter(item=item).count()
        self.attempt(lambda: screening_vote(item=item, volunteer=volunteer, relevant=relevant))
        if not voted:
            assert ScreeningVote.objects.filter(item=item).count() == before

    # ------------------------------------------------------------ imports

    @rule(
        i=ANY_ITEM,
        labels=st.lists(st.sampled_from(["", *CODES]), min_size=K, max_size=K),
        final=st.sampled_from(["", *CODES]),
    )
    def import_study_row(self, i: int, labels: list[str], final: str) -> None:
        """A study-format file with one row. Only for an item no one has labeled yet, so the
        file's columns (accounts of their own) cannot take it past k."""
        item = self._item(i)
        if item.label_count:
            return
        self.imports += 1
        path = self.tmp_path / f"{self.project.slug}-{self.imports}.csv"
        header = ",".join(["Issue_URL", *(f"Label{j + 1}" for j in range(K)), "Final_Label"])
        path.write_text(f"{header}\n{item.issue.url},{','.join(labels)},{final}\n")
        self.attempt(lambda: study_labels_import(project=self.project, path=path))

    @rule(title=st.sampled_from(["held", "changed by the file"]), new_issue=st.booleans())
    def import_items(self, title: str, new_issue: bool) -> None:
        """An item file naming the issue the other project holds (its text differing or not),
        and perhaps a new one: the issues become items here at the entry stage; the other
        project's item and the issue's text stay as they were."""
        records = [{"url": self.held.issue.url, "title": title}]
        if new_issue:
            fresh = IssueFactory.build()
            records.append({"url": fresh.url, "title": "new"})
        text = "\n".join(json.dumps(r) for r in records)
        before = set(self.project.items.values_list("pk", flat=True))
        self.imports += 1
        try:
            queued = item_import_start(
                project=self._project(),
                user=self.admin,
                name=f"items-{self.imports}.jsonl",
                blocks=[text.encode()],
                enqueue=False,
            )
        except ConcordError:
            assert self.project.is_archived
            self.refused += 1
            return
        job = item_import_run(job_id=queued.job.pk)
        assert job is not None
        assert job.status == JobStatus.DONE, job.error
        for item in self.project.items.exclude(pk__in=before).order_by("pk"):
            self.items.append(item)
            self.created_stage[item.pk] = item.stage
        held = Item.objects.select_related("issue").get(pk=self.held.pk)
        assert (held.stage, held.label_count, held.issue.title) == (Stage.LABELING, 1, "held")
        assert self.project.items.filter(issue=held.issue).exists()

    # ------------------------------------------------------------ the project's admin

    @rule(k=st.sampled_from(KS))
    def change_k(self, k: int) -> None:
        """k up or down; a lower k settles the items that now have their k labels (README)."""
        project = self._project()
        try:
            project_update(project=project, actor=self.admin, overlap_k=k)
        except ConcordError:
            assert project.is_archived  # read only
            self.refused += 1
            return
        self._project()
        assert self.project.overlap_k == k
        self.k_low, self.k_high = min(self.k_low, k), max(self.k_high, k)

    @rule(depth=st.sampled_from([Level.THEME, Level.SUBTHEME]))
    def change_depth(self, depth: str) -> None:
        """Refused once the project has a label (theme and sub-theme labels would mix)."""
        project = self._project()
        was, archived = project.label_depth, project.is_archived
        labeled = Annotation.objects.filter(item__project=project).exists()
        try:
            project_update(project=project, actor=self.admin, label_depth=depth)
        except ConcordError:
            assert archived or (labeled and depth != was)
            assert self._project().label_depth == was
            self.refused += 1
            return
        assert not archived
        assert not labeled or depth == was
        assert self._project().label_depth == depth

    @rule(archived=st.booleans())
    def archive(self, archived: bool) -> None:
        project_archive(project=self._project(), actor=self.admin, archived=archived)
        assert self._project().is_archived == archived

    @precondition(lambda self: self.project.is_archived)
    @rule(v=st.integers(0, VOLUNTEERS - 1), i=ANY_ITEM, code=st.sampled_from(CODES))
    def nothing_while_archived(self, v: int, i: int, code: str) -> None:
        """Read only: no item or candidate handed out; a label, an edit and a vote refused by
        the services themselves, with nothing stored."""
        volunteer, item = self.volunteers[v], self._item(i)
        project = self._project()
        assert next_item_claim(project=project, volunteer=volunteer).item is None
        assert screening_next_claim(project=project, volunteer=volunteer).item is None
        rows = (Annotation.objects.count(), ScreeningVote.objects.count())
        mine = Annotation.objects.filter(item=item, volunteer=volunteer).first()
        with pytest.raises(ConcordError, match="archived"):
            annotation_submit(
                item=item, volunteer=volunteer, node=self._node(code), summary="archived",
                version=mine.version if mine else None,
            )  # fmt: skip
        with pytest.raises(ConcordError, match="archived"):
            screening_vote(item=item, volunteer=volunteer, relevant=True)
        assert (Annotation.objects.count(), ScreeningVote.objects.count()) == rows

    # ------------------------------------------------------------ the lead

    @rule(i=ANY_ITEM, relevant=st.booleans())
    def decide_screening(self, i: int, relevant: bool) -> None:
        item = self._item(i)
        self.attempt(lambda: screening_decide(item=item, lead=self.lead, relevant=relevant))

    @rule(i=ANY_ITEM, code=st.sampled_from(CODES))
    def resolve(self, i: int, code: str) -> None:
        item = self._item(i)
        self.attempt(
            lambda: item_resolve(item=item, lead=self.lead, node=self._node(code), reason="why")
        )

    @rule(i=ANY_ITEM)
    def reopen(self, i: int) -> None:
        item = self._item(i)
        self.attempt(lambda: item_reopen(item=item, lead=self.lead, reason="look again"))

    @rule()
    def pilot(self) -> None:
        self.project.refresh_from_db()
        if self.project.pilot_status == "running":
            self.attempt(lambda: pilot_close(project=self.project, lead=self.lead))
        else:
            self.attempt(lambda: pilot_start(project=self.project, lead=self.lead, n=1))

    @rule(code=st.sampled_from(CODES))
    def pilot_label(self, code: str) -> None:
        claim = next_item_claim(project=self.project, volunteer=self.lead)
        if claim.item is not None:
            self.attempt(
                lambda: annotation_submit(
                    item=claim.item, volunteer=self.lead, node=self._node(code), summary="pilot"
                )
            )

    @precondition(lambda self: not self.project.is_archived)
    @rule(i=ANY_ITEM)
    def propose_and_send_back(self, i: int) -> None:
        item = self._item(i)
        proposal = proposal_create(
            project=self.project,
            proposer=self.lead,
            parent=self._node("C"),
            name="Something new",
            item=item,
        )
        for member in electorate(self.project):
            proposal_vote(proposal=proposal, member=member, approve=True)
        proposal.refresh_from_db()
        assert proposal.status == ProposalStatus.ACCEPTED
        self.attempt(lambda: proposal_send_back(proposal=proposal, lead=self.lead))

    # ------------------------------------------------------------ the rule

    @invariant()
    def stages_follow_the_rows(self) -> None:
        if not hasattr(self, "project"):
            return
        resolved = set(
            Resolution.objects.filter(item__project=self.project).values_list("item_id", flat=True)
        )
        k = Item.objects.get(pk=self.items[0].pk).project.overlap_k
        for item in Item.objects.filter(project=self.project):
            labels = list(item.annotations.values_list("node_id", flat=True))
            assert item.label_count == len(labels) <= self.k_high
            if item.stage in (Stage.OPEN, Stage.LABELING):
                assert len(labels) < k, f"item {item.pk}: {item.stage} with {labels} at k={k}"
            complete_at = k
            if item.stage in (Stage.DISPUTED, Stage.FINAL) and labels:
                complete_at = min(k, len(labels))  # complete under the k it was labeled with
            if item.stage == Stage.DISPUTED:
                assert len(labels) >= self.k_low
            outcome = item_outcome(
                stage=item.stage, labels=labels, resolved=item.pk in resolved, k=complete_at
            )
            assert (outcome.stage, outcome.unanimous_node) == (item.stage, None), (
                f"item {item.pk}: {item.stage} with {labels}, resolved={item.pk in resolved}, k={k}"
            )

    @invariant()
    def depth_fixed_once_labeled(self) -> None:
        if not hasattr(self, "project"):
            return
        project = self._project()
        if Annotation.objects.filter(item__project=project).exists():
            assert project.label_depth == self.labeled_depth
        else:
            self.labeled_depth = project.label_depth

    @invariant()
    def every_stage_change_is_audited(self) -> None:
        if not hasattr(self, "project"):
            return
        for item in Item.objects.filter(project=self.project):
            stage = self.created_stage[item.pk]
            for before, after in AuditEvent.objects.filter(item=item).values_list(
                "before", "after"
            ):
                if not (after and "stage" in after):
                    continue
                assert before["stage"] == stage, f"item {item.pk}: an unaudited change to {stage}"
                stage = after["stage"]
            assert stage == item.stage, f"item {item.pk} is {item.stage}; the audit says {stage}"


@pytest.mark.slow
@pytest.mark.django_db
def test_every_sequence_of_changes_keeps_stages_counts_and_audit_in_line(study_taxonomy, tmp_path):
    Lifecycle.TestCase.settings = settings(
        max_examples=40,
        stateful_step_count=30,
        deadline=None,
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
    )
    from hypothesis.stateful import run_state_machine_as_test

    run_state_machine_as_test(
        lambda: Lifecycle(study_taxonomy, tmp_path), settings=Lifecycle.TestCase.settings
    )
