"""A person turns their single-key shortcuts off and on (issue #32, WCAG 2.1.4): the choice is
kept on the server for that person alone, and the labeling and lead pages hand it to their
scripts (data-single-keys)."""

from django.core.cache import cache
from django.test import Client

from concord.models import PersonSettings
from concord.person_settings import single_keys_on
from tests.annotation.labeling_helpers import items

SWITCH = "/accounts/single-keys/"


def switch_state(client, url: str) -> str:
    page = client.get(url, follow=True).content.decode()
    return "off" if 'data-single-keys="off"' in page else "on"


def test_the_switch_is_per_person_and_follows_them_to_another_browser(client, personas, project):
    items(project, 1)
    label_page = f"/projects/{project.slug}/label/"
    client.force_login(personas["volunteer_a"])
    assert switch_state(client, label_page) == "on"

    answer = client.post(SWITCH, {"single_keys": "off", "next": label_page})
    assert (answer.status_code, answer["Location"]) == (302, label_page)
    assert PersonSettings.objects.get(user=personas["volunteer_a"]).single_key_shortcuts is False
    cache.clear()  # read from the database, as another web process would
    other_browser = Client()
    other_browser.force_login(personas["volunteer_a"])
    assert switch_state(other_browser, label_page) == "off"
    lead = Client()
    lead.force_login(personas["lead"])
    assert switch_state(lead, f"/projects/{project.slug}/disputed/") == "on"

    client.post(SWITCH, {"single_keys": "on", "next": label_page})
    assert switch_state(other_browser, label_page) == "on"


def test_the_switch_leads_back_only_to_this_site_and_needs_a_sign_in_and_csrf(client, personas):
    client.force_login(personas["volunteer_a"])
    for target in (
        "https://evil.example/",
        "//evil.example/",
        "home",
        "/项目/",
        "9" * 30,
    ):
        answer = client.post(SWITCH, {"single_keys": "off", "next": target})
        assert (answer.status_code, answer["Location"]) == (302, "/"), target
    client.post(SWITCH, {"single_keys": "maybe"})  # neither on nor off: nothing changes
    assert PersonSettings.objects.get().single_key_shortcuts is False

    anonymous = Client()
    assert anonymous.post(SWITCH, {"single_keys": "off"}).status_code == 302
    strict = Client(enforce_csrf_checks=True)
    strict.force_login(personas["volunteer_b"])
    assert strict.post(SWITCH, {"single_keys": "off"}).status_code == 403
    assert not PersonSettings.objects.filter(user=personas["volunteer_b"]).exists()


def test_a_change_in_the_admin_reaches_the_pages_at_once(client, personas, project):
    from tests.factories import UserFactory

    volunteer = personas["volunteer_a"]
    assert single_keys_on(volunteer)  # now cached as on
    client.force_login(UserFactory(username="root", is_staff=True, is_superuser=True))
    added = client.post("/admin/concord/personsettings/add/", {"user": volunteer.pk})
    assert added.status_code == 302  # an unticked box: off
    assert not single_keys_on(volunteer)
