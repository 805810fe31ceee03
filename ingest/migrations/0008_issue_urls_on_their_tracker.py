"""An issue's stored URL leads only to its own tracker: a URL that is not an issue address on the
issue's host (another host, a `"` or anything else a forge or a file once gave) gives way to the
one built from the issue's names and number, as new rows get (ingest.issue_refs.issue_web_url)."""

from django.db import migrations

ISSUE_ADDRESS = {
    "github": r"^https?://(www\.)?github\.com/[A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+/issues/[1-9][0-9]*/?$",
    "gitee": r"^https?://(www\.)?gitee\.com/[A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+/issues/[A-Z0-9]+/?$",
}
DOMAINS = {"github": "github.com", "gitee": "gitee.com"}
BATCH = 2000


def urls_on_their_tracker(apps, schema_editor):
    Issue = apps.get_model("ingest", "Issue")
    for host, pattern in ISSUE_ADDRESS.items():
        stray = Issue.objects.filter(host=host).exclude(url__regex=pattern)
        batch = []
        for issue in stray.only("owner", "repo", "number").iterator(chunk_size=BATCH):
            issue.url = f"https://{DOMAINS[host]}/{issue.owner}/{issue.repo}/issues/{issue.number}"
            batch.append(issue)
            if len(batch) == BATCH:
                Issue.objects.bulk_update(batch, ["url"])
                batch = []
        Issue.objects.bulk_update(batch, ["url"])


class Migration(migrations.Migration):
    dependencies = [
        ("ingest", "0007_issue_names_without_case"),
    ]

    operations = [
        migrations.RunPython(urls_on_their_tracker, migrations.RunPython.noop),
    ]
