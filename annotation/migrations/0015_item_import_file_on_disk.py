# Issue 25: an item import's file waits on disk, read by the worker as a stream, not in its row.

import uuid
from pathlib import Path

from django.conf import settings
from django.db import migrations, models


def texts_to_files(apps, schema_editor):
    """A job not finished yet keeps its file: its text goes to disk, where the worker now reads."""
    ItemImport = apps.get_model("annotation", "ItemImport")
    folder = Path(settings.VAR_DIR) / "item-imports"
    waiting = ItemImport.objects.filter(status__in=["queued", "running"]).exclude(text="")
    for job in waiting.iterator(chunk_size=1):  # each may be tens of MB
        folder.mkdir(parents=True, exist_ok=True)
        name = f"{uuid.uuid4().hex}.json"
        (folder / name).write_text(job.text, encoding="utf-8", newline="")
        ItemImport.objects.filter(pk=job.pk).update(file=name)


class Migration(migrations.Migration):
    dependencies = [
        ("annotation", "0014_claim_order"),
    ]

    operations = [
        migrations.AddField(
            model_name="itemimport",
            name="file",
            field=models.CharField(
                blank=True,
                help_text="The file as sent, under VAR_DIR/item-imports; removed once the job has finished.",
                max_length=100,
            ),
        ),
        migrations.RunPython(texts_to_files, migrations.RunPython.noop),
        migrations.RemoveField(
            model_name="itemimport",
            name="text",
        ),
    ]
