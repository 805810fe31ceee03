from django import forms
from django.contrib.auth import get_user_model
from django.contrib.auth.forms import UserCreationForm, UsernameField
from django.core.exceptions import ValidationError
from django.core.validators import MinValueValidator
from django.utils.translation import gettext_lazy as _

from annotation.models import Project, Role
from annotation.projects.members import INVITATION_MAX_DAYS
from annotation.projects.settings import SETTINGS_FIELDS
from concord.usernames import username_looks_taken
from ingest.forms import uploaded_text
from ingest.models import KeywordSet, Source
from taxonomy.models import Taxonomy

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
        label=_("URL list"),
        help_text=_(
            "One GitHub or Gitee issue URL per line, like the study's issue-lists/*.txt. "
            "Blank lines and lines starting with # are skipped."
        ),
    )
    keyword_set = forms.ModelChoiceField(
        queryset=KeywordSet.objects.order_by("name"),
        required=False,
        empty_label=_("All of the list's issues"),
        label=_("Which issues"),
        help_text=_(
            "Or only the candidates of a keyword set: issues whose title or body contains "
            "one of its keywords. Issues whose details are still being fetched are judged when "
            "the list is added again."
        ),
    )

    def clean_file(self) -> tuple[str, str]:
        upload = self.cleaned_data["file"]
        return upload.name, uploaded_text(upload)


class ProjectForm(forms.ModelForm):
    """A project's settings (annotation.projects.settings.SETTINGS_FIELDS)."""

    taxonomy = forms.ModelChoiceField(
        queryset=Taxonomy.objects.order_by("name", "version"),
        empty_label=None,
        label=_("Taxonomy"),
        help_text=_(
            "A loaded taxonomy (upload a new one under Taxonomy → Upload a new version); "
            "it cannot change once the project has labels."
        ),
    )

    class Meta:
        model = Project
        fields = list(SETTINGS_FIELDS)
        # The page's words, in the reader's language (the model's help_text is for developers).
        labels = {
            "name": _("Name"),
            "slug": _("Slug"),
            "overlap_k": _("Labels per item (k)"),
            "label_depth": _("Label depth"),
            "screening_enabled": _("Screening enabled"),
            "screening_votes": _("Screening votes"),
            "screening_rule": _("Screening rule"),
            "reservation_minutes": _("Reservation minutes"),
            "quota_per_volunteer": _("Quota per volunteer"),
            "reveal_after_cross_check": _("Reveal after cross-check"),
            "guidelines": _("Guidelines"),
        }
        help_texts = {
            "slug": _("Short id used in URLs and commands (letters, digits, - and _)."),
            "overlap_k": _("Independent labels wanted per item before cross-check."),
            "label_depth": _("How deep volunteers label: type, theme or sub-theme."),
            "screening_enabled": _("Screen candidates first."),
            "screening_votes": _("Screening votes wanted per candidate."),
            "reservation_minutes": _(
                "How long an item handed to a volunteer stays reserved for them."
            ),
            "quota_per_volunteer": _("Most labels one volunteer may give; empty: no limit."),
            "reveal_after_cross_check": _(
                "Volunteers may see the others' labels and discuss once an item has k labels."
            ),
            "guidelines": _("Markdown shown to volunteers."),
        }
        widgets = {"guidelines": forms.Textarea(attrs={"rows": 10})}

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        k = self.fields["overlap_k"]
        k.validators.append(MinValueValidator(1))  # named beside the field, not as a constraint
        k.widget.attrs["min"] = 1


ROLE_CHOICES = Role.choices


class InvitationForm(forms.Form):
    role = forms.ChoiceField(label=_("Role"), choices=ROLE_CHOICES, initial=Role.VOLUNTEER)
    days = forms.IntegerField(
        label=_("Valid for (days)"), min_value=1, max_value=INVITATION_MAX_DAYS, initial=7
    )

    def __init__(self, *args, **kwargs):
        # The members page shows this form above MemberListForm, which has a `role` too: ids of
        # its own (id_invite_role), so each label names its own field.
        kwargs.setdefault("auto_id", "id_invite_%s")
        super().__init__(*args, **kwargs)


class MemberListForm(forms.Form):
    people = forms.CharField(
        label=_("Usernames or e-mail addresses, one a line"),
        required=False,
        widget=forms.Textarea(attrs={"rows": 6}),
    )
    file = forms.FileField(
        label=_("…or a text file of them"), required=False, help_text=_("UTF-8, one a line.")
    )
    role = forms.ChoiceField(label=_("Role"), choices=ROLE_CHOICES, initial=Role.VOLUNTEER)

    def clean(self):
        data = super().clean() or {}
        if not (data.get("people") or "").strip() and not data.get("file"):
            raise forms.ValidationError(_("Paste a list or choose a file."))
        return data


class MemberForm(forms.Form):
    """One member's role and LabelJ column; `remove` ends the membership."""

    role = forms.ChoiceField(label=_("Role"), choices=ROLE_CHOICES)
    column = forms.IntegerField(label=_("Label column"), required=False, min_value=1, max_value=999)
    action = forms.ChoiceField(choices=[("save", _("Save")), ("remove", _("Remove"))])


class SignUpForm(UserCreationForm):
    """Django's sign-up form (username, password twice, the password validators), plus e-mail
    for password resets. A name that looks like an account's name is refused, like a taken one:
    the refusal tells no more than Django's "already exists" does, and not which account."""

    class Meta:
        model = get_user_model()
        fields = ("username", "email")
        field_classes = {"username": UsernameField}

    def clean_username(self):
        username = super().clean_username()  # None when the name is taken (ignoring case)
        if username and username_looks_taken(username):
            # in a taken name's words: whether the name is taken or only looks like one that
            # is, is no more than Django's own refusal tells
            taken = get_user_model()._meta.get_field("username").error_messages["unique"]
            raise ValidationError(taken, code="unique")
        return username


class MultipleFileInput(forms.ClearableFileInput):
    allow_multiple_selected = True


class MultipleFileField(forms.FileField):
    """One or more files; cleans to a list."""

    def __init__(self, *args, **kwargs):
        kwargs.setdefault("widget", MultipleFileInput(attrs={"accept": ".csv,text/csv"}))
        super().__init__(*args, **kwargs)

    def clean(self, data, initial=None):
        if isinstance(data, list | tuple):
            return [super(MultipleFileField, self).clean(d, initial) for d in data]
        return [super().clean(data, initial)]


class LabelFilesForm(forms.Form):
    label_files = MultipleFileField(
        label=_("Study label files"),
        help_text=_(
            "Columns Issue_URL, Label1..LabelN, Final_Label (or Issue_URL alone: the items "
            "without labels); UTF-8. Each file is all-or-nothing."
        ),
    )
    refuse_repeats = forms.BooleanField(
        label=_("Refuse a file that repeats an Issue_URL"),
        required=False,
        help_text=_("Otherwise the first row is kept and each repeat is skipped and reported."),
    )


class TaxonomyUploadForm(forms.Form):
    name = forms.CharField(
        label=_("Name"), max_length=200, help_text=_("For example: LLM challenges")
    )
    version = forms.CharField(
        label=_("Version"), max_length=50, help_text=_("A version not used yet for this name.")
    )
    tree = forms.FileField(
        label=_("Taxonomy CSV"),
        help_text=_("The tree, a row per category (its columns are below)."),
    )
    details = MultipleFileField(
        label=_("Detail files"),
        required=False,
        help_text=_("Optional: the study's details of each sub-theme (columns below)."),
    )


class NodeEditForm(forms.Form):
    definition = forms.CharField(
        label=_("Definition"), required=False, widget=forms.Textarea(attrs={"rows": 4})
    )
    name_zh = forms.CharField(
        label=_("Chinese name"),
        required=False,
        max_length=300,
        help_text=_("Shown beside the English name in the Chinese interface; searched in both."),
    )
    definition_zh = forms.CharField(
        label=_("Chinese definition"), required=False, widget=forms.Textarea(attrs={"rows": 3})
    )
    examples = forms.CharField(
        label=_("Examples"),
        required=False,
        widget=forms.Textarea(attrs={"rows": 8}),
        help_text=_("One example a line."),
    )
