from django import forms

from ingest.models import Source

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
