"""API of the Reports section (leads and admins): the agreement dashboard, the confusion counts and
the distribution of final labels, as the pages show them (annotation.reporting.reports); and the
project's agreement report (annotation.reporting.agreement)."""

from __future__ import annotations

from drf_spectacular.utils import extend_schema
from rest_framework import serializers
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from annotation.access import access_project
from annotation.api_input import validated
from annotation.models import Role
from annotation.reporting.agreement import project_agreement
from annotation.reporting.reports import project_confusion, project_dashboard, project_distribution
from annotation.reporting.serializers import AgreementQuery, AgreementReportOut
from taxonomy.models import Level


class CellOut(serializers.Serializer):
    group = serializers.CharField()
    level = serializers.CharField()
    n_items = serializers.IntegerField(help_text="Items with a rating at this level.")
    kappa = serializers.FloatField(allow_null=True, help_text="Fleiss' kappa.")
    se = serializers.FloatField(allow_null=True)
    ci_low = serializers.FloatField(allow_null=True, help_text="95% confidence interval.")
    ci_high = serializers.FloatField(allow_null=True)
    band = serializers.CharField(allow_null=True, help_text="Landis & Koch band of kappa.")
    ratings = serializers.IntegerField(
        allow_null=True, help_text="Ratings per item in Fleiss' kappa."
    )
    fleiss_items = serializers.IntegerField(help_text="Items in Fleiss' kappa.")
    left_out = serializers.IntegerField(help_text="Rated items left out of Fleiss' kappa.")
    left_out_why = serializers.CharField(help_text="Why, e.g. '312 items have fewer than 7'.")
    alpha = serializers.FloatField(
        source="alpha_value", allow_null=True, help_text="Krippendorff's alpha, nominal."
    )
    alpha_band = serializers.CharField(allow_null=True)
    problem = serializers.CharField(allow_null=True, help_text="Why kappa is missing.")


class WeekOut(serializers.Serializer):
    week = serializers.CharField(help_text="ISO week of the items' k-th label, e.g. 2025-W07.")
    start = serializers.DateField(help_text="Its Monday (UTC).")
    n_items = serializers.IntegerField(help_text="Items whose k-th label fell in the week.")
    cells = CellOut(source="cell_list", many=True, help_text="One per level.")


class DashboardOut(serializers.Serializer):
    k = serializers.IntegerField(help_text="Labels wanted per item (the project's overlap).")
    levels = serializers.ListField(child=serializers.CharField())
    labels = serializers.IntegerField(help_text="Non-pilot labels counted.")
    by_type = CellOut(many=True, help_text="All items, then per final label's type; per level.")
    by_repository = CellOut(many=True)
    by_week = WeekOut(many=True)


class CategoryOut(serializers.Serializer):
    code = serializers.CharField()
    name = serializers.CharField()
    items = serializers.IntegerField(help_text="Items with a label in this category.")


class PairOut(serializers.Serializer):
    a = serializers.CharField(source="a.code")
    b = serializers.CharField(source="b.code")
    items = serializers.IntegerField(help_text="Items labelled both a and b.")


class ConfusionOut(serializers.Serializer):
    level = serializers.CharField()
    n_items = serializers.IntegerField()
    n_mixed = serializers.IntegerField(help_text="Items with labels in two categories or more.")
    categories = CategoryOut(many=True)
    counts = serializers.ListField(
        child=serializers.ListField(child=serializers.IntegerField()),
        help_text="Symmetric, in the order of `categories`; the diagonal is `items`.",
    )
    pairs = PairOut(many=True, help_text="Most shared first.")


class ConfusionQuery(serializers.Serializer):
    level = serializers.ChoiceField(choices=Level.choices, default=Level.THEME)


class TallyOut(serializers.Serializer):
    code = serializers.CharField()
    name = serializers.CharField()
    items = serializers.IntegerField()


class RepositoryOut(serializers.Serializer):
    repository = serializers.CharField()
    total = serializers.IntegerField()
    by_type = serializers.DictField(child=serializers.IntegerField())


class DistributionOut(serializers.Serializer):
    total = serializers.IntegerField()
    by_type = TallyOut(many=True)
    by_theme = TallyOut(many=True)
    by_repository = RepositoryOut(many=True)
    merged_repeats = serializers.DictField(
        child=serializers.IntegerField(),
        help_text="Per repository, study-file rows repeating an issue URL merged at import.",
    )


class ReportAgreementApi(APIView):
    """Fleiss' kappa with its 95% CI (and Krippendorff's alpha) per final type x level, per
    repository x level and per ISO week x level. For leads and admins."""

    @extend_schema(responses=DashboardOut)
    def get(self, request: Request, slug: str) -> Response:
        project = access_project(request.user, slug, at_least=Role.LEAD)
        dashboard = project_dashboard(project)
        data = {
            "k": dashboard.k,
            "levels": list(dashboard.levels),
            "labels": dashboard.labels,
            "by_type": [c for row in dashboard.by_type for c in row.values()],
            "by_repository": [c for row in dashboard.by_repository for c in row.values()],
            "by_week": dashboard.by_week,
        }
        return Response(DashboardOut(data).data)


class ReportConfusionApi(APIView):
    """Items carrying labels in two different categories, per pair of categories at `level`.
    For leads and admins."""

    @extend_schema(parameters=[ConfusionQuery], responses=ConfusionOut)
    def get(self, request: Request, slug: str) -> Response:
        project = access_project(request.user, slug, at_least=Role.LEAD)
        level = validated(ConfusionQuery, request.query_params)["level"]
        confusion = project_confusion(project, level=level)
        return Response(ConfusionOut(confusion).data)


class ReportDistributionApi(APIView):
    """Final labels per type, per theme and per repository x type. For leads and admins."""

    @extend_schema(responses=DistributionOut)
    def get(self, request: Request, slug: str) -> Response:
        project = access_project(request.user, slug, at_least=Role.LEAD)
        return Response(DistributionOut(project_distribution(project)).data)


class ProjectAgreementApi(APIView):
    """Fleiss' kappa and Krippendorff's alpha of a project, overall and per group: the same
    figures as the Reports dashboard (Fleiss on the items with `ratings` labels, `left_out` others
    counted with the reason in `left_out_why`; alpha on every item with two labels or more).

    For leads and admins."""

    @extend_schema(parameters=[AgreementQuery], responses=AgreementReportOut)
    def get(self, request: Request, slug: str) -> Response:
        project = access_project(request.user, slug, at_least=Role.LEAD)
        report = project_agreement(project, **validated(AgreementQuery, request.query_params))
        return Response(AgreementReportOut(report).data)
