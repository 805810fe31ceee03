"""The discussion thread: leads always, volunteers only once the item is revealed (blindness);
sanitized Markdown; the page shows labels to volunteers under the same rule."""

import pytest
from django.core.exceptions import PermissionDenied

from annotation.models import Action, AuditEvent, Post
from annotation.review.discussion import post_add
from concord.errors import ConcordError
from tests.annotation.lead_helpers import labeled_item, trio_fixture  # noqa: F401


@pytest.fixture
def labeling(project, trio):
    """Two of three labels: still blind."""
    return labeled_item(project, trio[:2], ["C.1", "C.2"], cross_check=False)


@pytest.fixture
def disputed(project, trio):
    return labeled_item(project, trio, ["C.1", "C.1", "C.2"])


def test_volunteer_cannot_post_before_the_reveal(personas, labeling):
    with pytest.raises(PermissionDenied):
        post_add(item=labeling, author=personas["volunteer_a"], text="I chose C.1")
    assert not Post.objects.exists()


def test_lead_and_admin_may_post_any_time(personas, labeling):
    post_add(item=labeling, author=personas["lead"], text="Watch the stack trace")
    post_add(item=labeling, author=personas["admin"], text="Agreed")
    assert labeling.posts.count() == 2


def test_volunteer_posts_once_revealed_and_it_is_audited(personas, disputed):
    post = post_add(item=disputed, author=personas["volunteer_b"], text="  C.2: it crashes  ")
    assert post.text == "C.2: it crashes"
    event = AuditEvent.objects.get(item=disputed, action=Action.POST)
    assert event.actor == personas["volunteer_b"]
    assert event.after == {"post": post.pk, "text": "C.2: it crashes"}


def test_no_reveal_in_a_project_that_keeps_labels_hidden(project, personas, disputed):
    project.reveal_after_cross_check = False
    project.save()
    disputed.project.refresh_from_db()
    with pytest.raises(PermissionDenied):
        post_add(item=disputed, author=personas["volunteer_a"], text="hello")


def test_outsiders_and_empty_posts_are_refused(personas, disputed):
    with pytest.raises(PermissionDenied):
        post_add(item=disputed, author=personas["outsider"], text="hello")
    with pytest.raises(ConcordError, match="Write something"):
        post_add(item=disputed, author=personas["lead"], text="   ")


def test_page_hides_labels_and_posts_from_volunteers_before_the_reveal(
    client, project, personas, labeling
):
    post_add(item=labeling, author=personas["lead"], text="secret hint: C.1")
    client.force_login(personas["volunteer_a"])
    response = client.get(f"/projects/{project.slug}/items/{labeling.pk}/discussion/")
    page = response.content.decode()
    assert response.status_code == 200
    assert 'id="blind-note"' in page
    assert "secret hint" not in page
    assert "volunteer_b" not in page
    refused = client.post(
        f"/projects/{project.slug}/items/{labeling.pk}/discussion/", {"text": "me too"}
    )
    assert refused.status_code == 403


def test_page_shows_labels_and_sanitized_posts_after_the_reveal(
    client, project, personas, disputed
):
    client.force_login(personas["volunteer_a"])
    url = f"/projects/{project.slug}/items/{disputed.pk}/discussion/"
    response = client.post(url, {"text": "**bold** <script>alert(1)</script>"})
    assert response.status_code == 302
    page = client.get(url).content.decode()
    assert "<strong>bold</strong>" in page
    assert "<script>alert(1)" not in page
    assert "summary by volunteer_b" in page


def test_api_posts_follow_the_same_rule(client, project, personas, labeling, disputed):
    client.force_login(personas["volunteer_a"])
    blind = f"/api/projects/{project.slug}/items/{labeling.pk}/posts/"
    open_ = f"/api/projects/{project.slug}/items/{disputed.pk}/posts/"
    assert client.get(blind).status_code == 403
    assert client.post(blind, {"text": "x"}, content_type="application/json").status_code == 403
    created = client.post(open_, {"text": "*why* C.1"}, content_type="application/json")
    assert created.status_code == 201
    assert created.json()["html"] == "<p><em>why</em> C.1</p>"
    assert [p["author"] for p in client.get(open_).json()] == ["volunteer_a"]
