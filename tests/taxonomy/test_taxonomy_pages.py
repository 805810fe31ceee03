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
    assert client.get("/api/taxonomies/").status_code in (401, 403)


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
