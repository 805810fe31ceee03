"""URLs of the project pages: my projects, a project's overview, adding items from a source,
creating a project, its settings and archiving it."""

from django.urls import path

from annotation.projects import label_import_views, member_views, taxonomy_views, views

urlpatterns = [
    path("", views.home, name="home"),
    path("new-project/", views.project_create_page, name="project-create"),
    path("projects/<slug:slug>/settings/", views.project_edit_page, name="project-edit"),
    path("projects/<slug:slug>/archive/", views.project_archive_page, name="project-archive"),
    path(
        "projects/<slug:slug>/members/", member_views.project_members_page, name="project-members"
    ),
    path(
        "projects/<slug:slug>/members/invite/", member_views.project_invite, name="project-invite"
    ),
    path(
        "projects/<slug:slug>/members/<int:pk>/",
        member_views.project_member_change,
        name="project-member-change",
    ),
    path("join/<str:token>/", member_views.join, name="join"),
    path("taxonomy-admin/upload/", taxonomy_views.taxonomy_upload_page, name="taxonomy-upload"),
    path(
        "taxonomy-admin/nodes/<int:pk>/", taxonomy_views.node_edit_page, name="taxonomy-node-edit"
    ),
    path(
        "taxonomy-admin/nodes/<int:pk>/retire/",
        taxonomy_views.node_retire_page,
        name="taxonomy-node-retire",
    ),
    path(
        "projects/<slug:slug>/label-files/",
        label_import_views.project_label_imports_page,
        name="project-label-imports",
    ),
    path(
        "projects/<slug:slug>/label-files/<int:pk>/",
        label_import_views.project_label_import_page,
        name="project-label-import",
    ),
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
