from rest_framework import serializers

from annotation.selectors import GROUPINGS
from taxonomy.models import Level


def validated(serializer_class, data) -> dict:
    """`data` checked by `serializer_class`; a bad field is a 400 in the API's error shape."""
    serializer = serializer_class(data=data)
    serializer.is_valid(raise_exception=True)
    return serializer.validated_data


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
    group = serializers.CharField()
    n_items = serializers.IntegerField()
    fleiss = FleissOut(allow_null=True)
    alpha = AlphaOut(allow_null=True)
    problem = serializers.CharField(allow_null=True)


class AgreementReportOut(serializers.Serializer):
    level = serializers.CharField()
    by = serializers.CharField()
    groups = GroupAgreementOut(many=True)
