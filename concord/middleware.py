from django.conf import settings
from django.http import HttpResponse, JsonResponse
from django.http.multipartparser import MultiPartParserError
from django.shortcuts import render

from concord.errors import TOO_MANY, BadInput, ConcordError, TooLarge, error_body, too_many
from concord.input_checks import body_size_check, first_bad_field

# Scripts only from our own origin: issue bodies are untrusted Markdown, so even if sanitising
# missed something, an injected inline script would not run.
POLICY = "; ".join(
    [
        "default-src 'self'",
        "script-src 'self'",
        "style-src 'self' 'unsafe-inline'",
        "img-src 'self' data:",
        "object-src 'none'",
        "base-uri 'self'",
        "form-action 'self'",
        "frame-ancestors 'none'",
    ]
)


class ContentSecurityPolicyMiddleware:
    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        response = self.get_response(request)
        response.setdefault("Content-Security-Policy", getattr(settings, "CSP_POLICY", POLICY))
        return response


def _is_api(request) -> bool:
    return request.path.startswith("/api/")


def refusal(request, exc: ConcordError) -> HttpResponse:
    """`exc` answered with its status: the API's refusal shape under /api/, else a page with the
    message (templates/400.html)."""
    if _is_api(request):
        return JsonResponse(error_body(exc), status=exc.http_status)
    return render(request, "400.html", {"message": exc.message}, status=exc.http_status)


class InputCheckMiddleware:
    """Issue 12: a query parameter, or a page's form field, that PostgreSQL cannot store (a NUL,
    a lone surrogate) is refused with a 400 naming it before any view runs, instead of failing
    halfway through a write. API bodies are checked by the API's parsers (concord.parsers), which
    DRF runs itself. A ConcordError a view leaves unhandled (a bad id parameter, see
    concord.input_checks.id_param) is answered with its status and message, not a 500."""

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        try:
            problem = first_bad_field(request.GET.lists())
            if problem is None and request.method == "POST" and not _is_api(request):
                problem = first_bad_field(request.POST.lists())
        except MultiPartParserError as exc:
            problem = BadInput("body", f"the form could not be read ({exc})")
        except TOO_MANY as exc:
            problem = too_many(exc)
        if problem is not None:
            return refusal(request, problem)
        return self.get_response(request)

    def process_view(self, request, view_func, view_args, view_kwargs):
        """An API body over its cap is refused before anything reads it: the parsers check too
        (concord.parsers), but DRF's session authentication parses a form body for its CSRF
        check before any parser runs."""
        if not _is_api(request) or request.method in ("GET", "HEAD", "OPTIONS"):
            return None
        view_class = getattr(view_func, "cls", None)  # DRF's as_view() sets it
        cap = getattr(view_class, "max_body_bytes", None) or settings.API_MAX_BODY_BYTES
        try:
            body_size_check(request.META, cap)
        except TooLarge as exc:
            return refusal(request, exc)
        return None

    def process_exception(self, request, exception):
        if isinstance(exception, ConcordError):
            return refusal(request, exception)
        return None
