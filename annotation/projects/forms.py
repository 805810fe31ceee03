from django import forms
from django.utils.translation import gettext_lazy as _

from ingest.forms import uploaded_text
from ingest.models import KeywordSet, Source

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


class ItemsFromUrlListForm(forms.Form):
    file = forms.FileField(
        label="URL list",
        help_text="One GitHub or Gitee issue URL per line, like the study's issue-lists/*.txt. "
        "Blank lines and lines starting with # are skipped.",
    )
    keyword_set = forms.ModelChoiceField(
        queryset=KeywordSet.objects.order_by("name"),
        required=False,
        empty_label="All of the list's issues",
        label="Which issues",
        help_text="Or only the candidates of a keyword set: issues whose title or body contains "
        "one of its keywords. Issues whose details are still being fetched are judged when the "
        "list is added again.",
    )

    def clean_file(self) -> tuple[str, str]:
        upload = self.cleaned_data["file"]
        return upload.name, uploaded_text(upload)
