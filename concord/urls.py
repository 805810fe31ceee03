from django.contrib import admin
from django.contrib.auth import views as auth_views
from django.urls import URLPattern, URLResolver, include, path
from django.views.i18n import set_language
from drf_spectacular.views import SpectacularAPIView, SpectacularSwaggerSplitView

from concord.auth import (
    ThrottledLoginView,
    ThrottledPasswordChangeView,
    ThrottledPasswordResetView,
)
from concord.person_settings import single_keys_page
from concord.tokens import api_token_page

# The labeling routes (annotation.api_urls) are tried first: every label resolves two URLs, and
# each route tried in vain on the way costs (issue #16).
api: list[URLPattern | URLResolver] = [
    path("", include("annotation.api_urls")),
    path("", include("taxonomy.api.urls")),
    path("", include("ingest.api.urls")),
    path("schema/", SpectacularAPIView.as_view(), name="schema"),
    path("docs/", SpectacularSwaggerSplitView.as_view(url_name="schema"), name="api-docs"),
]

urlpatterns = [
    path("accounts/login/", ThrottledLoginView.as_view(), name="login"),
    path("accounts/logout/", auth_views.LogoutView.as_view(), name="logout"),
    path("accounts/api-token/", api_token_page, name="api-token"),
    # issue 32: the person's own switch for single-key shortcuts (WCAG 2.1.4)
    path("accounts/single-keys/", single_keys_page, name="single-keys"),
    # The top bar's language switch: a CSRF-checked POST that sets the language cookie.
    path("i18n/setlang/", set_language, name="set_language"),
    # issue 14: own password change, and reset by e-mail (Django's views, Concord's templates),
    # throttled like sign-in (concord.auth)
    path("accounts/password/", ThrottledPasswordChangeView.as_view(), name="password_change"),
    path(
        "accounts/password/done/",
        auth_views.PasswordChangeDoneView.as_view(),
        name="password_change_done",
    ),
    path("accounts/reset/", ThrottledPasswordResetView.as_view(), name="password_reset"),
    path(
        "accounts/reset/sent/",
        auth_views.PasswordResetDoneView.as_view(),
        name="password_reset_done",
    ),
    path(
        "accounts/reset/<uidb64>/<token>/",
        auth_views.PasswordResetConfirmView.as_view(),
        name="password_reset_confirm",
    ),
    path(
        "accounts/reset/done/",
        auth_views.PasswordResetCompleteView.as_view(),
        name="password_reset_complete",
    ),
    path("admin/login/", ThrottledLoginView.as_view()),
    path("admin/", admin.site.urls),
    path("api/", include(api)),
    path("taxonomy/", include("taxonomy.urls")),
    path("ingest/", include("ingest.urls")),
    path("", include("annotation.urls")),
]

handler500 = "concord.errors.server_error"
