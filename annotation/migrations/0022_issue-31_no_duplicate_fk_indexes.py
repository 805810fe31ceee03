import django.db.models.deletion
from django.db import migrations, models

# Django gives every foreign key an index of its own; these four repeat the leading column of an
# index the table has anyway (named beside each), and cost every row written (a label, an audit
# row, a reservation, an item) one more index entry. Only the indexes go: the constraints stay as
# they are (AlterField alone would drop and re-add each constraint, checking a 10x table again).
DUPLICATES = {
    # index: (table, column), then the index that serves it instead
    "annotation_annotation_item_id_6c4befde": ("annotation_annotation", "item_id"),  # unique
    "annotation_auditevent_item_id_4d4c4def": ("annotation_auditevent", "item_id"),  # audit_item
    "annotation_item_project_id_2466b61c": ("annotation_item", "project_id"),  # item_unique
    "annotation_reservation_item_id_f1e26c88": ("annotation_reservation", "item_id"),  # unique
}

CASCADE = django.db.models.deletion.CASCADE


class Migration(migrations.Migration):
    dependencies = [("annotation", "0021_issue-31_item_figures_function")]

    operations = [
        migrations.SeparateDatabaseAndState(
            database_operations=[
                migrations.RunSQL(
                    f'DROP INDEX IF EXISTS "{index}"',
                    f'CREATE INDEX "{index}" ON "{table}" ("{column}")',
                )
                for index, (table, column) in DUPLICATES.items()
            ],
            state_operations=[
                migrations.AlterField(
                    model_name="annotation",
                    name="item",
                    field=models.ForeignKey(
                        db_index=False,
                        on_delete=CASCADE,
                        related_name="annotations",
                        to="annotation.item",
                    ),
                ),
                migrations.AlterField(
                    model_name="auditevent",
                    name="item",
                    field=models.ForeignKey(
                        blank=True,
                        db_index=False,
                        null=True,
                        on_delete=CASCADE,
                        related_name="audit_events",
                        to="annotation.item",
                    ),
                ),
                migrations.AlterField(
                    model_name="item",
                    name="project",
                    field=models.ForeignKey(
                        db_index=False,
                        on_delete=CASCADE,
                        related_name="items",
                        to="annotation.project",
                    ),
                ),
                migrations.AlterField(
                    model_name="reservation",
                    name="item",
                    field=models.ForeignKey(
                        db_index=False,
                        on_delete=CASCADE,
                        related_name="reservations",
                        to="annotation.item",
                    ),
                ),
            ],
        )
    ]
