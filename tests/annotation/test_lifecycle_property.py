"""Random sequences of everything that changes an item (live labels, edits, skips, direct submits,
study imports, screening votes and decisions, the pilot, proposals' send-back, resolves and
re-opens), checked after every step against the lifecycle's rule:

- each item's stage is what annotation.lifecycle.item_outcome derives from its stored rows (an
  item at rest is a fixed point of the rule, with no unanimous resolution pending);
- label_count equals the stored labels and never passes k;
- every stage change has its audit row: the item's audit rows that carry a stage chain from the
  stage it was created in to the stage it is in now, each row starting where the last ended.
"""

from __future__ import annotations

import itertools
from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize, invariant, rule

from annotation.labeling.assignment import item_skip, next_item_claim
from annotation.labeling.services import annotation_submit
from annotation.lifecycle import InvalidTransition, item_outcome
from annotation.models import (
    Annotation,
    AuditEvent,
    Item,
    Membership,
    ProposalStatus,
    Resolution,
    Role,
    ScreeningRule,
    Stage,
)
from annotation.projects.importers import study_labels_import
from annotation.review.pilot import pilot_close, pilot_start
from annotation.review.proposals import (
    electorate,
    proposal_create,
    proposal_send_back,
    proposal_vote,
)
from annotation.review.services import item_reopen, item_resolve
from annotation.screening.services import screening_decide, screening_vote
from concord.errors import ConcordError
from tests.annotation.labeling_helpers import node
from tests.factories import IssueFactory, ProjectFactory, UserFactory

K = 2
CODES = ["C.1", "C.2", "A.1"]
VOLUNTEERS = 3
ITEMS = 5
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
        for user in self.volunteers:
            Membership.objects.create(project=self.project, user=user, role=Role.VOLUNTEER)
        Membership.objects.create(project=self.project, user=self.lead, role=Role.LEAD)
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

    def _item(self, i: int) -> Item:
        return Item.objects.select_related("project").get(pk=self.items[i].pk)

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

    @rule(
        v=st.integers(0, VOLUNTEERS - 1), i=st.integers(0, ITEMS - 1), code=st.sampled_from(CODES)
    )
    def label_without_claiming(self, v: int, i: int, code: str) -> None:
        volunteer, item = self.volunteers[v], self._item(i)
        self.attempt(
            lambda: annotation_submit(
                item=item, volunteer=volunteer, node=self._node(code), summary="direct"
            )
        )

    @rule(
        v=st.integers(0, VOLUNTEERS - 1), i=st.integers(0, ITEMS - 1), code=st.sampled_from(CODES)
    )
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

    @rule(v=st.integers(0, VOLUNTEERS - 1), i=st.integers(0, 1), relevant=st.booleans())
    def screen(self, v: int, i: int, relevant: bool) -> None:
        volunteer, item = self.volunteers[v], self._item(i)
        self.attempt(lambda: screening_vote(item=item, volunteer=volunteer, relevant=relevant))

    # ------------------------------------------------------------ imports

    @rule(
        i=st.integers(0, ITEMS - 1),
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

    # ------------------------------------------------------------ the lead

    @rule(i=st.integers(0, 1), relevant=st.booleans())
    def decide_screening(self, i: int, relevant: bool) -> None:
        item = self._item(i)
        self.attempt(lambda: screening_decide(item=item, lead=self.lead, relevant=relevant))

    @rule(i=st.integers(0, ITEMS - 1), code=st.sampled_from(CODES))
    def resolve(self, i: int, code: str) -> None:
        item = self._item(i)
        self.attempt(
            lambda: item_resolve(item=item, lead=self.lead, node=self._node(code), reason="why")
        )

    @rule(i=st.integers(0, ITEMS - 1))
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

    @rule(i=st.integers(0, ITEMS - 1))
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
        for item in Item.objects.filter(project=self.project):
            labels = list(item.annotations.values_list("node_id", flat=True))
            assert item.label_count == len(labels) <= K
            outcome = item_outcome(
                stage=item.stage, labels=labels, resolved=item.pk in resolved, k=K
            )
            assert (outcome.stage, outcome.unanimous_node) == (item.stage, None), (
                f"item {item.pk}: {item.stage} with {labels}, resolved={item.pk in resolved}"
            )

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
