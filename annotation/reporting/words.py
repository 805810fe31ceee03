"""The reports' words in the reader's language: Landis & Koch band names and level names.

The agreement maths (taxonomy.agreement) names bands in English, and those names are also CSS
classes and keys; only what a person reads goes through these tables."""

from django.utils.translation import gettext, gettext_lazy, pgettext_lazy

from annotation.reporting.agreement import ALL_ITEMS

BAND_NAMES = {
    "poor": pgettext_lazy("kappa band", "poor"),
    "slight": pgettext_lazy("kappa band", "slight"),
    "fair": pgettext_lazy("kappa band", "fair"),
    "moderate": pgettext_lazy("kappa band", "moderate"),
    "substantial": pgettext_lazy("kappa band", "substantial"),
    "almost perfect": pgettext_lazy("kappa band", "almost perfect"),
}
LEVEL_NAMES = {
    "type": gettext_lazy("type"),
    "theme": gettext_lazy("theme"),
    "subtheme": gettext_lazy("sub-theme"),
}


def band_name(band: str) -> str:
    """ "almost perfect" -> its name in the active language (unknown names as they are)."""
    return str(BAND_NAMES.get(band, band))


def group_name(group: str) -> str:
    """A report row's name: "All items" in the reader's language; type names and repositories
    as they are (they are data). The API keeps the untranslated key."""
    return gettext("All items") if group == ALL_ITEMS else group


def level_name(level: str) -> str:
    """ "subtheme" -> "sub-theme", in the active language."""
    return str(LEVEL_NAMES.get(level, level))
