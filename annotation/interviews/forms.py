"""Forms of the interview pages: the import upload, mapping an unresolved code, quote filters."""

from __future__ import annotations

from django import forms
from django.utils.translation import gettext_lazy as _

from taxonomy.interviews.models import ParticipantKind


class InterviewFilesForm(forms.Form):
    codebook = forms.FileField(
        label=_("Codebook (CSV)"),
        help_text=_(
            "Participant, Type, Experience Level, Framework Context, Prompt Category, Thematic "
            "Quote, Linked Taxonomy Node(s), Research Insight; UTF-8."
        ),
        widget=forms.ClearableFileInput(attrs={"accept": ".csv,text/csv"}),
    )
    background = forms.FileField(
        label=_("Interviewee background (.xlsx)"),
        required=False,
        help_text=_("Optional: Roles, Gender, Experience Years, Responsibilities."),
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
