"""The saved-nickname key index of discovery's candidate read (participants.md D-16).

It indexes the first three characters of the normalized saved nickname, with ``''`` for the
nicknames SQL cannot normalize as Python does; the read probes it with every substring of up to three
characters of the history. The expression differs per database (PostgreSQL's regular expressions,
SQLite's GLOB), so it is SQL rather than a model ``Index``. It is frozen here: it must stay the
expression ``chatcontext.participants.candidates.nickname_key_sql`` writes, which
tests/participants/test_candidate_read_properties.py checks by the read's query plan. The partial
index of users with a saved nickname it replaces served only that read.
"""

from django.db import migrations

_WHITESPACE = "\t\n\x0b\x0c\r\x1c-\x1f\x85\xa0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000"
_LOWER_DIFFERS = "\u0130\u03a3"
_NICK = '"user_nickname"'

_KEY = {
    "postgresql": (
        f"(CASE WHEN {_NICK} ~ '[@{_WHITESPACE}{_LOWER_DIFFERS}]' OR STRPOS({_NICK}, '  ') > 0 "
        f"THEN '' ELSE LEFT(LOWER(TRIM({_NICK})), 3) END) COLLATE \"C\""
    ),
    "sqlite": (
        f"(CASE WHEN {_NICK} GLOB '*[@{_WHITESPACE}{_LOWER_DIFFERS}]*' OR {_NICK} GLOB '*[^\x01-\x7f]*' "
        f"OR INSTR({_NICK}, '  ') > 0 THEN '' ELSE SUBSTR(LOWER(TRIM({_NICK})), 1, 3) END)"
    ),
}


def create_key_index(apps, schema_editor):
    key = _KEY.get(schema_editor.connection.vendor)
    if key is not None:
        schema_editor.execute(f"CREATE INDEX users_nickname_key_idx ON users (({key})) WHERE {_NICK} > ''")


def drop_key_index(apps, schema_editor):
    if schema_editor.connection.vendor in _KEY:
        schema_editor.execute("DROP INDEX users_nickname_key_idx")


class Migration(migrations.Migration):
    dependencies = [
        ("personas", "0015_history_of_prices_and_switches"),
    ]

    operations = [
        migrations.RunPython(create_key_index, drop_key_index),
        migrations.RemoveIndex(model_name="discorduser", name="users_saved_nickname_idx"),
    ]
