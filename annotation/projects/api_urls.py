"""API routes of the project feature: projects (list/create, settings, archive), members and
invitations, label-file imports, item imports (a JSON/JSONL file of issues), and a URL list's or a
source's issues as items."""

from django.urls import path

from annotation.projects import api, setup_api

urlpatterns = [
    path("projects/", setup_api.ProjectListApi.as_view(), name="api-projects"),
    path("projects/<slug:slug>/", setup_api.ProjectDetailApi.as_view(), name="api-project"),
    path(
        "projects/<slug:slug>/archive/",
        setup_api.ProjectArchiveApi.as_view(),
        name="api-project-archive",
    ),
    path(
        "projects/<slug:slug>/members/", setup_api.ProjectMembersApi.as_view(), name="api-members"
    ),
    path(
        "projects/<slug:slug>/members/<int:pk>/",
        setup_api.ProjectMemberApi.as_view(),
        name="api-member",
    ),
    path(
        "projects/<slug:slug>/invitations/",
        setup_api.ProjectInvitationsApi.as_view(),
        name="api-invitations",
    ),
    path(
        "projects/<slug:slug>/label-files/",
        setup_api.LabelImportsApi.as_view(),
        name="api-label-imports",
    ),
    path(
        "projects/<slug:slug>/label-files/<int:pk>/",
        setup_api.LabelImportApi.as_view(),
        name="api-label-import",
    ),
    path(
        "projects/<slug:slug>/item-imports/",
        api.ProjectItemImportsApi.as_view(),
        name="api-item-imports",
    ),
    path(
        "projects/<slug:slug>/item-imports/<int:pk>/",
        api.ProjectItemImportApi.as_view(),
        name="api-item-import",
    ),
    path(
        "projects/<slug:slug>/items/from-url-list/",
        api.ProjectItemsFromUrlListApi.as_view(),
        name="api-items-from-url-list",
    ),
    path(
        "projects/<slug:slug>/items/from-source/",
        api.ProjectItemsFromSourceApi.as_view(),
        name="api-items-from-source",
    ),
]
