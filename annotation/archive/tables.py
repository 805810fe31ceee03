"""What a project archive holds: the tables, in the order they are restored (a table refers only
to tables before it, or to itself), and which of each table's rows are the project's.

Left out on purpose (LEFT_OUT): what can be made again or belongs to the instance, not the
project (background jobs and their files, reservations, the near-duplicate index, harvest sources
and keyword matches, invitation and ranking links with their tokens, passwords and API tokens).
A test (tests/annotation/test_archive.py) fails when a model that belongs to a project is in
neither list.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

from django.contrib.auth import get_user_model
from django.db import models
from django.db.models import Case, IntegerField, QuerySet, Value, When

from annotation.models import (
    Annotation,
    AuditEvent,
    Item,
    Membership,
    MergedRepeat,
    NotDuplicate,
    PackageFile,
    PackageLine,
    Post,
    Project,
    ProjectNode,
    Proposal,
    ProposalVote,
    Resolution,
    ScreeningVote,
    Skip,
)
from annotation.project_nodes import project_nodes
from ingest.models import Comment, Issue
from taxonomy.interviews.models import (
    CodedPassage,
    InterviewGuide,
    Participant,
    Quote,
    QuoteLink,
    Ranking,
    SettledCode,
    Transcript,
    TranscriptCoder,
)
from taxonomy.models import Example, Level, Node, Taxonomy

User = get_user_model()
USER_COLUMNS = ("username", "first_name", "last_name", "email", "is_active", "date_joined")


@dataclass(frozen=True)
class Table:
    name: str  # the file is <name>.jsonl
    model: type[models.Model]
    owned: Callable[[Project], QuerySet]  # the project's rows
    refs: Mapping[str, str] = field(default_factory=dict)  # column -> table its ids are of
    natural: tuple[str, ...] = ()  # a row this instance holds by these is found, not made
    agree: tuple[str, ...] = ()  # ... and must agree on these, or the restore is refused
    unique: tuple[str, ...] = ()  # a row holding these refuses the restore (a clash)
    only: tuple[str, ...] = ()  # the columns archived, if not every one
    leave_out: tuple[str, ...] = ()
    order: tuple[str, ...] = ("pk",)
    with_made_parent: str = ""  # a row is made only if this column's row was made here

    def columns(self) -> list[str]:
        names = [
            f.attname
            for f in self.model._meta.concrete_fields
            if not f.primary_key and f.attname not in self.leave_out
        ]
        return [n for n in names if n in self.only] if self.only else names

    def field_of(self, column: str) -> models.Field:
        return next(f for f in self.model._meta.concrete_fields if f.attname == column)


def _by_depth(nodes: QuerySet[Node]) -> QuerySet[Node]:
    """Types, then themes, then sub-themes: a node's parent is restored before it."""
    depth = Case(
        *(When(level=level, then=Value(Level.depth_of(level))) for level in Level.values),
        output_field=IntegerField(),
    )
    return nodes.annotate(tree_depth=depth)


def _users(project: Project) -> QuerySet:
    """Every account a row of the project names: members, and whoever labeled, decided, wrote or
    voted (a former member's labels keep their volunteer)."""
    ids: set[int] = set()
    for table in TABLES:
        for column, target in table.refs.items():
            if target == "users":
                rows = table.owned(project).order_by().values_list(column, flat=True).distinct()
                ids.update(pk for pk in rows if pk is not None)
    return User.objects.filter(pk__in=ids)


def _of_project(model: type[models.Model], path: str = "project") -> Callable[[Project], QuerySet]:
    return lambda project: model._default_manager.filter(**{path: project})


TABLES: list[Table] = [
    Table(
        "taxonomy",
        Taxonomy,
        lambda p: Taxonomy.objects.filter(pk=p.taxonomy_id),
        natural=("name", "version"),
    ),
    Table(
        "nodes",
        Node,
        lambda p: _by_depth(project_nodes(p, live=False)),
        refs={"taxonomy_id": "taxonomy", "parent_id": "nodes"},
        natural=("taxonomy_id", "code"),
        agree=("level", "parent_id"),
        order=("tree_depth", "pk"),
    ),
    Table(
        "examples",
        Example,
        lambda p: Example.objects.filter(node__in=project_nodes(p, live=False)),
        refs={"node_id": "nodes"},
        with_made_parent="node_id",
    ),
    Table("users", User, _users, natural=("username",), only=USER_COLUMNS),
    Table(
        "project",
        Project,
        lambda p: Project.objects.filter(pk=p.pk),
        refs={"taxonomy_id": "taxonomy"},
        unique=("slug",),
    ),
    Table(
        "members",
        Membership,
        _of_project(Membership),
        refs={"project_id": "project", "user_id": "users"},
    ),
    Table(
        "issues",
        Issue,
        lambda p: Issue.objects.filter(items__project=p),
        natural=("host", "owner", "repo", "number"),
        leave_out=("source_id", "details_requested_at"),
    ),
    Table(
        "comments",
        Comment,
        lambda p: Comment.objects.filter(issue__items__project=p),
        refs={"issue_id": "issues"},
        natural=("host", "comment_id"),
        with_made_parent="issue_id",
    ),
    Table("items", Item, _of_project(Item), refs={"project_id": "project", "issue_id": "issues"}),
    Table(
        "annotations",
        Annotation,
        _of_project(Annotation, "item__project"),
        refs={"item_id": "items", "volunteer_id": "users", "node_id": "nodes"},
    ),
    Table(
        "resolutions",
        Resolution,
        _of_project(Resolution, "item__project"),
        refs={"item_id": "items", "node_id": "nodes", "resolver_id": "users"},
    ),
    Table(
        "skips",
        Skip,
        _of_project(Skip, "item__project"),
        refs={"item_id": "items", "volunteer_id": "users"},
    ),
    Table(
        "screening_votes",
        ScreeningVote,
        _of_project(ScreeningVote, "item__project"),
        refs={"item_id": "items", "volunteer_id": "users"},
    ),
    Table(
        "posts",
        Post,
        _of_project(Post, "item__project"),
        refs={"item_id": "items", "author_id": "users"},
    ),
    Table(
        "proposals",
        Proposal,
        _of_project(Proposal),
        refs={
            "project_id": "project",
            "proposer_id": "users",
            "parent_id": "nodes",
            "node_id": "nodes",
        },
    ),
    Table(
        "proposal_items",
        Proposal.items.through,
        _of_project(Proposal.items.through, "proposal__project"),
        refs={"proposal_id": "proposals", "item_id": "items"},
    ),
    Table(
        "proposal_votes",
        ProposalVote,
        _of_project(ProposalVote, "proposal__project"),
        refs={"proposal_id": "proposals", "member_id": "users"},
    ),
    Table(
        "project_nodes",
        ProjectNode,
        _of_project(ProjectNode),
        refs={"project_id": "project", "node_id": "nodes", "proposal_id": "proposals"},
        unique=("node_id",),
    ),
    Table(
        "audit_events",
        AuditEvent,
        _of_project(AuditEvent),
        refs={"project_id": "project", "item_id": "items", "actor_id": "users"},
    ),
    Table(
        "merged_repeats",
        MergedRepeat,
        _of_project(MergedRepeat),
        refs={"project_id": "project", "item_id": "items"},
    ),
    Table("package_files", PackageFile, _of_project(PackageFile), refs={"project_id": "project"}),
    Table(
        "package_lines",
        PackageLine,
        _of_project(PackageLine, "file__project"),
        refs={"file_id": "package_files", "item_id": "items"},
    ),
    Table(
        "not_duplicates",
        NotDuplicate,
        _of_project(NotDuplicate),
        refs={
            "project_id": "project",
            "item_a_id": "items",
            "item_b_id": "items",
            "decided_by_id": "users",
        },
    ),
    Table("participants", Participant, _of_project(Participant), refs={"project_id": "project"}),
    Table(
        "quotes",
        Quote,
        _of_project(Quote, "participant__project"),
        refs={"participant_id": "participants"},
    ),
    Table(
        "quote_links",
        QuoteLink,
        _of_project(QuoteLink, "quote__participant__project"),
        refs={"quote_id": "quotes", "node_id": "nodes", "mapped_by_id": "users"},
    ),
    Table(
        "interview_guides",
        InterviewGuide,
        _of_project(InterviewGuide),
        refs={"project_id": "project"},
    ),
    Table(
        "rankings",
        Ranking,
        _of_project(Ranking, "participant__project"),
        refs={"participant_id": "participants", "issue_type_id": "nodes", "node_id": "nodes"},
    ),
    Table(
        "transcripts",
        Transcript,
        _of_project(Transcript),
        refs={"project_id": "project", "participant_id": "participants", "created_by_id": "users"},
    ),
    Table(
        "transcript_coders",
        TranscriptCoder,
        _of_project(TranscriptCoder, "transcript__project"),
        refs={"transcript_id": "transcripts", "coder_id": "users", "assigned_by_id": "users"},
    ),
    Table(
        "coded_passages",
        CodedPassage,
        _of_project(CodedPassage, "transcript__project"),
        refs={"transcript_id": "transcripts", "coder_id": "users", "node_id": "nodes"},
    ),
    Table(
        "settled_codes",
        SettledCode,
        _of_project(SettledCode, "transcript__project"),
        refs={"transcript_id": "transcripts", "node_id": "nodes", "settled_by_id": "users"},
    ),
]

TABLE_NAMES = {table.name: table for table in TABLES}

# Models that belong to a project but are not archived, and why.
LEFT_OUT = {
    "annotation.ExportJob": "a background job; its file is made again by exporting",
    "annotation.ItemImport": "a background job",
    "annotation.LabelImportJob": "a background job",
    "annotation.PackageImport": "a background job",
    "annotation.DuplicateIndex": "a background job; the index is built again",
    "annotation.DuplicatePair": "the near-duplicate index, built again",
    "annotation.FigureState": "the agreement figures' tallies, rebuilt from the labels",
    "annotation.FigureTally": "the agreement figures' tallies, rebuilt from the labels",
    "annotation.Reservation": "an item handed out for a while",
    "annotation.Invitation": "a one-time link with its token",
    "interviews.InterviewImportJob": "a background job",
    "interviews.RankingLink": "a one-time link with its token",
}
