from django import forms
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy

from concord.errors import ConcordError, RowError, utf8_text
from ingest.keywords import unique_keywords
from ingest.models import Host, KeywordSet, time_zone_choices
from ingest.sources import repository_check, repository_parse

MAX_UPLOAD_BYTES = 5 * 1024 * 1024  # the study's largest list is ~60 kB


def uploaded_text(upload) -> str:
    """An uploaded file as text, or a form error saying why not."""
    if upload.size > MAX_UPLOAD_BYTES:
        raise forms.ValidationError(
            _("%(name)s is %(size)d kB; the limit is %(limit)d MB.")
            % {
                "name": upload.name,
                "size": upload.size // 1024,
                "limit": MAX_UPLOAD_BYTES // (1024 * 1024),
            }
        )
    try:
        return utf8_text(upload.read(), upload.name)
    except RowError as exc:
        raise forms.ValidationError(str(exc)) from exc


HOST_ZONE_CHOICE = ("", gettext_lazy("The host's own: UTC for GitHub, Asia/Shanghai for Gitee"))


class SourceForm(forms.Form):
    host = forms.ChoiceField(label=gettext_lazy("Host"), choices=Host.choices)
    repository = forms.CharField(
        max_length=201,
        label=gettext_lazy("Repository"),
        help_text=gettext_lazy("owner/repo, as in the tracker's address, e.g. NVIDIA/Megatron-LM."),
        widget=forms.TextInput(attrs={"placeholder": "owner/repo", "spellcheck": "false"}),
    )
    created_from = forms.DateField(
        label=gettext_lazy("Created from"),
        help_text=gettext_lazy(
            "First creation date to harvest (inclusive, a day in the time zone below)."
        ),
        widget=forms.DateInput(attrs={"type": "date"}),
    )
    created_until = forms.DateField(
        label=gettext_lazy("Created until"),
        help_text=gettext_lazy(
            "Last creation date to harvest (inclusive, a day in the time zone below)."
        ),
        widget=forms.DateInput(attrs={"type": "date"}),
    )
    time_zone = forms.ChoiceField(
        required=False,
        choices=[HOST_ZONE_CHOICE],
        label=gettext_lazy("Time zone"),
        help_text=gettext_lazy(
            "Whose days the window's dates are. Gitee shows dates in Asia/Shanghai, eight "
            "hours ahead of UTC: a window read in UTC would start and end 8 hours off."
        ),
    )
    token = forms.CharField(
        required=False,
        max_length=200,
        label=gettext_lazy("Token"),
        help_text=gettext_lazy(
            "Optional API token for this source; empty uses the server's GITHUB_TOKEN / "
            "GITEE_TOKEN. It is stored, never shown again."
        ),
        widget=forms.PasswordInput(render_value=False, attrs={"autocomplete": "new-password"}),
    )
    keyword_set = forms.ModelChoiceField(
        queryset=KeywordSet.objects.order_by("name"),
        required=False,
        label=gettext_lazy("Keyword set"),
        empty_label=gettext_lazy("None: every issue is a candidate"),
        help_text=gettext_lazy("Issues containing one of its keywords become candidates."),
    )

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        field = self.fields["time_zone"]
        assert isinstance(field, forms.ChoiceField)  # noqa: S101 - declared just above
        field.choices = [HOST_ZONE_CHOICE, *time_zone_choices()]

    def clean_repository(self) -> tuple[str, str]:
        """(owner, repo), names the chosen host allows (they become API request paths)."""
        try:
            owner, repo = repository_parse(self.cleaned_data["repository"])
            host = self.cleaned_data.get("host")  # cleaned first: declared first
            if host:
                repository_check(host, owner, repo)
        except ConcordError as exc:
            raise forms.ValidationError(exc.message) from exc
        return owner, repo

    def clean(self) -> dict:
        super().clean()
        data = self.cleaned_data
        start, end = data.get("created_from"), data.get("created_until")
        if start and end and start > end:
            self.add_error(
                "created_until",
                _("The window must not end before it starts (%(start)s).") % {"start": start},
            )
        return data


class KeywordSetForm(forms.Form):
    name = forms.CharField(
        max_length=100, label=gettext_lazy("Name"), help_text=gettext_lazy("e.g. pytorch.")
    )
    description = forms.CharField(
        required=False,
        label=gettext_lazy("Description"),
        widget=forms.Textarea(attrs={"rows": 2}),
    )
    keywords = forms.CharField(
        required=False,  # clean_keywords says what is missing
        label=gettext_lazy("Keywords"),
        widget=forms.Textarea(attrs={"rows": 14, "spellcheck": "false"}),
        help_text=gettext_lazy(
            "One keyword or phrase per line; case does not matter, repeats are dropped."
        ),
    )

    def __init__(self, *args, keyword_set: KeywordSet | None = None, **kwargs) -> None:
        self.keyword_set = keyword_set
        if keyword_set is not None:
            kwargs.setdefault(
                "initial",
                {
                    "name": keyword_set.name,
                    "description": keyword_set.description,
                    "keywords": "\n".join(keyword_set.keywords),
                },
            )
        super().__init__(*args, **kwargs)

    def clean_name(self) -> str:
        name = self.cleaned_data["name"].strip()
        taken = KeywordSet.objects.filter(name=name)
        if self.keyword_set is not None:
            taken = taken.exclude(pk=self.keyword_set.pk)
        if taken.exists():
            raise forms.ValidationError(
                _("There is already a keyword set named %(name)s.") % {"name": repr(name)}
            )
        return name

    def clean_keywords(self) -> list[str]:
        keywords = unique_keywords(self.cleaned_data["keywords"].splitlines())
        if not keywords:
            raise forms.ValidationError(_("Give at least one keyword."))
        return keywords


class KeywordFileForm(forms.Form):
    file = forms.FileField(
        label=gettext_lazy("filter_keywords file"),
        help_text=gettext_lazy(
            "The study's file: Python lists named <framework>_keywords; one set each."
        ),
    )

    def clean_file(self) -> str:
        return uploaded_text(self.cleaned_data["file"])


class UrlListForm(forms.Form):
    file = forms.FileField(
        label=gettext_lazy("URL list"),
        help_text=gettext_lazy(
            "A text file with one GitHub or Gitee issue URL per line, like the study's "
            "issue-lists/*.txt. Blank lines and lines starting with # are skipped."
        ),
    )

    def clean_file(self) -> tuple[str, str]:
        upload = self.cleaned_data["file"]
        return upload.name, uploaded_text(upload)


class KeywordPreviewForm(forms.Form):
    text = forms.CharField(
        max_length=100_000,
        strip=False,
        label=gettext_lazy("Text to try"),
        help_text=gettext_lazy(
            "Paste an issue's title and body (Chinese, English or both): the page shows "
            "each keyword that matches, where, and why."
        ),
        widget=forms.Textarea(attrs={"rows": 10, "spellcheck": "false"}),
    )
