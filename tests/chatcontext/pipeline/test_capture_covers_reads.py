"""Every read of the Build Context stage has its capture in the stored snapshot (issue 28 item 1).

Two structural checks: every table the stage reads while it assembles a rich turn is one the capture
keeps (``CAPTURED_TABLES``), and every field of the value objects the stage reads a persona, the
server and a user through is a field of the snapshot format. A new read, or a new field, fails here
until the snapshot carries it. The replay tests of every source (tests/replays.py) then check the
values: a snapshot alone, replayed on an empty scratch database, gives the recorded prompt.
"""

from __future__ import annotations

import dataclasses
import json
import re
from typing import Any

import pytest
from django.apps import apps
from django.core.cache import cache
from django.db import connection, transaction
from django.test.utils import CaptureQueriesContext

from chatcontext import repository
from chatcontext.core.config import StageConfig
from chatcontext.core.snapshot_parse import snapshot_stage
from chatcontext.core.types import ChatTurn, PersonaInfo, ServerConfig, ShortTermNote, UserRow
from chatcontext.pipeline import build_turn_context
from chatcontext.snapshot import load_snapshot_rows, schema, snapshot_turn, validate_snapshot
from chatcontext.snapshot.capture import CAPTURED_TABLES, persona_json, settings_keys
from personas import models as m
from tests.paths import EXAMPLE

# PersonaInfo fields no snapshot key holds, and why: ids the replay database gives anew, what only
# delivery reads, fields no loader sets (``repository.persona_info`` leaves their defaults), and the
# sampling settings, which only the provider reads (bot/conversation/runner.py; no chatcontext module does).
PERSONA_NOT_IN_SNAPSHOT = {
    "persona_id", "server_id", "webhook_avatar_url", "has_tools", "llm_provider", "llm_codename", "sampling"
}  # fmt: skip


@pytest.mark.django_db
def test_the_fields_no_loader_sets_keep_their_defaults() -> None:
    server = m.Server.objects.create(server_disc_id="4400", name="S")
    loaded = repository.persona_info(m.Persona.objects.create(server=server, persona_nickname="T"))
    defaults = PersonaInfo(persona_id=None, persona_nickname="T", persona_lineage_id=loaded.persona_lineage_id)
    for name in ("has_tools", "llm_provider", "llm_codename"):
        assert getattr(loaded, name) == getattr(defaults, name)


# ServerConfig fields that are the server's columns rather than settings, each with its key.
SERVER_KEYS = {"server_id": None, "server_disc_id": "disc_id", "name": "name", "description": "description",
               "is_dm": "is_dm", "preferred_locale": None}  # fmt: skip
# Settings read under another name than their column (repository.server_config).
RENAMED_SETTINGS = {"prompt_command_enabled": "prompt_snapshot_enabled"}


def rich_document() -> dict[str, Any]:
    """The shipped example with every kind of row a turn can read."""
    doc = json.loads(EXAMPLE.read_text(encoding="utf-8"))
    doc["format"] = "tomori-turn-snapshot/4"
    persona = doc["personas"][0]
    persona["sample_dialogue"] = [{"role": "user", "text": "hi"}, {"role": "model", "text": "hello"}]
    persona["sprite_names"] = ["wave"]
    doc["server"]["emojis"] = [{"id": "4401", "name": "owl_wave"}]
    doc["server"]["stickers"] = [{"id": "4501", "name": "owl"}]
    user = doc["users"][0]["disc_id"]
    doc["naming_preferences"] = [{"user_disc_id": user, "persona_lineage_id": persona["persona_lineage_id"]}]
    doc["server_activity"] = [{"user_disc_id": user}]
    persona_message = next(msg for msg in doc["messages"] if msg.get("webhook_id") or msg["author"].get("bot"))
    doc["sprite_messages"] = [
        {"message_id": persona_message["id"], "persona_key": persona["key"], "sprite_name": "wave"}
    ]
    return validate_snapshot(doc)


def tables_in(sql: str) -> set[str]:
    return {model._meta.db_table for model in apps.get_models() if re.search(rf"\b{model._meta.db_table}\b", sql)}


@pytest.mark.django_db
def test_every_table_the_stage_reads_is_kept_by_the_capture() -> None:
    doc = rich_document()
    with transaction.atomic():
        loaded = load_snapshot_rows(doc)
        inputs = snapshot_turn(doc, loaded)
        cache.clear()  # the emoji and sticker rows come from the database, not a cached entry
        with CaptureQueriesContext(connection) as queries:
            build_turn_context(inputs.turn, inputs.transport, transcripts=inputs.transcripts, config=StageConfig())
        transaction.set_rollback(True)
    read = set().union(*(tables_in(q["sql"]) for q in queries.captured_queries))
    captured = {model._meta.db_table for model in CAPTURED_TABLES}
    assert read - captured == set()
    assert {"server_emojis", "persona_sprite_messages", "user_persona_naming_preferences", "stat_counters"} <= read


def test_every_persona_field_the_stage_reads_is_a_snapshot_field() -> None:
    fields = {f.name for f in dataclasses.fields(PersonaInfo)} - PERSONA_NOT_IN_SNAPSHOT
    keys = set(persona_json(PersonaInfo(persona_id=1, persona_nickname="T", persona_lineage_id=10000)))
    keys |= {"webhook_id"}  # per channel: the transport's, not the persona row's
    assert fields - {"persona_lineage_id", "is_alter"} <= keys
    assert keys - {"key"} <= set(schema()["properties"]["personas"]["items"]["properties"])


def test_every_server_and_user_field_the_stage_reads_is_a_snapshot_field() -> None:
    settings = set(settings_keys())
    for field in dataclasses.fields(ServerConfig):
        if field.name in SERVER_KEYS:
            key = SERVER_KEYS[field.name]
            assert key is None or key in schema()["properties"]["server"]["properties"]
        else:
            assert RENAMED_SETTINGS.get(field.name, field.name) in settings, field.name
    user_keys = set(schema()["properties"]["users"]["anyOf"][0]["items"]["properties"])
    assert {f.name for f in dataclasses.fields(UserRow)} - {"user_id", "user_disc_id"} <= user_keys


# Where the snapshot keeps each ChatTurn field the stage reads (a schema path under the document), or
# None with why no key holds it. A new ChatTurn field fails here until the snapshot carries it.
CHAT_TURN_KEYS: dict[str, str | None] = {
    "locked_turn": "turn.trigger_message_id",  # the trigger, queue, stop, reminder and manual parts: turn.*
    "persona": "turn.persona_key",
    "all_personas": "personas",
    "server": "server",
    "channel_name": "channel.name",
    "bot_user": "bot_user",
    "now_ms": "now_ms",
    "user_row": "users",
    "main_persona": "personas",  # the persona that is no alter
    "persona_index": None,  # no stage step reads it (the runner's plan order)
    "total_personas": "turn.co_responder_keys",
    "channel_description": "channel.topic",
    "thread_parent_id": "channel.parent_id",
    "triggerer": "users",  # derived again from the user row, member and naming preferences
    "should_surface_user_errors": None,  # delivery's error notices (streaming_context), not the prompt
    "forced_mentions": None,  # the reply's pings (streaming_context), not the prompt
    "text_credential_source": None,  # which key pays (streaming_context), not the prompt
    "is_self_message": "bot_user",  # the trigger's author is the bot
    "fast_regeneration_actions": None,  # a replay offers no Regenerate button (ChatTurn's comment)
    "short_term_memory": "turn.short_term_memory",
    "history_anchor_id": "turn.history_anchor_id",
}


def schema_has(path: str) -> bool:
    node: Any = schema()
    for key in path.split("."):
        node = node["properties"][key] if "properties" in node else node["anyOf"][0]["properties"][key]
    return True


def test_every_chat_turn_field_the_stage_reads_is_a_snapshot_field() -> None:
    assert {f.name for f in dataclasses.fields(ChatTurn)} == set(CHAT_TURN_KEYS)
    for name, path in CHAT_TURN_KEYS.items():
        assert path is None or schema_has(path), name


def other_value(value: Any) -> Any:
    """A value of ``value``'s type that differs from it, so a field left at its default is caught."""
    if isinstance(value, bool):
        return not value
    if isinstance(value, int):
        return value + 7
    return f"{value} Prime"


def test_every_stage_config_field_is_a_snapshot_stage_field() -> None:
    """Format 4: the turn's tunables (build-context.md §0.1) travel in ``stage``. A StageConfig field
    the schema's ``stage`` does not name fails here (and a schema key no field reads), so a new tunable
    cannot be left to the replaying process's settings."""
    stage = schema()["properties"]["stage"]["anyOf"][0]["properties"]
    assert {f.name for f in dataclasses.fields(StageConfig)} == set(stage)


def test_a_stage_config_of_non_default_values_round_trips_through_a_snapshot() -> None:
    """Every field, each set away from its default, is written by ``as_json`` (what the capture stores),
    accepted by the schema and read back by the replay's ``snapshot_stage``."""
    defaults = StageConfig()
    config = StageConfig(**{f.name: other_value(getattr(defaults, f.name)) for f in dataclasses.fields(StageConfig)})
    doc = validate_snapshot({**rich_document(), "format": "tomori-turn-snapshot/4", "stage": config.as_json()})
    assert snapshot_stage(doc) == config
    assert snapshot_stage({**doc, "stage": {}}) == defaults  # an absent key: the tunable's default
    assert snapshot_stage({k: v for k, v in doc.items() if k != "stage"}) is None  # the process's settings


@pytest.mark.django_db
def test_the_turn_a_snapshot_describes_reads_back_its_note_anchor_and_thread() -> None:
    """The values round-trip: what the capture writes for a ChatTurn, the replay's ChatTurn reads."""
    doc = rich_document()
    anchor = doc["messages"][1]["id"]
    doc["format"] = "tomori-turn-snapshot/3"
    doc["channel"]["parent_id"] = "4600"
    written = doc["now_ms"] - 60_000
    note = {"content": "Mina is repotting.", "updated_at_ms": written, "tool_offered": True}
    doc["turn"].update(short_term_memory=note, history_anchor_id=anchor)
    doc = validate_snapshot(doc)
    with transaction.atomic():
        turn = snapshot_turn(doc, load_snapshot_rows(doc)).turn
        transaction.set_rollback(True)
    assert turn.short_term_memory == ShortTermNote("Mina is repotting.", written, tool_offered=True)
    assert (turn.history_anchor_id, turn.thread_parent_id) == (anchor, "4600")
