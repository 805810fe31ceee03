"""API routes of projects: list/create, settings, archive."""

from django.urls import path

from annotation.projects import api as views

urlpatterns = [
    path("projects/", views.ProjectListApi.as_view(), name="api-projects"),
    path("projects/<slug:slug>/", views.ProjectDetailApi.as_view(), name="api-project"),
    path(
        "projects/<slug:slug>/archive/",
        views.ProjectArchiveApi.as_view(),
        name="api-project-archive",
    ),
    path("projects/<slug:slug>/members/", views.ProjectMembersApi.as_view(), name="api-members"),
    path(
        "projects/<slug:slug>/members/<int:pk>/",
        views.ProjectMemberApi.as_view(),
        name="api-member",
    ),
    path(
        "projects/<slug:slug>/invitations/",
        views.ProjectInvitationsApi.as_view(),
        name="api-invitations",
    ),
    path(
        "projects/<slug:slug>/label-files/",
        views.LabelImportsApi.as_view(),
        name="api-label-imports",
    ),
    path(
        "projects/<slug:slug>/label-files/<int:pk>/",
        views.LabelImportApi.as_view(),
        name="api-label-import",
    ),
]
