"""Fuzz the REST API from its own OpenAPI schema (schemathesis): every operation, as a site admin
on a project with labels, answers without a server error and within its documented schema.

Path parameters point at the real project and one of its items, so the generated queries and
bodies reach the operations' logic instead of stopping at a 404."""

from __future__ import annotations

import json

import pytest
import schemathesis
from django.core.wsgi import get_wsgi_application
from drf_spectacular.generators import SchemaGenerator
from drf_spectacular.renderers import OpenApiJsonRenderer
from hypothesis import HealthCheck, settings
from rest_framework.authtoken.models import Token
from schemathesis.checks import not_a_server_error
from schemathesis.specs.openapi.checks import content_type_conformance, response_schema_conformance

from tests.factories import UserFactory

# No 5xx; documented answers match their schema and content type. Refusals (400/403/404/409)
# all share the `{"detail", "where"}` shape and are not listed per operation in the schema, so
# "undocumented status code" is not checked.
CHECKS = [not_a_server_error, response_schema_conformance, content_type_conformance]


@pytest.fixture
def api_schema(transactional_db, labeled_project):
    document = SchemaGenerator().get_schema(request=None, public=True)
    schema = schemathesis.openapi.from_dict(json.loads(OpenApiJsonRenderer().render(document)))
    return schema


schema = schemathesis.pytest.from_fixture("api_schema")


@pytest.fixture
def admin_headers(transactional_db):
    user = UserFactory(username="fuzz-admin", is_staff=True, is_superuser=True)
    return {"Authorization": f"Token {Token.objects.create(user=user).key}"}


@schema.parametrize()
@settings(
    max_examples=8,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
def test_api_operations_never_fail_on_the_server(case, admin_headers, labeled_project):
    if "slug" in (case.path_parameters or {}):
        case.path_parameters["slug"] = labeled_project.slug
    if "item_id" in (case.path_parameters or {}):
        case.path_parameters["item_id"] = labeled_project.items.order_by("pk").first().pk
    case.call_and_validate(app=get_wsgi_application(), headers=admin_headers, checks=CHECKS)
