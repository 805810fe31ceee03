from django.urls import path
from rest_framework.routers import SimpleRouter

from ingest.api.views import HarvestRunViewSet, KeywordSetViewSet, SourceViewSet, UrlListImportApi

router = SimpleRouter()
router.register("sources", SourceViewSet, basename="source")
router.register("harvest-runs", HarvestRunViewSet, basename="harvest-run")
router.register("keyword-sets", KeywordSetViewSet, basename="keyword-set")
urlpatterns = [
    path("url-lists/", UrlListImportApi.as_view(), name="api-url-lists"),
    *router.urls,
]
