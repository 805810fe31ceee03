"""Issues are told apart with owner and repository names compared without case: an index for
those lookups (ingest.services.repository_issues). Not unique: rows stored before may hold one
issue under two spellings."""

import django.db.models.functions.text
from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("ingest", "0006_issue-13_harvest_trust"),
    ]

    operations = [
        migrations.AddIndex(
            model_name="issue",
            index=models.Index(
                models.F("host"),
                django.db.models.functions.text.Lower("owner"),
                django.db.models.functions.text.Lower("repo"),
                models.F("number"),
                name="issue_identity_nocase",
            ),
        ),
    ]
