from django.urls import path

from ingest import views

urlpatterns = [
    path("", views.source_list, name="ingest-sources"),
    path("sources/new/", views.source_create_page, name="ingest-source-create"),
    path("sources/<int:pk>/", views.source_detail, name="ingest-source-detail"),
    path("sources/<int:pk>/harvest/", views.source_harvest, name="ingest-source-harvest"),
    path("runs/<int:pk>/", views.run_detail, name="ingest-run-detail"),
    path("runs/<int:pk>/cancel/", views.run_cancel, name="ingest-run-cancel"),
    path("keyword-sets/", views.keyword_set_list, name="ingest-keyword-sets"),
    path("keyword-sets/new/", views.keyword_set_edit, name="ingest-keyword-set-create"),
    path("keyword-sets/<int:pk>/", views.keyword_set_edit, name="ingest-keyword-set-edit"),
    path(
        "keyword-sets/<int:pk>/preview/",
        views.keyword_set_preview,
        name="ingest-keyword-set-preview",
    ),
    path("url-lists/", views.url_list_upload, name="ingest-url-lists"),
]
