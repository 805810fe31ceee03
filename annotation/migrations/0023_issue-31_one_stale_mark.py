from importlib import import_module

from django.db import migrations

# One place for "these projects' agreement tallies are stale": the trigger of 0020 (a write that
# went around the tallies) and annotation.figures.tallies.figures_marked_stale (an import, which
# marks its project once, up front) both call this function. PostgreSQL only.
MARK = """
CREATE FUNCTION concord_figures_stale_mark(projects bigint[]) RETURNS void
LANGUAGE sql AS $$
    INSERT INTO annotation_figurestate (project_id, generation, basis)
    SELECT DISTINCT p, 1, '' FROM unnest(projects) AS p
    ON CONFLICT (project_id) DO UPDATE SET generation = annotation_figurestate.generation + 1;
$$;
"""
STALE = """
CREATE OR REPLACE FUNCTION concord_figures_stale() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF coalesce(current_setting('concord.figures_kept', true), '') = 'on' THEN
        RETURN NULL;
    END IF;
    PERFORM concord_figures_stale_mark(ARRAY(
        SELECT DISTINCT i.project_id FROM changed c JOIN annotation_item i ON i.id = c.item_id
    ));
    RETURN NULL;
END $$;
"""
# The way back puts 0020's own function back, read from 0020 rather than written here again.
STALE_BEFORE = import_module(
    "annotation.migrations.0020_issue-31_figure_tallies"
).STALE_FUNCTION.replace("CREATE FUNCTION", "CREATE OR REPLACE FUNCTION", 1)


def one_mark(apps, schema_editor):
    if schema_editor.connection.vendor == "postgresql":
        schema_editor.execute(MARK)
        schema_editor.execute(STALE)


def two_marks(apps, schema_editor):
    if schema_editor.connection.vendor == "postgresql":
        schema_editor.execute(STALE_BEFORE)
        schema_editor.execute("DROP FUNCTION concord_figures_stale_mark(bigint[])")


class Migration(migrations.Migration):
    dependencies = [("annotation", "0022_issue-31_no_duplicate_fk_indexes")]

    operations = [migrations.RunPython(one_mark, two_marks)]
