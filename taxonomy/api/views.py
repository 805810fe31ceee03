from drf_spectacular.utils import extend_schema
from rest_framework import viewsets
from rest_framework.decorators import action
from rest_framework.response import Response

from concord.input_checks import id_param
from taxonomy.api.serializers import NodeOut, TaxonomyOut, TreeNodeOut
from taxonomy.models import Node, Taxonomy
from taxonomy.selectors import taxonomy_tree


class TaxonomyViewSet(viewsets.ReadOnlyModelViewSet):
    """Taxonomies are readable by every signed-in user: volunteers label with them."""

    queryset = Taxonomy.objects.order_by("name", "version")
    serializer_class = TaxonomyOut

    @extend_schema(responses=TreeNodeOut(many=True))
    @action(detail=True, pagination_class=None)
    def tree(self, request, pk=None):
        return Response(TreeNodeOut(taxonomy_tree(self.get_object()), many=True).data)


class NodeViewSet(viewsets.ReadOnlyModelViewSet):
    queryset = (
        Node.objects.select_related("parent")
        .prefetch_related("examples")
        .order_by("taxonomy", "position")
    )
    serializer_class = NodeOut

    def get_queryset(self):
        queryset = super().get_queryset()
        taxonomy = id_param(self.request.query_params.get("taxonomy"), "taxonomy")
        return queryset if taxonomy is None else queryset.filter(taxonomy_id=taxonomy)
