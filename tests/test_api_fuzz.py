"""Fuzz the REST API from its own OpenAPI schema (schemathesis): every operation, as each role (a
volunteer, a lead and a project admin of a project with labels, and a site admin), answers without
a server error and within its documented schema. Refusals (401/403/404/409) are fine.

Path parameters point at the real project and one of its items, so the generated queries and
bodies reach the operations' logic (or its refusal, for a role kept out) instead of stopping at a
404; a case that renames or archives the project is undone before the next. The requests sent
are counted per role; the count must reach a floor (one per operation) and is shown in the run's
summary (tests/conftest.py `pytest_terminal_summary`)."""

from __future__ import annotations

import json
from collections import Counter

import pytest
import schemathesis
from django.core.wsgi import get_wsgi_application
from drf_spectacular.generators import SchemaGenerator
from drf_spectacular.renderers import OpenApiJsonRenderer
from hypothesis import HealthCheck, settings
from rest_framework.authtoken.models import Token
from schemathesis.checks import not_a_server_error
from schemathesis.specs.openapi.checks import content_type_conformance, response_schema_conformance

from annotation.models import Project
from tests.conftest import summary_line
from tests.factories import UserFactory

pytestmark = pytest.mark.slow

# No 5xx; documented answers match their schema and content type. Refusals (400/403/404/409)
# all share the `{"detail", "where"}` shape and are not listed per operation in the schema, so
# "undocumented status code" is not checked.
CHECKS = [not_a_server_error, response_schema_conformance, content_type_conformance]
# The role -> the `personas` member who plays it; the site admin is made by `role_headers`.
ROLES = {"volunteer": "volunteer_a", "lead": "lead", "admin": "admin", "staff": None}
# Requests sent, answers 5xx and answers 429 so far, by role (filled by `send`).
REQUESTS: Counter[str] = Counter()
SERVER_ERRORS: Counter[str] = Counter()
THROTTLED: Counter[str] = Counter()


# Who also gets schemathesis' coverage phase: its deterministic cases (each field missing, of the
# wrong type, at and past its bounds, each undocumented method) before the random ones. Those
# test what an operation makes of its input, the same for everyone who gets past the role check;
# the site admin, who may do everything (tests/test_role_matrix.py), reaches every operation's.
# The volunteer, the lead and the project admin get the random cases only (the coverage phase as
# all four was two thirds of this module's time, make test's longest, #25).
COVERAGE_ROLES = {"staff"}


@pytest.fixture(params=list(ROLES))
def role(request, settings):
    """The role the fuzzer signs in as."""
    # The fuzzer sends hundreds of requests a second as one person: far past the API's per-person
    # rate limits (concord/auth.py reads them at each request), whose 429 would hide what the
    # operations answer to the generated input.
    rates = {"burst": None, "sustained": None}
    settings.REST_FRAMEWORK = {**settings.REST_FRAMEWORK, "DEFAULT_THROTTLE_RATES": rates}
    for counter in (REQUESTS, SERVER_ERRORS, THROTTLED):
        counter[request.param] = 0
    return request.param


@pytest.fixture
def api_schema(transactional_db, labeled_project, role, request):
    """The API's schema as the fuzzer reads it for `role`; after the test, the role's request count
    must show it ran (at least one request per operation), and goes to the run's summary. Each
    request commits as in production (with `db` instead, all the cases share one transaction and
    the run stalls)."""
    document = SchemaGenerator().get_schema(request=None, public=True)
    schema = schemathesis.openapi.from_dict(json.loads(OpenApiJsonRenderer().render(document)))
    schema.config.phases.coverage.enabled = role in COVERAGE_ROLES
    yield schema
    operations = sum(1 for _ in schema.get_all_operations())
    summary_line(
        request,
        f"API fuzz as {role}: {REQUESTS[role]} requests over {operations} operations, "
        f"{SERVER_ERRORS[role]} answered 5xx, {THROTTLED[role]} answered 429",
    )
    assert REQUESTS[role] >= operations, f"the API fuzzer sent {REQUESTS[role]} requests as {role}"
    assert not THROTTLED[role], f"{THROTTLED[role]} requests as {role} were throttled"


schema = schemathesis.pytest.from_fixture("api_schema")


@pytest.fixture
def role_headers(role, personas):
    if ROLES[role] is None:
        user = UserFactory(username="fuzz-admin", is_staff=True, is_superuser=True)
    else:
        user = personas[ROLES[role]]
    return {"Authorization": f"Token {Token.objects.create(user=user).key}"}


@pytest.fixture
def app(role):
    """The WSGI app, made once a test rather than once a request: making it loads the middleware,
    and WhiteNoise's reads every static file (46 ms, five times what a request itself takes)."""
    return get_wsgi_application()


def send(case, app, role: str, headers: dict) -> None:
    """Send the case as `role`, count it, and check the answer."""
    response = case.call(app=app, headers=headers)
    REQUESTS[role] += 1
    SERVER_ERRORS[role] += response.status_code >= 500
    THROTTLED[role] += response.status_code == 429
    transport = {"app": app, "headers": headers}
    case.validate_response(response, checks=CHECKS, headers=headers, transport_kwargs=transport)


@schema.parametrize()
@settings(
    # per operation and role: 5 x 4 roles = 20 generated requests an operation, the same on every
    # run (the "ci" profile); at 8 this was the suite's longest module (make test's time, #25)
    max_examples=5,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@pytest.mark.usefixtures("role")  # by role: schemathesis' wrapper hides the arguments from pytest
def test_api_operations_never_fail_on_the_server(case, app, role, role_headers, labeled_project):
    if "slug" in (case.path_parameters or {}):
        case.path_parameters["slug"] = labeled_project.slug
    if "item_id" in (case.path_parameters or {}):
        case.path_parameters["item_id"] = labeled_project.items.order_by("pk").first().pk
    try:
        send(case, app, role, role_headers)
    finally:
        # A case may rename the project (PATCH its slug) or archive it: put it back, or every
        # case after it would stop at a 404 or at the archived project's 409.
        Project.objects.filter(pk=labeled_project.pk).update(
            slug=labeled_project.slug, archived_at=None
        )
