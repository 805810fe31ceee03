"""The work: projects, members, items (issues in a project), annotations and resolutions."""

from django.conf import settings
from django.db import models
from django.utils.translation import gettext_lazy as _

from concord.job_rows import BackgroundJob, JobStatus
from ingest.models import Issue
from taxonomy.models import Level, Node, Taxonomy


class Role(models.TextChoices):
    VOLUNTEER = "volunteer", _("Volunteer")
    LEAD = "lead", _("Lead annotator")
    ADMIN = "admin", _("Admin")


class Stage(models.TextChoices):
    CANDIDATE = "candidate", _("Candidate")
    SCREENING_DISPUTE = "screening_dispute", _("Screening dispute")
    EXCLUDED = "excluded", _("Excluded")
    OPEN = "open", _("Open")
    LABELING = "labeling", _("Labeling")
    DISPUTED = "disputed", _("Disputed")
    FINAL = "final", _("Final")


# Stages in which an item has all its labels, so they are no longer blind (per project setting,
# see Project). The transitions between stages live in annotation.lifecycle.
REVEALED_STAGES = (Stage.DISPUTED, Stage.FINAL)
# Stages in which volunteers may be sent the item to label.
LABELABLE_STAGES = (Stage.OPEN, Stage.LABELING)


class Method(models.TextChoices):
    UNANIMOUS = "unanimous", _("Unanimous")
    MAJORITY = "majority", _("Majority")
    LEAD = "lead", _("Lead decision")


class ScreeningRule(models.TextChoices):
    LEAD = "lead", _("Mixed votes go to the lead")
    MAJORITY = "majority", _("Mixed votes are decided by majority (ties go to the lead)")


class PilotStatus(models.TextChoices):
    NONE = "none", _("No pilot")
    RUNNING = "running", _("Pilot running: only the lead labels")
    CLOSED = "closed", _("Pilot closed")


SHUFFLE_KEYS = 2_147_483_647  # an item's shuffle key lies in [0, SHUFFLE_KEYS)


class RandomKey(models.Func):
    """A random non-negative integer drawn by the database for each row it inserts."""

    output_field = models.IntegerField()
    arity = 0

    template = f"floor(random() * {SHUFFLE_KEYS})::integer"

    def as_sqlite(self, compiler, connection, **extra_context):
        return super().as_sql(
            compiler, connection, template="(random() / 8589934592 + 1073741824)", **extra_context
        )


class Project(models.Model):
    name = models.CharField(max_length=200)
    slug = models.SlugField(
        max_length=60, unique=True, help_text="Short id used in URLs and commands."
    )
    taxonomy = models.ForeignKey(Taxonomy, on_delete=models.PROTECT, related_name="projects")
    overlap_k = models.PositiveSmallIntegerField(
        default=3, help_text="Independent labels wanted per item before cross-check."
    )
    label_depth = models.CharField(
        max_length=10,
        choices=Level.choices,
        default=Level.THEME,
        help_text="How deep volunteers label: type, theme or sub-theme.",
    )
    screening_enabled = models.BooleanField(default=True, help_text="Screen candidates first.")
    screening_votes = models.PositiveSmallIntegerField(
        default=2, help_text="Screening votes wanted per candidate."
    )
    screening_rule = models.CharField(
        max_length=10, choices=ScreeningRule.choices, default=ScreeningRule.LEAD
    )
    reservation_minutes = models.PositiveSmallIntegerField(
        default=30, help_text="How long an item handed to a volunteer stays reserved for them."
    )
    quota_per_volunteer = models.PositiveIntegerField(
        null=True, blank=True, help_text="Most labels one volunteer may give; empty: no limit."
    )
    summary_required = models.BooleanField(
        default=True,
        help_text="A label needs its one-line summary (the server refuses a label without one).",
    )
    reveal_after_cross_check = models.BooleanField(
        default=True,
        help_text="Volunteers may see the others' labels and discuss once an item has k labels.",
    )
    pilot_status = models.CharField(
        max_length=10, choices=PilotStatus.choices, default=PilotStatus.NONE
    )
    guidelines = models.TextField(blank=True, help_text="Markdown shown to volunteers.")
    created_at = models.DateTimeField(auto_now_add=True)
    archived_at = models.DateTimeField(
        null=True,
        blank=True,
        help_text="When it was archived: read only (nothing is labeled), still exportable.",
    )

    class Meta:
        constraints = [
            models.CheckConstraint(condition=models.Q(overlap_k__gte=1), name="project_k_positive")
        ]

    def __str__(self) -> str:
        return self.name

    @property
    def is_archived(self) -> bool:
        return self.archived_at is not None


class Membership(models.Model):
    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="memberships")
    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="memberships"
    )
    role = models.CharField(max_length=10, choices=Role.choices, default=Role.VOLUNTEER)
    column = models.PositiveSmallIntegerField(
        null=True,
        blank=True,
        help_text="Position as LabelJ in study-format files (imports and exports); empty if none.",
    )

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["project", "user"], name="membership_unique"),
            models.UniqueConstraint(
                fields=["project", "column"],
                name="membership_column_unique",
                condition=models.Q(column__isnull=False),
            ),
        ]

    def __str__(self) -> str:
        return f"{self.user} ({self.role}) in {self.project}"


class Item(models.Model):
    # no index of its own: item_unique leads with it (migration 0022)
    project = models.ForeignKey(
        Project, on_delete=models.CASCADE, related_name="items", db_index=False
    )
    issue = models.ForeignKey(Issue, on_delete=models.PROTECT, related_name="items")
    stage = models.CharField(max_length=20, choices=Stage.choices, default=Stage.CANDIDATE)
    label_count = models.PositiveSmallIntegerField(
        default=0, help_text="Annotations so far; kept by the services that write them."
    )
    in_pilot = models.BooleanField(default=False, help_text="In the lead's pilot sample.")
    shuffle = models.IntegerField(
        db_default=RandomKey(),
        help_text="Random, fixed when the item is added: each claim hands out the first item "
        "past a random point of this order, so the order tells a volunteer nothing about counts.",
    )
    agreement = models.FloatField(
        null=True,
        blank=True,
        help_text="Share of labels on the most common answer at cross-check (orders disputes).",
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["project", "issue"], name="item_unique")]
        indexes = [
            models.Index(fields=["project", "stage", "label_count"], name="item_queue"),
            # "Next item" walks the labelable items of a project in this order and stops at the
            # first it may hand out (annotation.labeling.eligibility); final items are not in
            # the index.
            models.Index(
                fields=["project", "shuffle", "id"],
                name="item_claim",
                condition=models.Q(stage__in=["open", "labeling"]),
            ),
        ]

    def __str__(self) -> str:
        return f"{self.issue} in {self.project.slug}"


class Annotation(models.Model):
    """One volunteer's label on one item; unique per item and volunteer (a retry is a no-op)."""

    # no index of its own: annotation_unique leads with it (migration 0022)
    item = models.ForeignKey(
        Item, on_delete=models.CASCADE, related_name="annotations", db_index=False
    )
    volunteer = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="annotations"
    )
    node = models.ForeignKey(Node, on_delete=models.PROTECT, related_name="annotations")
    summary = models.CharField(
        max_length=500, blank=True, help_text="Symptom / intent / expectation."
    )
    version = models.PositiveIntegerField(
        default=1, help_text="Bumped on every edit; a form sent with an older one is stale."
    )
    is_pilot = models.BooleanField(default=False, help_text="Given by the lead in the pilot.")
    seconds_spent = models.PositiveIntegerField(
        null=True, blank=True, help_text="From handing the item out to the submit."
    )
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["item", "volunteer"], name="annotation_unique")
        ]

    def __str__(self) -> str:
        return f"{self.volunteer} -> {self.node.code} on {self.item_id}"


class Resolution(models.Model):
    item = models.OneToOneField(Item, on_delete=models.CASCADE, related_name="resolution")
    node = models.ForeignKey(Node, on_delete=models.PROTECT, related_name="resolutions")
    method = models.CharField(max_length=10, choices=Method.choices)
    resolver = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        null=True,
        blank=True,
        on_delete=models.PROTECT,
        help_text="Who decided; empty when automatic or imported.",
    )
    reason = models.TextField(blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    def __str__(self) -> str:
        return f"{self.item_id}: {self.node.code} ({self.method})"


class Reservation(models.Model):
    """An item handed to a volunteer by "next item": counts toward k until it expires, is
    submitted or skipped, so two volunteers are never sent the same last slot."""

    # no index of its own: reservation_unique leads with it (migration 0022)
    item = models.ForeignKey(
        Item, on_delete=models.CASCADE, related_name="reservations", db_index=False
    )
    volunteer = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="reservations"
    )
    created_at = models.DateTimeField(auto_now_add=True)
    expires_at = models.DateTimeField()

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["item", "volunteer"], name="reservation_unique")
        ]
        indexes = [models.Index(fields=["item", "expires_at"], name="reservation_live")]

    def __str__(self) -> str:
        return f"{self.item_id} reserved for {self.volunteer} until {self.expires_at:%H:%M}"


class Skip(models.Model):
    """A volunteer passed on an item; they are never sent it again."""

    item = models.ForeignKey(Item, on_delete=models.CASCADE, related_name="skips")
    volunteer = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="skips"
    )
    reason = models.CharField(max_length=300, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["item", "volunteer"], name="skip_unique")]

    def __str__(self) -> str:
        return f"{self.volunteer} skipped {self.item_id}"


class ScreeningVote(models.Model):
    item = models.ForeignKey(Item, on_delete=models.CASCADE, related_name="screening_votes")
    volunteer = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="screening_votes"
    )
    relevant = models.BooleanField()
    reason = models.CharField(max_length=300, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["item", "volunteer"], name="screening_vote_unique")
        ]

    def __str__(self) -> str:
        verdict = "relevant" if self.relevant else "not relevant"
        return f"{self.volunteer}: {self.item_id} {verdict}"


class Post(models.Model):
    """One message in an item's discussion thread (visible once the item is in cross-check)."""

    item = models.ForeignKey(Item, on_delete=models.CASCADE, related_name="posts")
    author = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="posts"
    )
    text = models.TextField(help_text="Markdown.")
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["created_at", "pk"]

    def __str__(self) -> str:
        return f"post by {self.author} on {self.item_id}"


class ProposalStatus(models.TextChoices):
    OPEN = "open", _("Open for votes")
    ACCEPTED = "accepted", _("Accepted (every member approved)")
    REJECTED = "rejected", _("Rejected")
    ADDED = "added", _("Added to the taxonomy")


class Proposal(models.Model):
    """A new taxonomy category asked for by a member ("none fits"). The study's rule: accepted
    only when every member of the project approves; the lead then adds the node."""

    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="proposals")
    proposer = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="proposals"
    )
    parent = models.ForeignKey(
        Node,
        null=True,
        blank=True,
        on_delete=models.PROTECT,
        related_name="+",
        help_text="Where the new category would go; empty for a new type.",
    )
    name = models.CharField(max_length=200)
    definition = models.TextField(blank=True)
    reason = models.TextField(blank=True, help_text="Why no existing category fits.")
    items = models.ManyToManyField(Item, blank=True, related_name="proposals")
    status = models.CharField(
        max_length=10, choices=ProposalStatus.choices, default=ProposalStatus.OPEN
    )
    node = models.ForeignKey(
        Node,
        null=True,
        blank=True,
        on_delete=models.PROTECT,
        related_name="+",
        help_text="The node added for it.",
    )
    created_at = models.DateTimeField(auto_now_add=True)

    def __str__(self) -> str:
        return f"proposal {self.name!r} in {self.project.slug} ({self.status})"


class ProposalVote(models.Model):
    proposal = models.ForeignKey(Proposal, on_delete=models.CASCADE, related_name="votes")
    member = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="proposal_votes"
    )
    approve = models.BooleanField()
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["proposal", "member"], name="proposal_vote_unique")
        ]

    def __str__(self) -> str:
        return f"{self.member} {'approves' if self.approve else 'rejects'} {self.proposal_id}"


class ProjectNode(models.Model):
    """A node one project added to its taxonomy (through an accepted proposal). Projects may
    share a taxonomy; such a node is that project's category only (annotation.project_nodes)."""

    project = models.ForeignKey(
        Project,
        on_delete=models.CASCADE,
        related_name="added_nodes",
        help_text="The project that added the node, the only one that may use it.",
    )
    node = models.OneToOneField(
        Node,
        on_delete=models.PROTECT,
        related_name="+",
        help_text="The node added; delete this row to share it with every project.",
    )
    proposal = models.ForeignKey(
        Proposal,
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="+",
        help_text="The proposal it was added for.",
    )
    created_at = models.DateTimeField(auto_now_add=True)

    def __str__(self) -> str:
        return f"{self.node_id} added by {self.project_id}"


class Action(models.TextChoices):
    LABEL = "label", _("Labeled")
    EDIT = "edit", _("Edited a label")
    SKIP = "skip", _("Skipped")
    SCREEN = "screen", _("Screened")
    SCREENING_DECISION = "screening_decision", _("Decided a screening dispute")
    CROSS_CHECK = "cross_check", _("Reached cross-check")
    RESOLVE = "resolve", _("Resolved")
    REOPEN = "reopen", _("Re-opened")
    RELABEL = "relabel", _("Sent back for relabeling")
    POST = "post", _("Posted in the discussion")
    PROPOSE = "propose", _("Proposed a category")
    PROPOSAL_VOTE = "proposal_vote", _("Voted on a proposal")
    PROPOSAL_ADD = "proposal_add", _("Added a proposed category")
    PILOT = "pilot", _("Changed the pilot")
    IMPORT = "import", _("Imported labels")
    UNSKIP = "unskip", _("Took back a skip")
    PROJECT = "project", _("Changed the project's settings")
    MEMBERS = "members", _("Changed the project's members")
    TAXONOMY = "taxonomy", _("Changed the taxonomy")
    NOT_DUPLICATE = "not_duplicate", _("Marked two items not duplicates")


class AuditEvent(models.Model):
    """Who did what, when, from what to what: append-only (written by annotation.audit)."""

    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="audit_events")
    # no index of its own: audit_item leads with it (migration 0022)
    item = models.ForeignKey(
        Item,
        null=True,
        blank=True,
        on_delete=models.CASCADE,
        related_name="audit_events",
        db_index=False,
    )
    actor = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="+",
        help_text="Empty for automatic steps.",
    )
    action = models.CharField(max_length=20, choices=Action.choices)
    before = models.JSONField(null=True, blank=True)
    after = models.JSONField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["created_at", "pk"]
        indexes = [models.Index(fields=["item", "created_at"], name="audit_item")]

    def __str__(self) -> str:
        return f"{self.get_action_display()} by {self.actor or 'Concord'} at {self.created_at}"


class ExportFormat(models.TextChoices):
    STUDY = "study", _("Study format: Issue_URL, Label1..LabelK, Final_Label")
    LONG = "long", _("Long: one row per label")
    FINAL = "final", _("Final labels: one row per resolved issue")
    REPOSITORIES = "repositories", _("Per-repository statistics (the study's Table I)")
    PACKAGE = "package", _("Replication package (zip): the study's files, README, checksums")
    ARCHIVE = "archive", _("Project archive (zip): the whole project, for restore_project")


# The job row's base moved to concord.job_rows so taxonomy's jobs share it; the names stay here.
ExportStatus = JobStatus  # the name export code and tests know


class ExportJob(BackgroundJob):
    """One CSV export written in the background (annotation.reporting.export_jobs). The file is
    written under a temporary name and renamed when complete, so only a done job has a file to
    offer."""

    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="export_jobs")
    format = models.CharField(max_length=20, choices=ExportFormat.choices)
    options = models.JSONField(
        default=dict, blank=True, help_text="Level and filters, as annotation.exports reads them."
    )
    rows_written = models.PositiveIntegerField(default=0, help_text="Data rows so far.")
    rows_total = models.PositiveIntegerField(
        null=True, blank=True, help_text="Rows expected, counted when the job was queued."
    )
    file = models.CharField(
        max_length=300, blank=True, help_text="File name under VAR_DIR/exports, once done."
    )
    error = models.TextField(blank=True, help_text="Why the export failed, in words.")

    class Meta(BackgroundJob.Meta):
        pass

    def __str__(self) -> str:
        return f"export {self.pk} of {self.project.slug} ({self.format}, {self.status})"


class ItemImport(BackgroundJob):
    """One JSON or JSONL file of issues with their text, added to a project as items in the
    background (annotation.projects.item_imports). The whole file is checked first and written
    in one transaction: it goes in whole or not at all. The file waits on disk, not in this row:
    the worker reads it as a stream (issue 25)."""

    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="item_imports")
    name = models.CharField(max_length=200, help_text="The file's name, as errors cite it.")
    file = models.CharField(
        max_length=100,
        blank=True,
        help_text="The file as sent, under VAR_DIR/item-imports; removed once the job has "
        "finished.",
    )
    records_total = models.PositiveIntegerField(
        null=True, blank=True, help_text="Issues in the file, once it has been read."
    )
    records_checked = models.PositiveIntegerField(default=0, help_text="Issues checked so far.")
    issues_created = models.PositiveIntegerField(default=0)
    items_added = models.PositiveIntegerField(
        default=0, help_text="New items; issues already in the project are left as they are."
    )
    error = models.TextField(blank=True, help_text="Why the import failed, in words.")
    problems = models.JSONField(
        default=list,
        blank=True,
        help_text="Every problem found in the file: path, line, column (a field) and message.",
    )

    class Meta(BackgroundJob.Meta):
        pass

    def __str__(self) -> str:
        return f"import {self.pk} of {self.name} into {self.project.slug} ({self.status})"


# ---------------------------------------------------------------- study set-up in the app


class MergedRepeat(models.Model):
    """A row of a study label file skipped on import because an earlier row of the same file has
    its issue URL (the first row is kept). Kept so Reports and the repositories export can say how
    many source rows were merged, and their counts be matched to the files."""

    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="merged_repeats")
    item = models.ForeignKey(
        Item,
        on_delete=models.CASCADE,
        related_name="merged_repeats",
        help_text="The item the kept row made.",
    )
    file = models.CharField(max_length=300, help_text="File name, without its folder.")
    line = models.PositiveIntegerField(help_text="Line of the skipped row.")
    first_line = models.PositiveIntegerField(help_text="Line of the row that was kept.")
    labels_differ = models.BooleanField(
        help_text="Whether any label of the skipped row differs from the kept row's."
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["project", "file", "line"], name="merged_repeat_unique")
        ]

    def __str__(self) -> str:
        return f"{self.file} line {self.line} (repeats line {self.first_line})"


class Invitation(models.Model):
    """A one-time link that makes whoever opens it (signing up first if need be) a member of the
    project with the role the inviter chose. Only the token's SHA-256 is stored: the link is shown
    once, to the inviter."""

    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="invitations")
    role = models.CharField(max_length=10, choices=Role.choices, default=Role.VOLUNTEER)
    token_hash = models.CharField(
        max_length=64, unique=True, help_text="SHA-256 (hex) of the link's token."
    )
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)
    expires_at = models.DateTimeField(help_text="The link no longer works after this.")
    used_at = models.DateTimeField(null=True, blank=True, help_text="When the link was used.")
    used_by = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="+",
        help_text="Who joined with it.",
    )

    class Meta:
        ordering = ["-created_at", "-pk"]

    def __str__(self) -> str:
        return f"invitation to {self.project} as {self.role}"


class LabelImportJob(BackgroundJob):
    """Study label files uploaded in the browser, imported in the background one file at a time
    (annotation.projects.label_imports); claimed, beating and swept like every job
    (annotation.jobs). Each file is all-or-nothing, and importing a file again changes nothing,
    so a rerun after a killed worker is harmless."""

    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="label_imports")
    refuse_repeats = models.BooleanField(
        default=False, help_text="Refuse a file that repeats an Issue_URL instead of skipping."
    )
    files = models.JSONField(
        default=list, help_text="[{name, stored}]: each upload's name and where it was saved."
    )
    report = models.JSONField(
        default=list, help_text="Per file: counts, skipped repeats, or the errors by line."
    )
    files_done = models.PositiveIntegerField(default=0)
    error = models.TextField(blank=True, help_text="Why the job failed, in words.")

    class Meta(BackgroundJob.Meta):
        pass

    def __str__(self) -> str:
        return f"label import {self.pk} into {self.project.slug} ({self.status})"


# ---------------------------------------------------------------- the replication package (#28)


class PackageKind(models.TextChoices):
    LABELS = "labels", _("Label file (Issue_URL, Label1..LabelN, Final_Label)")
    YEAR_LIST = "year_list", _("Yearly issue list (<repo>_<year>.txt)")
    CARRIED = "carried", _("Carried as it came (taxonomy, its details, keyword lists)")


class PackageFile(models.Model):
    """A file of a replication package imported into the project (annotation.projects.package),
    with what its bytes need beyond the project's data: its path in the package, byte-order
    mark, line ending and last line's ending, so the package export
    (annotation.reporting.package) writes it back byte for byte. Its records are PackageLines;
    a carried file keeps its bytes here."""

    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="package_files")
    path = models.CharField(max_length=300, help_text="Path inside the package, '/' separated.")
    kind = models.CharField(max_length=10, choices=PackageKind.choices)
    year = models.PositiveSmallIntegerField(
        null=True, blank=True, help_text="A yearly list's year: the year of the issues it lists."
    )
    bom = models.BooleanField(default=False, help_text="Began with a UTF-8 byte-order mark.")
    newline = models.CharField(
        max_length=2, default="\n", help_text="The line ending of most of its lines."
    )
    final_newline = models.BooleanField(
        default=True, help_text="Whether its last line ended with a line ending."
    )
    content = models.BinaryField(blank=True, default=b"", help_text="A carried file's bytes.")

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["project", "path"], name="package_file_unique")
        ]

    def __str__(self) -> str:
        return f"{self.path} of {self.project_id}"


class PackageLine(models.Model):
    """One record of an imported label file or yearly list, in the file's order (repeats
    included). `raw` keeps the record's own text where the export's rendering of the item would
    differ (a repeated row with its own labels, unusual quoting or spelling, a blank line), with
    `cells`, what the export rendered for the item at import: the raw text is written back while
    the item still renders so."""

    file = models.ForeignKey(PackageFile, on_delete=models.CASCADE, related_name="lines")
    position = models.PositiveIntegerField(help_text="0 is a label file's header.")
    item = models.ForeignKey(
        Item, null=True, blank=True, on_delete=models.CASCADE, related_name="package_lines"
    )
    repeat = models.BooleanField(
        default=False, help_text="Repeats an earlier record's issue in the same file."
    )
    raw = models.TextField(blank=True, help_text="The record as written, line ending included.")
    cells = models.JSONField(null=True, blank=True, help_text="The item's export cells then.")

    class Meta:
        ordering = ["file", "position"]
        constraints = [
            models.UniqueConstraint(fields=["file", "position"], name="package_line_unique")
        ]

    def __str__(self) -> str:
        return f"{self.file.path}:{self.position}"


class PackageImport(BackgroundJob):
    """A replication package (a .zip) uploaded to be imported in the background
    (annotation.projects.package): all or nothing, reported by file and line."""

    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="package_imports")
    name = models.CharField(max_length=200, help_text="The upload's name.")
    file = models.CharField(
        max_length=100, blank=True, help_text="The zip as sent, under VAR_DIR/package-imports."
    )
    report = models.JSONField(
        default=dict, blank=True, help_text="Per file: what it added, its repeats, or errors."
    )
    error = models.TextField(blank=True, help_text="Why the import failed, in words.")

    class Meta(BackgroundJob.Meta):
        pass

    def __str__(self) -> str:
        return f"package import {self.pk} into {self.project.slug} ({self.status})"


# ---------------------------------------------------------------- near-duplicate issues (#29)


class DuplicateIndex(BackgroundJob):
    """One build of a project's near-duplicate index (annotation.duplicates.index): every pair of
    its items whose texts say the same thing, found in the background after items arrive. The
    newest done build's pairs are the index; its learned boilerplate says what was left out."""

    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="duplicate_indexes")
    threshold = models.FloatField(help_text="Least cosine similarity of a pair.")
    items_indexed = models.PositiveIntegerField(default=0)
    last_item_id = models.PositiveBigIntegerField(
        default=0, help_text="Newest item indexed: later items arrived after this build."
    )
    pairs_found = models.PositiveIntegerField(default=0)
    boilerplate = models.JSONField(
        default=dict, blank=True, help_text="Per tracker: template lines and words left out."
    )
    error = models.TextField(blank=True, help_text="Why the build failed, in words.")

    class Meta(BackgroundJob.Meta):
        pass

    def __str__(self) -> str:
        return f"duplicate index {self.pk} of {self.project.slug} ({self.status})"


class DuplicatePair(models.Model):
    """Two items of a project whose texts are near-duplicates (item_a is the older). Rewritten by
    each index build; what a lead decided about a pair lives in NotDuplicate."""

    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="+")
    item_a = models.ForeignKey(Item, on_delete=models.CASCADE, related_name="+")
    item_b = models.ForeignKey(Item, on_delete=models.CASCADE, related_name="+")
    similarity = models.FloatField(help_text="Cosine of the two texts' TF-IDF terms, 0 to 1.")
    at_intake = models.BooleanField(
        default=False,
        help_text="item_b arrived after item_a was indexed: adding it repeated an item.",
    )

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["item_a", "item_b"], name="duplicate_pair_unique"),
            models.CheckConstraint(
                condition=models.Q(item_a__lt=models.F("item_b")), name="duplicate_pair_ordered"
            ),
        ]
        indexes = [models.Index(fields=["project", "-similarity"], name="duplicate_pair_rank")]

    def __str__(self) -> str:
        return f"{self.item_a_id} ~ {self.item_b_id} ({self.similarity:.2f})"


class NotDuplicate(models.Model):
    """A lead's word that two items the index paired are not duplicates: kept across rebuilds."""

    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="+")
    item_a = models.ForeignKey(Item, on_delete=models.CASCADE, related_name="+")
    item_b = models.ForeignKey(Item, on_delete=models.CASCADE, related_name="+")
    decided_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["item_a", "item_b"], name="not_duplicate_unique"),
            models.CheckConstraint(
                condition=models.Q(item_a__lt=models.F("item_b")), name="not_duplicate_ordered"
            ),
        ]

    def __str__(self) -> str:
        return f"{self.item_a_id} is not {self.item_b_id}"


class FigureState(models.Model):
    """Whether a project's FigureTally rows can be trusted (annotation.figures.tallies).

    `generation` is bumped (concord_figures_stale_mark, migration 0023) by a PostgreSQL trigger
    whenever a label or final label of the project is written other than through
    tallies.figures_kept, which keeps the tallies itself, and once per import
    (tallies.figures_marked_stale); `built` is the generation the tallies were last rebuilt at,
    and `basis` the digest of what they were rolled up by (the taxonomy's tree and codes, k).
    The tallies hold when built == generation and the basis is today's."""

    # No foreign key in the database: the trigger may mark a project whose deletion is under
    # way (its labels go first), and its row must not stop the project's own deletion.
    project = models.OneToOneField(
        Project, on_delete=models.CASCADE, primary_key=True, related_name="+", db_constraint=False
    )
    generation = models.BigIntegerField(default=0)
    built = models.BigIntegerField(null=True, blank=True)
    basis = models.CharField(max_length=64, blank=True)

    def __str__(self) -> str:
        return f"figures of {self.project_id}: generation {self.generation}, built {self.built}"


class FigureTally(models.Model):
    """Part of a project's agreement figures (annotation.figures.tallies): a list of entries,
    each the RatingTally (taxonomy.agreement) of one group of items at one level for the items
    with a given number of ratings: [level, grouping, group, ratings, items, {code: total},
    {code: sum of squares}]. The project's figures are the sum of its rows. A rebuild writes one
    row; every label written since adds a row with its item's change (new minus old): append
    only, so no two submits wait on one row."""

    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="+")
    entries = models.JSONField(default=list)

    def __str__(self) -> str:
        return f"figures of {self.project_id}: {len(self.entries)} entries"
