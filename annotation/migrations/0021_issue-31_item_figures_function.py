from django.db import migrations

# One item's labels with their nodes' paths (type, theme, sub-theme: three levels at most), its
# final label's type and its repository, for annotation.figures.tallies.figures_kept, which asks
# twice per submit. A PL/pgSQL function so that PostgreSQL keeps the ten-table join's plan per
# connection (planning it took longer than running it); it also sets the flag the stale-marking
# trigger of 0020 reads, in the same round trip. PostgreSQL only.
ITEM_FIGURES = """
CREATE FUNCTION concord_item_figures(target bigint, kept text)
RETURNS TABLE (owner text, repo text, final_type text, node_id bigint, seconds bigint,
               grandparent_code text, parent_code text, own_code text)
LANGUAGE plpgsql AS $$
BEGIN
    PERFORM set_config('concord.figures_kept', kept, true);
    RETURN QUERY
    SELECT s.owner::text, s.repo::text, COALESCE(rg.code, rp.code, rn.code)::text,
           a.node_id, FLOOR(EXTRACT(EPOCH FROM a.created_at))::bigint,
           g.code::text, p.code::text, n.code::text
    FROM annotation_item i
    JOIN ingest_issue s ON s.id = i.issue_id
    LEFT JOIN annotation_resolution r ON r.item_id = i.id
    LEFT JOIN taxonomy_node rn ON rn.id = r.node_id
    LEFT JOIN taxonomy_node rp ON rp.id = rn.parent_id
    LEFT JOIN taxonomy_node rg ON rg.id = rp.parent_id
    LEFT JOIN annotation_annotation a ON a.item_id = i.id AND NOT a.is_pilot
    LEFT JOIN taxonomy_node n ON n.id = a.node_id
    LEFT JOIN taxonomy_node p ON p.id = n.parent_id
    LEFT JOIN taxonomy_node g ON g.id = p.parent_id
    WHERE i.id = target;
END $$;
"""


def item_figures(apps, schema_editor):
    if schema_editor.connection.vendor == "postgresql":
        schema_editor.execute(ITEM_FIGURES)


def no_item_figures(apps, schema_editor):
    if schema_editor.connection.vendor == "postgresql":
        schema_editor.execute("DROP FUNCTION concord_item_figures(bigint, text)")


class Migration(migrations.Migration):
    dependencies = [("annotation", "0020_issue-31_figure_tallies")]

    operations = [migrations.RunPython(item_figures, no_item_figures)]
