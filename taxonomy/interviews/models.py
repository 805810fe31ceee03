"""The study's other half: practitioners interviewed about the same taxonomy (issue 27).

Participants belong to a project (the project's taxonomy is what their quotes are coded to); the
project is named by string so that taxonomy never imports annotation.
"""

from django.conf import settings
from django.db import models
from django.utils.translation import gettext_lazy as _

from concord.job_rows import BackgroundJob
from taxonomy.models import Node


class ParticipantKind(models.TextChoices):
    USER = "user", _("LLM user")
    DEVELOPER = "developer", _("Framework developer")


class Participant(models.Model):
    """One interviewee, as the codebook names them (U1, D3), with the background the study
    recorded for them."""

    project = models.ForeignKey(
        "annotation.Project", on_delete=models.CASCADE, related_name="participants"
    )
    code = models.CharField(max_length=30, help_text="The codebook's name for them, e.g. 'U1'.")
    kind = models.CharField(max_length=10, choices=ParticipantKind.choices)
    experience = models.CharField(
        max_length=100, blank=True, help_text="Experience level as written ('Beginner' ...)."
    )
    framework = models.CharField(
        max_length=300, blank=True, help_text="Framework context, e.g. 'MindSpore + Ascend'."
    )
    role = models.CharField(max_length=300, blank=True, help_text="Role, from the background.")
    gender = models.CharField(max_length=30, blank=True, help_text="As the background writes it.")
    years = models.CharField(
        max_length=50, blank=True, help_text="Years of experience with LLMs, as written."
    )
    duties = models.TextField(blank=True, help_text="Responsibilities, from the background.")

    class Meta:
        ordering = ["project_id", "kind", "pk"]
        constraints = [
            models.UniqueConstraint(fields=["project", "code"], name="participant_code_unique")
        ]

    def __str__(self) -> str:
        return self.code


class Quote(models.Model):
    """A key passage of an interview, with the prompt it answered and what the researchers
    read in it; linked to taxonomy nodes through QuoteLink."""

    participant = models.ForeignKey(Participant, on_delete=models.CASCADE, related_name="quotes")
    prompt_category = models.CharField(
        max_length=300, blank=True, help_text="The codebook's prompt category."
    )
    text = models.TextField(help_text="The quote, as the participant said it (untrusted text).")
    insight = models.TextField(blank=True, help_text="The research insight drawn from it.")
    source = models.CharField(max_length=200, blank=True, help_text="File it was imported from.")
    line = models.PositiveIntegerField(null=True, blank=True, help_text="Line in that file.")

    class Meta:
        ordering = ["participant_id", "pk"]
        constraints = [
            models.UniqueConstraint(
                fields=["participant", "prompt_category", "text"], name="quote_unique"
            )
        ]

    def __str__(self) -> str:
        return f"{self.participant}: {self.text[:60]}"


class QuoteLink(models.Model):
    """A quote's link to a node, under the code the file gave. A code the project's taxonomy
    does not have is kept with no node (unresolved) until a lead maps it: never dropped."""

    quote = models.ForeignKey(Quote, on_delete=models.CASCADE, related_name="links")
    code = models.CharField(max_length=30, help_text="The node code as the file wrote it.")
    node = models.ForeignKey(
        Node,
        null=True,
        blank=True,
        on_delete=models.PROTECT,
        related_name="quote_links",
        help_text="Empty while the code is unresolved.",
    )
    mapped_by = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="+",
        help_text="The lead who mapped an unresolved code to a node (a re-import keeps it).",
    )

    class Meta:
        ordering = ["quote_id", "pk"]
        constraints = [models.UniqueConstraint(fields=["quote", "code"], name="quote_link_unique")]

    def __str__(self) -> str:
        return f"{self.quote_id} -> {self.code}"

    @property
    def is_resolved(self) -> bool:
        return self.node_id is not None


class InterviewGuide(models.Model):
    """The project's interview guideline (Markdown, rendered sanitized)."""

    project = models.OneToOneField(
        "annotation.Project", on_delete=models.CASCADE, related_name="interview_guide"
    )
    name = models.CharField(max_length=200, help_text="The file's name.")
    text = models.TextField(help_text="The guideline as Markdown (untrusted text).")
    updated_at = models.DateTimeField(auto_now=True)

    def __str__(self) -> str:
        return self.name


class InterviewImportJob(BackgroundJob):
    """A codebook (with its background sheet and guideline) imported in the background
    (annotation.interviews.jobs); claimed, beating and swept like every job. The import is
    all-or-nothing and idempotent, so a rerun after a killed worker is harmless."""

    project = models.ForeignKey(
        "annotation.Project", on_delete=models.CASCADE, related_name="interview_imports"
    )
    files = models.JSONField(
        default=list, help_text="[{part, name, stored}]: each upload's part, name and place."
    )
    report = models.JSONField(
        default=dict, blank=True, help_text="Counts, unresolved codes, or the errors by line."
    )
    error = models.TextField(blank=True, help_text="Why the job failed, in words.")

    class Meta(BackgroundJob.Meta):
        pass

    def __str__(self) -> str:
        return f"interview import {self.pk} ({self.status})"


TOP = 3  # the guideline asks for the top 3 categories per issue type


class Ranking(models.Model):
    """One place of a participant's practitioner priorities: the category they put at
    `position` (1 = most frequent or impactful) among one issue type's categories."""

    participant = models.ForeignKey(Participant, on_delete=models.CASCADE, related_name="rankings")
    issue_type = models.ForeignKey(
        Node, on_delete=models.PROTECT, related_name="+", help_text="The type (A, B, C) ranked."
    )
    position = models.PositiveSmallIntegerField(help_text="1 = first of the top 3.")
    node = models.ForeignKey(
        Node, on_delete=models.PROTECT, related_name="+", help_text="A theme of that type."
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["participant_id", "issue_type_id", "position"]
        constraints = [
            models.UniqueConstraint(
                fields=["participant", "issue_type", "position"], name="ranking_place_unique"
            ),
            models.UniqueConstraint(fields=["participant", "node"], name="ranking_node_unique"),
            models.CheckConstraint(
                condition=models.Q(position__gte=1, position__lte=TOP), name="ranking_top_3"
            ),
        ]

    def __str__(self) -> str:
        return f"{self.participant} {self.position}. {self.node_id}"


class RankingLink(models.Model):
    """A one-time link a participant opens (on a phone, without an account) to give their
    ranking. Only the token's SHA-256 is stored; the link carries its creator's authority."""

    participant = models.ForeignKey(
        Participant, on_delete=models.CASCADE, related_name="ranking_links"
    )
    token_hash = models.CharField(max_length=64, unique=True, help_text="SHA-256 of the token.")
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)
    expires_at = models.DateTimeField(help_text="The link no longer works after this.")
    used_at = models.DateTimeField(null=True, blank=True, help_text="When the ranking was sent.")

    class Meta:
        ordering = ["-created_at", "-pk"]

    def __str__(self) -> str:
        return f"ranking link for {self.participant}"


class Transcript(models.Model):
    """An interview's text, uploaded to be coded in the browser by two (or more) coders, each
    blind to the others' codes until every coder is done (annotation.blindness)."""

    project = models.ForeignKey(
        "annotation.Project", on_delete=models.CASCADE, related_name="transcripts"
    )
    participant = models.ForeignKey(
        Participant,
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="transcripts",
        help_text="Who was interviewed, if known.",
    )
    name = models.CharField(max_length=200, help_text="The uploaded file's name.")
    text = models.TextField(help_text="The transcript as plain text (untrusted text).")
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["project_id", "pk"]

    def __str__(self) -> str:
        return self.name


class TranscriptCoder(models.Model):
    """A project member coding a transcript: assigned by a lead, or volunteered."""

    transcript = models.ForeignKey(Transcript, on_delete=models.CASCADE, related_name="coders")
    coder = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+")
    assigned_by = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="+",
        help_text="The lead who assigned them; empty if they volunteered.",
    )
    done_at = models.DateTimeField(
        null=True, blank=True, help_text="When they said their coding is complete."
    )

    class Meta:
        ordering = ["transcript_id", "pk"]
        constraints = [
            models.UniqueConstraint(fields=["transcript", "coder"], name="transcript_coder_unique")
        ]

    def __str__(self) -> str:
        return f"{self.coder_id} codes {self.transcript_id}"


class CodedPassage(models.Model):
    """A passage of a transcript (characters start to end) a coder linked to a node. Saving the
    same passage and node again is the same row (a double click or a retry)."""

    transcript = models.ForeignKey(Transcript, on_delete=models.CASCADE, related_name="passages")
    coder = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+")
    node = models.ForeignKey(Node, on_delete=models.PROTECT, related_name="coded_passages")
    start = models.PositiveIntegerField(help_text="Offset of the first character.")
    end = models.PositiveIntegerField(help_text="Offset just past the last character.")
    note = models.TextField(blank=True, help_text="The coder's note (untrusted text).")
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["transcript_id", "start", "end", "pk"]
        constraints = [
            models.UniqueConstraint(
                fields=["transcript", "coder", "node", "start", "end"], name="coded_passage_unique"
            ),
            models.CheckConstraint(
                condition=models.Q(end__gt=models.F("start")), name="passage_span"
            ),
        ]

    def __str__(self) -> str:
        return f"{self.transcript_id}[{self.start}:{self.end}] -> {self.node_id}"

    @property
    def passage(self) -> str:
        return self.transcript.text[self.start : self.end]


class SettledCode(models.Model):
    """A lead's word on a disagreement of a transcript's coders: whether the category applies to
    the line one coder gave it and another did not. With the lines every coder gave a category,
    the kept ones are the transcript's final codes."""

    transcript = models.ForeignKey(Transcript, on_delete=models.CASCADE, related_name="settled")
    line = models.PositiveIntegerField(help_text="The line's number in the transcript (1 = first).")
    node = models.ForeignKey(Node, on_delete=models.PROTECT, related_name="+")
    keep = models.BooleanField(help_text="Whether the category applies to the line.")
    settled_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, on_delete=models.SET_NULL, related_name="+"
    )
    settled_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["transcript_id", "line", "node_id"]
        constraints = [
            models.UniqueConstraint(
                fields=["transcript", "line", "node"], name="settled_code_unique"
            )
        ]

    def __str__(self) -> str:
        return f"{self.transcript_id} line {self.line} {self.node_id}: {self.keep}"
