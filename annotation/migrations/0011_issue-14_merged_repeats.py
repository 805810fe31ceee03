import django.db.models.deletion
from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [("annotation", "0008_project_nodes")]

    operations = [
        migrations.CreateModel(
            name="MergedRepeat",
            fields=[
                (
                    "id",
                    models.BigAutoField(
                        auto_created=True, primary_key=True, serialize=False, verbose_name="ID"
                    ),
                ),
                ("file", models.CharField(help_text="File name, without its folder.", max_length=300)),
                ("line", models.PositiveIntegerField(help_text="Line of the skipped row.")),
                (
                    "first_line",
                    models.PositiveIntegerField(help_text="Line of the row that was kept."),
                ),
                (
                    "labels_differ",
                    models.BooleanField(
                        help_text="Whether any label of the skipped row differs from the kept row's."
                    ),
                ),
                ("created_at", models.DateTimeField(auto_now_add=True)),
                (
                    "item",
                    models.ForeignKey(
                        help_text="The item the kept row made.",
                        on_delete=django.db.models.deletion.CASCADE,
                        related_name="merged_repeats",
                        to="annotation.item",
                    ),
                ),
                (
                    "project",
                    models.ForeignKey(
                        on_delete=django.db.models.deletion.CASCADE,
                        related_name="merged_repeats",
                        to="annotation.project",
                    ),
                ),
            ],
            options={
                "constraints": [
                    models.UniqueConstraint(
                        fields=("project", "file", "line"), name="merged_repeat_unique"
                    )
                ]
            },
        ),
    ]
