"""The work: projects, members, items (issues in a project), annotations and resolutions."""

from django.conf import settings
from django.db import models

from ingest.models import Issue
from taxonomy.models import Level, Node, Taxonomy


class Role(models.TextChoices):
    VOLUNTEER = "volunteer", "Volunteer"
    LEAD = "lead", "Lead annotator"
    ADMIN = "admin", "Admin"


class Stage(models.TextChoices):
    CANDIDATE = "candidate", "Candidate"
    SCREENING_DISPUTE = "screening_dispute", "Screening dispute"
    EXCLUDED = "excluded", "Excluded"
    OPEN = "open", "Open"
    LABELING = "labeling", "Labeling"
    CROSS_CHECK = "cross_check", "Cross-check"
    DISPUTED = "disputed", "Disputed"
    FINAL = "final", "Final"


class Method(models.TextChoices):
    UNANIMOUS = "unanimous", "Unanimous"
    MAJORITY = "majority", "Majority"
    LEAD = "lead", "Lead decision"


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
    guidelines = models.TextField(blank=True, help_text="Markdown shown to volunteers.")
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [
            models.CheckConstraint(condition=models.Q(overlap_k__gte=1), name="project_k_positive")
        ]

    def __str__(self) -> str:
        return self.name


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
    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="items")
    issue = models.ForeignKey(Issue, on_delete=models.PROTECT, related_name="items")
    stage = models.CharField(max_length=20, choices=Stage.choices, default=Stage.CANDIDATE)
    label_count = models.PositiveSmallIntegerField(
        default=0, help_text="Annotations so far; kept by the services that write them."
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["project", "issue"], name="item_unique")]
        indexes = [models.Index(fields=["project", "stage", "label_count"], name="item_queue")]

    def __str__(self) -> str:
        return f"{self.issue} in {self.project.slug}"


class Annotation(models.Model):
    """One volunteer's label on one item; unique per item and volunteer (a retry is a no-op)."""

    item = models.ForeignKey(Item, on_delete=models.CASCADE, related_name="annotations")
    volunteer = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="annotations"
    )
    node = models.ForeignKey(Node, on_delete=models.PROTECT, related_name="annotations")
    summary = models.CharField(
        max_length=500, blank=True, help_text="Symptom / intent / expectation."
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
