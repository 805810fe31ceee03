"""Input and output shapes of the project agreement API (Fleiss' kappa, Krippendorff's alpha)."""

from rest_framework import serializers

from annotation.reporting.agreement import GROUPINGS
from taxonomy.models import Level


class AgreementQuery(serializers.Serializer):
    level = serializers.ChoiceField(choices=Level.choices, default=Level.THEME)
    by = serializers.ChoiceField(choices=GROUPINGS, default="type")


class FleissOut(serializers.Serializer):
    kappa = serializers.FloatField()
    observed = serializers.FloatField()
    expected = serializers.FloatField()
    se = serializers.FloatField()
    ci_low = serializers.FloatField()
    ci_high = serializers.FloatField()
    n_items = serializers.IntegerField()
    n_raters = serializers.IntegerField()
    band = serializers.CharField()
    per_category = serializers.DictField(child=serializers.FloatField())


class AlphaOut(serializers.Serializer):
    alpha = serializers.FloatField()
    n_items = serializers.IntegerField()
    n_ratings = serializers.IntegerField()
    items_left_out = serializers.IntegerField()
    band = serializers.CharField()


class GroupAgreementOut(serializers.Serializer):
    """One group's agreement_cell (annotation.reporting.agreement), as the Reports dashboard
    computes it: Fleiss' kappa on the items with `ratings` labels, `left_out` items not among
    them for the reason in `left_out_why`, alpha on every item with two labels or more."""

    group = serializers.CharField()
    n_items = serializers.IntegerField(help_text="Items with a rating at this level.")
    fleiss = FleissOut(allow_null=True)
    alpha = AlphaOut(allow_null=True)
    problem = serializers.CharField(allow_null=True, help_text="Why there is no Fleiss' kappa.")
    ratings = serializers.IntegerField(
        allow_null=True, help_text="Ratings per item in Fleiss' kappa."
    )
    left_out = serializers.IntegerField(help_text="Rated items left out of Fleiss' kappa.")
    left_out_why = serializers.CharField(
        allow_blank=True, help_text="Why, e.g. '3 items have fewer than 7 labels at theme level'."
    )


class AgreementReportOut(serializers.Serializer):
    level = serializers.CharField()
    by = serializers.CharField()
    groups = GroupAgreementOut(many=True)
