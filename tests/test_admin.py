"""The Django admin covers every model of Concord's apps, and each list and add page opens."""

import pytest
from django.apps import apps
from django.contrib import admin

CONCORD_APPS = ("concord", "taxonomy", "ingest", "annotation")


def concord_models():
    return [model for label in CONCORD_APPS for model in apps.get_app_config(label).get_models()]


def test_every_model_is_in_the_admin():
    missing = [m.__name__ for m in concord_models() if not admin.site.is_registered(m)]
    assert not missing, f"not in the Django admin: {missing}"


@pytest.mark.parametrize("model", concord_models(), ids=lambda m: m.__name__)
def test_admin_pages_open(client, labeled_project, model):
    from tests.factories import UserFactory

    client.force_login(UserFactory(username="root", is_staff=True, is_superuser=True))
    meta = model._meta
    changelist = client.get(f"/admin/{meta.app_label}/{meta.model_name}/")
    assert changelist.status_code == 200
    searched = client.get(f"/admin/{meta.app_label}/{meta.model_name}/?q=x")
    assert searched.status_code == 200
    if admin.site._registry[model].has_add_permission(changelist.wsgi_request):
        assert client.get(f"/admin/{meta.app_label}/{meta.model_name}/add/").status_code == 200
