"""Start lineage ids at 10000 (data-model.md §2.9); 0..9999 are never drawn, 0 is the global namespace."""

from django.db import migrations


def start_lineage_sequence(apps, schema_editor):
    vendor = schema_editor.connection.vendor
    if vendor == "postgresql":
        schema_editor.execute(
            "SELECT setval(pg_get_serial_sequence('persona_lineages', 'id'), "
            "GREATEST(9999, COALESCE((SELECT MAX(id) FROM persona_lineages), 0)), true)"
        )
    elif vendor == "sqlite":
        schema_editor.execute("DELETE FROM sqlite_sequence WHERE name = 'persona_lineages'")
        schema_editor.execute(
            "INSERT INTO sqlite_sequence (name, seq) "
            "SELECT 'persona_lineages', MAX(9999, COALESCE((SELECT MAX(id) FROM persona_lineages), 0))"
        )


class Migration(migrations.Migration):
    dependencies = [("personas", "0001_initial")]

    operations = [migrations.RunPython(start_lineage_sequence, migrations.RunPython.noop)]
