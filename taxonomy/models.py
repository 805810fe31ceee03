"""What labels exist: a taxonomy is a tree of type -> theme -> sub-theme nodes.

Nodes are retired, never deleted or renumbered, so a label given before a taxonomy change still
points at the node the volunteer chose.
"""

from django.db import models
from django.utils import translation
from django.utils.translation import gettext_lazy as _


def reading_chinese() -> bool:
    """Whether the active interface language is Chinese (zh-hans)."""
    return (translation.get_language() or "").lower().startswith("zh")


def bilingual_name(name: str, name_zh: str) -> str:
    """The name a reader sees: in the Chinese interface the Chinese name with the English
    beside it (the study's names stay the reference), else the English. For a node, or a
    name and its Chinese read together from the database."""
    if name_zh and reading_chinese():
        return f"{name_zh} · {name}"
    return name


def reader_name(name: str, name_zh: str) -> str:
    """The name where there is room for one only (a chart's labels): the Chinese name in the
    Chinese interface when there is one, else the English; tables beside show bilingual_name."""
    return name_zh if name_zh and reading_chinese() else name


class Level(models.TextChoices):
    TYPE = "type", _("Type")
    THEME = "theme", _("Theme")
    SUBTHEME = "subtheme", _("Sub-theme")

    @classmethod
    def depth_of(cls, level: str) -> int:
        return [c.value for c in cls].index(level) + 1


class ExampleKind(models.TextChoices):
    SYMPTOM = "symptom", _("Symptom")
    INTENT = "intent", _("Intent")
    EXPECTATION = "expectation", _("Expectation")


class Taxonomy(models.Model):
    name = models.CharField(max_length=200, help_text="Human name, e.g. 'LLM challenges'.")
    version = models.CharField(max_length=50, default="1", help_text="Version label of this tree.")
    description = models.TextField(blank=True, help_text="What the taxonomy classifies.")
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        verbose_name_plural = "taxonomies"
        constraints = [
            models.UniqueConstraint(fields=["name", "version"], name="taxonomy_name_version_unique")
        ]

    def __str__(self) -> str:
        return f"{self.name} v{self.version}"


class Node(models.Model):
    taxonomy = models.ForeignKey(Taxonomy, on_delete=models.PROTECT, related_name="nodes")
    level = models.CharField(max_length=10, choices=Level.choices, help_text="Depth in the tree.")
    code = models.CharField(max_length=30, help_text="Stable code such as 'C.1.iii'.")
    name = models.CharField(max_length=300, help_text="Display name (the paper's spelling).")
    study_name = models.CharField(
        max_length=300, blank=True, help_text="How source files spell the name, if different."
    )
    definition = models.TextField(blank=True, help_text="What belongs in this category.")
    # Chinese beside the English (issue #26): shown in the Chinese interface with the English name
    # next to it, searched in both; exports keep the codes and the English names.
    name_zh = models.CharField(max_length=300, blank=True, help_text="Chinese name, if any.")
    definition_zh = models.TextField(blank=True, help_text="Chinese definition, if any.")
    parent = models.ForeignKey(
        "self", null=True, blank=True, on_delete=models.PROTECT, related_name="children"
    )
    position = models.PositiveIntegerField(default=0, help_text="Order among siblings.")
    retired_at = models.DateTimeField(
        null=True,
        blank=True,
        help_text="Set instead of deleting; retired nodes take no new labels.",
    )

    class Meta:
        ordering = ["taxonomy_id", "position"]
        constraints = [
            models.UniqueConstraint(fields=["taxonomy", "code"], name="node_code_unique"),
            models.CheckConstraint(
                condition=models.Q(level="type", parent__isnull=True)
                | (~models.Q(level="type") & models.Q(parent__isnull=False)),
                name="node_parent_matches_level",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.code} {self.name}"

    @property
    def depth(self) -> int:
        return Level.depth_of(self.level)

    @property
    def is_retired(self) -> bool:
        return self.retired_at is not None

    @property
    def shown_name(self) -> str:
        return bilingual_name(self.name, self.name_zh)

    @property
    def shown_definition(self) -> str:
        if self.definition_zh and reading_chinese():
            return self.definition_zh
        return self.definition

    @property
    def other_language_text(self) -> str:
        """The name and definition in the language the reader is not shown, so that a search
        finds a node in both languages (显存 in the English interface, "timeout" in the
        Chinese)."""
        if reading_chinese():
            return f"{self.definition}" if self.name_zh else ""
        return f"{self.name_zh} {self.definition_zh}".strip()


class Example(models.Model):
    """A detail the study's volunteers wrote for a sub-theme: a symptom, intent or expectation."""

    node = models.ForeignKey(Node, on_delete=models.CASCADE, related_name="examples")
    kind = models.CharField(max_length=12, choices=ExampleKind.choices)
    text = models.TextField(help_text="One example, as the study wrote it.")
    position = models.PositiveIntegerField(default=0)

    class Meta:
        ordering = ["node_id", "position"]
        constraints = [
            models.UniqueConstraint(fields=["node", "kind", "text"], name="example_unique")
        ]

    def __str__(self) -> str:
        return self.text[:80]
