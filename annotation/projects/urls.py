"""URLs of the project pages: my projects, a project's overview, adding items from a source."""

from django.urls import path

from annotation.projects import views

urlpatterns = [
    path("", views.home, name="home"),
    path("projects/<slug:slug>/", views.project_detail, name="project-detail"),
    path(
        "projects/<slug:slug>/items/from-source/",
        views.project_items_from_source_page,
        name="project-items-from-source",
    ),
    path(
        "projects/<slug:slug>/items/from-url-list/",
        views.project_items_from_url_list_page,
        name="project-items-from-url-list",
    ),
]
