"""An export's finished file through the API with a token, as a script fetches it: the same
admin-only rule as the download page, the length announced, nothing before the job is done."""

from __future__ import annotations

import pytest
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

from annotation.reporting.export_jobs import export_job_run, export_job_start
from annotation.reporting.exports import export_lines, export_options


@pytest.fixture(autouse=True)
def exports_dir(settings, tmp_path):
    settings.VAR_DIR = tmp_path
    return tmp_path / "exports"


def token_client(user) -> APIClient:
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {Token.objects.create(user=user).key}")
    return client


def test_a_token_fetches_the_finished_file_with_its_length(labeled_project, personas):
    options = export_options(labeled_project, format="study")
    job = export_job_start(project=labeled_project, user=None, options=options, enqueue=False)
    api = token_client(personas["admin"])
    job_url = f"/api/projects/{labeled_project.slug}/export-jobs/{job.pk}/"

    queued = api.get(job_url).json()
    assert queued["file_url"] is None
    file_url = f"{job_url}file/"
    early = api.get(file_url)
    assert early.status_code == 404
    assert "no file to download" in early.json()["detail"]

    export_job_run(job_id=job.pk)
    done = api.get(job_url).json()
    assert done["file_url"] == file_url
    response = api.get(file_url)
    assert response.status_code == 200
    body = b"".join(response.streaming_content)
    assert body.decode() == "".join(export_lines(labeled_project, options))
    assert int(response["Content-Length"]) == len(body)
    assert response["Content-Type"] == "text/csv; charset=utf-8"
    assert response["Content-Disposition"].startswith("attachment; filename=")
    # The login-only page still turns a token away; the API is where a script goes.
    page = api.get(done["download_url"])
    assert page.status_code == 302
    assert "/accounts/login/" in page["Location"]


@pytest.mark.parametrize(("who", "code"), [("volunteer_a", 403), ("lead", 403), ("outsider", 404)])
def test_only_project_admins_get_the_file(labeled_project, personas, who, code):
    options = export_options(labeled_project, format="final")
    job = export_job_start(project=labeled_project, user=None, options=options, enqueue=False)
    export_job_run(job_id=job.pk)
    url = f"/api/projects/{labeled_project.slug}/export-jobs/{job.pk}/file/"
    assert token_client(personas[who]).get(url).status_code == code
    assert APIClient().get(url).status_code == 401


def test_the_long_export_has_the_labels_of_its_own_project_only(project, personas, study_taxonomy):
    """Labelled items among many unlabelled ones, interleaved by id with another project's
    labelled items: the long export (read through the labelled ids in the items' id range)
    has exactly this project's labels."""
    from annotation.models import Item, Stage
    from tests.annotation.lead_helpers import labeled_item
    from tests.factories import IssueFactory, ProjectFactory

    other = ProjectFactory(taxonomy=study_taxonomy)
    people = [personas["volunteer_a"], personas["volunteer_b"]]
    mine = []
    for n in range(6):
        for _ in range(5):  # unlabelled items of this project
            Item.objects.create(project=project, issue=IssueFactory(), stage=Stage.OPEN)
        mine.append(labeled_item(project, people, ["C.1", "C.2"], title=f"mine {n}"))
        labeled_item(other, people, ["C.1", "C.1"], title=f"other {n}")
    for _ in range(5):
        Item.objects.create(project=project, issue=IssueFactory(), stage=Stage.OPEN)

    response = token_client(personas["admin"]).get(f"/api/projects/{project.slug}/exports/long/")
    assert response.status_code == 200
    lines = b"".join(response.streaming_content).decode().splitlines()
    assert len(lines) == 1 + 2 * len(mine)
    urls = {line.split(",", 1)[0] for line in lines[1:]}
    assert urls == {item.issue.url for item in mine}
