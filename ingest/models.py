"""Where issues come from. An Issue is unique by host + owner/repo + number."""

from django.db import models

from ingest.issue_refs import IssueRef


class Host(models.TextChoices):
    GITHUB = "github", "GitHub"
    GITEE = "gitee", "Gitee"


class Issue(models.Model):
    host = models.CharField(max_length=10, choices=Host.choices)
    owner = models.CharField(max_length=100, help_text="Account or organisation, e.g. 'NVIDIA'.")
    repo = models.CharField(max_length=100, help_text="Repository name, e.g. 'Megatron-LM'.")
    number = models.CharField(
        max_length=20, help_text="GitHub: a decimal number; Gitee: an id such as 'IBDZ87'."
    )
    url = models.URLField(max_length=300, help_text="Canonical web URL of the issue.")
    title = models.CharField(max_length=1000, blank=True)
    body = models.TextField(blank=True, help_text="Untrusted Markdown from the tracker.")
    author = models.CharField(max_length=100, blank=True)
    state = models.CharField(max_length=20, blank=True, help_text="open / closed as the host says.")
    labels = models.JSONField(default=list, blank=True, help_text="Tracker labels, as names.")
    created_at = models.DateTimeField(null=True, blank=True, help_text="Created on the tracker.")
    closed_at = models.DateTimeField(null=True, blank=True)
    comment_count = models.PositiveIntegerField(default=0)
    is_pull_request = models.BooleanField(default=False)
    fetched_at = models.DateTimeField(
        null=True, blank=True, help_text="When details were last fetched; empty for URL-only issues."
    )

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["host", "owner", "repo", "number"], name="issue_unique")
        ]
        indexes = [models.Index(fields=["host", "owner", "repo"], name="issue_repository")]

    def __str__(self) -> str:
        return f"{self.repository}#{self.number}"

    @property
    def repository(self) -> str:
        return f"{self.owner}/{self.repo}"

    @property
    def ref(self) -> IssueRef:
        return IssueRef(self.host, self.owner, self.repo, self.number)
