from django import forms
from django.core.validators import MinValueValidator

from annotation.models import Project
from annotation.projects.settings import SETTINGS_FIELDS
from ingest.models import Source
from taxonomy.models import Taxonomy

ALL, CANDIDATES = "all", "candidates"


class ItemsFromSourceForm(forms.Form):
    source = forms.ModelChoiceField(
        queryset=Source.objects.select_related("keyword_set").order_by("host", "owner", "repo"),
        empty_label=None,
        help_text="A harvested tracker; pull requests are never added.",
    )
    which = forms.ChoiceField(
        label="Which issues",
        choices=[
            (ALL, "All of the source's issues"),
            (CANDIDATES, "Only keyword candidates (issues matching the source's keyword set)"),
        ],
        initial=ALL,
        widget=forms.RadioSelect,
    )


class ProjectForm(forms.ModelForm):
    """A project's settings (annotation.projects.settings.SETTINGS_FIELDS)."""

    taxonomy = forms.ModelChoiceField(
        queryset=Taxonomy.objects.order_by("name", "version"),
        empty_label=None,
        help_text="A loaded taxonomy; it cannot change once the project has labels.",
    )

    class Meta:
        model = Project
        fields = list(SETTINGS_FIELDS)
        labels = {"overlap_k": "Labels per item (k)", "quota_per_volunteer": "Quota per volunteer"}
        widgets = {"guidelines": forms.Textarea(attrs={"rows": 10})}

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        k = self.fields["overlap_k"]
        k.validators.append(MinValueValidator(1))  # named beside the field, not as a constraint
        k.widget.attrs["min"] = 1
