from rest_framework.routers import DefaultRouter

from taxonomy.api.views import NodeViewSet, TaxonomyViewSet

router = DefaultRouter()
router.register("taxonomies", TaxonomyViewSet, basename="api-taxonomy")  # pages own "taxonomy-*"
router.register("nodes", NodeViewSet, basename="node")
urlpatterns = router.urls
