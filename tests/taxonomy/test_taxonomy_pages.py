"""The taxonomy tree page, the read API and the OpenAPI schema."""


def test_tree_page_shows_codes_definitions_and_examples(client, personas, study_taxonomy):
    client.force_login(personas["volunteer_a"])
    html = client.get(f"/taxonomy/{study_taxonomy.pk}/").content.decode()
    assert "3 types · 18 themes · 70 sub-themes" in html
    assert 'data-code="C.1.i"' in html
    assert "User confusion regarding framework usage" in html  # type A's definition
    assert "Cuda library missing" in html  # an example on C.1.i
    assert 'id="taxonomy-search"' in html


def test_tree_api_nests_types_themes_subthemes(client, personas, study_taxonomy):
    client.force_login(personas["volunteer_a"])
    tree = client.get(f"/api/taxonomies/{study_taxonomy.pk}/tree/").json()
    assert [t["code"] for t in tree] == ["A", "B", "C"]
    bug = tree[2]
    assert len(bug["children"]) == 10
    build = bug["children"][0]["children"][0]
    assert build["code"] == "C.1.i"
    assert build["examples"][0]["kind"] == "symptom"


def test_node_detail_api(client, personas, study_taxonomy):
    client.force_login(personas["volunteer_a"])
    node = study_taxonomy.nodes.get(code="B.2")
    body = client.get(f"/api/nodes/{node.pk}/").json()
    assert (body["code"], body["level"], body["parent"]) == ("B.2", "theme", "B")


def test_taxonomy_api_needs_authentication(client, study_taxonomy):
    assert client.get("/api/taxonomies/").status_code == 401


def test_openapi_schema_lists_the_endpoints(client, personas):
    client.force_login(personas["volunteer_a"])
    response = client.get("/api/schema/", HTTP_ACCEPT="application/vnd.oai.openapi+json")
    schema = response.json()
    assert schema["openapi"].startswith("3.")
    assert {
        "/api/taxonomies/{id}/tree/",
        "/api/nodes/{id}/",
        "/api/projects/{slug}/agreement/",
    } <= set(schema["paths"])
    assert client.get("/api/docs/").status_code == 200


def test_the_tree_offers_edit_links_only_where_they_work(client, personas, project):
    """A node as loaded is shared: only site staff change it. A node a project added through a
    proposal is that project's: its lead edits it. A volunteer edits nothing, so sees no link."""
    from annotation.models import ProjectNode
    from taxonomy.models import Node
    from tests.factories import UserFactory

    parent = project.taxonomy.nodes.get(code="C")
    added = Node.objects.create(
        taxonomy=project.taxonomy, parent=parent, level="theme", code="C.99", name="Proposed"
    )
    ProjectNode.objects.create(project=project, node=added)  # as an accepted proposal adds it
    staff = UserFactory(username="site-admin", is_staff=True)
    page = f"/taxonomy/{project.taxonomy_id}/"
    edit_links = {}
    for who, user in [
        ("volunteer", personas["volunteer_a"]),
        ("lead", personas["lead"]),
        ("staff", staff),
    ]:
        client.force_login(user)
        edit_links[who] = client.get(page).text.count('class="edit-node"')
    total = project.taxonomy.nodes.count()
    assert edit_links == {"volunteer": 0, "lead": 1, "staff": total}
    client.force_login(personas["lead"])
    assert f'href="/taxonomy-admin/nodes/{added.pk}/"' in client.get(page).text
