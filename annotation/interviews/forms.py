"""Forms of the interview pages: the import upload, mapping an unresolved code, quote filters."""

from __future__ import annotations

from typing import cast

from django import forms
from django.utils.translation import gettext_lazy as _

from taxonomy.interviews.models import TOP, Participant, ParticipantKind


class InterviewFilesForm(forms.Form):
    codebook = forms.FileField(
        label=_("Codebook (CSV)"),
        help_text=_("UTF-8; the columns are named below."),
        widget=forms.ClearableFileInput(attrs={"accept": ".csv,text/csv"}),
    )
    background = forms.FileField(
        label=_("Interviewee background (.xlsx)"),
        required=False,
        help_text=_("Optional: each participant's role, gender, years of experience and duties."),
        widget=forms.ClearableFileInput(attrs={"accept": ".xlsx"}),
    )
    guideline = forms.FileField(
        label=_("Interview guideline (Markdown)"),
        required=False,
        widget=forms.ClearableFileInput(attrs={"accept": ".md,.txt,text/markdown,text/plain"}),
    )


class CodeMapForm(forms.Form):
    code = forms.CharField(max_length=30, widget=forms.HiddenInput)
    node = forms.CharField(
        label=_("Category"), max_length=30, help_text=_("A code of this project, e.g. C.10.")
    )


KIND_CHOICES = [("", _("Users and developers")), *ParticipantKind.choices]


class QuoteFilterForm(forms.Form):
    q = forms.CharField(label=_("Words"), required=False, max_length=200)
    node = forms.CharField(label=_("Category code"), required=False, max_length=30)
    kind = forms.ChoiceField(label=_("Participants"), required=False, choices=KIND_CHOICES)
    framework = forms.CharField(
        label=_("Framework"),
        required=False,
        max_length=200,
        widget=forms.TextInput(attrs={"list": "frameworks"}),
    )


class RankingForm(forms.Form):
    """Top 3 categories per issue type: one choice per place, blank allowed. Built from the
    project's types and themes (annotation.interviews.priorities.ranking_choices)."""

    def __init__(self, *args, choices, initial_ranking=None, **kwargs):
        super().__init__(*args, **kwargs)
        initial_ranking = initial_ranking or {}
        self.types = []
        for group in choices:
            options = [("", "—"), *((t.code, f"{t.code} {t.shown_name}") for t in group.themes)]
            names = []
            for position in range(1, TOP + 1):
                name = f"rank-{group.type.code}-{position}"
                ranked = initial_ranking.get(group.type.code, [])
                self.fields[name] = forms.ChoiceField(
                    label=_("%(type)s, place %(n)d")
                    % {"type": group.type.shown_name, "n": position},
                    choices=options,
                    required=False,
                    initial=ranked[position - 1] if position <= len(ranked) else "",
                )
                names.append(name)
            self.types.append((group.type, [self[n] for n in names]))

    def ranking(self) -> dict[str, list[str]]:
        """type code -> the chosen theme codes, best first (blank places left out)."""
        out: dict[str, list[str]] = {}
        for type_node, bound in self.types:
            out[type_node.code] = [
                self.cleaned_data[b.name] for b in bound if self.cleaned_data[b.name]
            ]
        return out


class RankingsFileForm(forms.Form):
    rankings = forms.FileField(
        label=_("Rankings (CSV)"),
        help_text=_("Each participant's top 3 categories per issue type; the columns are above."),
        widget=forms.ClearableFileInput(attrs={"accept": ".csv,text/csv"}),
    )


class TranscriptForm(forms.Form):
    transcript = forms.FileField(
        label=_("Transcript"),
        help_text=_("A .txt, .md (UTF-8) or .docx file; one turn to a line."),
        widget=forms.ClearableFileInput(attrs={"accept": ".txt,.md,.markdown,.docx"}),
    )
    participant = forms.ModelChoiceField(
        label=_("Participant"),
        queryset=Participant.objects.none(),
        required=False,
        empty_label="—",
    )

    def __init__(self, *args, participants, **kwargs):
        super().__init__(*args, **kwargs)
        cast(forms.ModelChoiceField, self.fields["participant"]).queryset = participants


class PassageForm(forms.Form):
    """A selected passage (character offsets, filled in by the page's script from the
    selection or the focused line) and the category it is coded with."""

    start = forms.IntegerField(min_value=0, max_value=10**7, widget=forms.HiddenInput)
    end = forms.IntegerField(min_value=1, max_value=10**7, widget=forms.HiddenInput)
    node_code = forms.CharField(
        label=_("Category"),
        max_length=30,
        widget=forms.TextInput(attrs={"list": "coding-categories", "autocomplete": "off"}),
    )
    note = forms.CharField(
        label=_("Note"), required=False, max_length=2000, widget=forms.TextInput()
    )


class UncodeForm(forms.Form):
    passage = forms.IntegerField(min_value=1, max_value=2**31 - 1, widget=forms.HiddenInput)


class SettleForm(forms.Form):
    """A lead's word on a disagreement: does the category apply to the line?"""

    line = forms.IntegerField(min_value=1, max_value=10**7, widget=forms.HiddenInput)
    node_code = forms.CharField(max_length=30, widget=forms.HiddenInput)
    keep = forms.TypedChoiceField(
        choices=[("1", _("Keep")), ("0", _("Drop"))], coerce=lambda v: v == "1"
    )


class CoderAssignForm(forms.Form):
    username = forms.CharField(label=_("Member"), max_length=150)
