from django import forms
from django.utils.translation import gettext_lazy as _

from ingest.models import Source

ALL, CANDIDATES = "all", "candidates"


class ItemsFromSourceForm(forms.Form):
    source = forms.ModelChoiceField(
        queryset=Source.objects.select_related("keyword_set").order_by("host", "owner", "repo"),
        empty_label=None,
        label=_("Source"),
        help_text=_("A harvested tracker; pull requests are never added."),
    )
    which = forms.ChoiceField(
        label=_("Which issues"),
        choices=[
            (ALL, _("All of the source's issues")),
            (CANDIDATES, _("Only keyword candidates (issues matching the source's keyword set)")),
        ],
        initial=ALL,
        widget=forms.RadioSelect,
    )
