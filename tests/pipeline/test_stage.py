"""Stage-level wiring of `build_turn_context` (build-context.md BC1-01, BC1-02, BC10-01..04)."""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest
from django.core.cache import cache
from django.db import transaction

from chatcontext.config import StageConfig
from chatcontext.pipeline import build_turn_context
from chatcontext.snapshot import (
    load_snapshot_rows,
    parse_members,
    parse_messages,
    snapshot_chat_turn,
    snapshot_transport,
    transcript_cache,
)
from chatcontext.types import ChatTurn, ChatTurnContext, LockedTurn
from tests.pipeline.conftest import example_doc

pytestmark = pytest.mark.django_db


def persona_turns(doc: dict[str, Any], locked_turn: LockedTurn | None = None) -> list[ChatTurnContext]:
    """Tomori's turn, then Pip's, both from the snapshot; Pip shares Tomori's locked-turn object
    unless ``locked_turn`` is given."""
    cache.clear()
    with transaction.atomic():
        loaded = load_snapshot_rows(doc)
        messages, members = parse_messages(doc), parse_members(doc)
        tomori = snapshot_chat_turn(doc, loaded, messages, members)
        pip_persona = next(p for p in tomori.all_personas if p.persona_nickname == "Pip")
        pip: ChatTurn = dataclasses.replace(
            tomori, persona=pip_persona, persona_index=1, locked_turn=locked_turn or tomori.locked_turn
        )
        transport = snapshot_transport(doc, messages, members)
        contexts = [
            build_turn_context(turn, transport, transcripts=transcript_cache(doc), config=StageConfig())
            for turn in (tomori, pip)
        ]
        transaction.set_rollback(True)
    return contexts


def test_bc10_02_persona_turns_of_one_locked_turn_share_discovery() -> None:
    doc = example_doc()
    doc["turn"]["co_responder_keys"] = ["pip"]
    first, second = persona_turns(doc)
    assert first.diagnostics["participants"]["discovery_cache_hit"] is False
    assert first.diagnostics["participants"]["external_calls"]["candidate_source_reads"] == 1
    assert second.diagnostics["participants"]["discovery_cache_hit"] is True
    assert set(second.diagnostics["participants"]["external_calls"].values()) == {0}


def test_bc10_02_another_locked_turn_object_gets_its_own_scope() -> None:
    doc = example_doc()
    first, second = persona_turns(doc, locked_turn=None)
    copy = dataclasses.replace(first.turn.locked_turn)  # the same fields, another object
    assert copy is not first.turn.locked_turn
    _, separate = persona_turns(doc, locked_turn=copy)
    assert second.diagnostics["participants"]["discovery_cache_hit"] is True
    assert separate.diagnostics["participants"]["discovery_cache_hit"] is False


def test_bc1_02_each_persona_turn_has_its_own_id_map_and_history_roles() -> None:
    doc = example_doc()
    tomori, pip = persona_turns(doc)
    assert tomori.message_id_map is not pip.message_id_map
    assert tomori.message_id_map.as_dict() == pip.message_id_map.as_dict()
    squawk = {
        c.current_persona.persona_nickname: next(i for i in c.context_items if i.message_id == "6006")
        for c in (tomori, pip)
    }
    assert (squawk["Tomori"].role, squawk["Pip"].role) == ("user", "model")
    assert tomori.streaming_context.message_id_map is tomori.message_id_map


def test_bc10_01_discovery_sees_the_reminder_entry_and_the_final_history() -> None:
    doc = example_doc()
    doc["turn"]["reminder"] = {"purpose": "return the book", "user_disc_id": "12"}
    ctx, _ = persona_turns(doc)
    last = ctx.simplified_messages[-1]
    assert last.id == f"synthetic-reminder-{doc['now_ms']}" and "<@12>" in (last.content or "")
    assert ctx.streaming_context.forced_mentions == [{"handle": "Jun", "user_id": "12"}]


def test_bc10_04_durations_come_from_the_stage_clock() -> None:
    doc = example_doc()
    cache.clear()
    ticks = iter(range(1000))
    with transaction.atomic():
        loaded = load_snapshot_rows(doc)
        messages, members = parse_messages(doc), parse_members(doc)
        turn = snapshot_chat_turn(doc, loaded, messages, members)
        ctx = build_turn_context(
            turn,
            snapshot_transport(doc, messages, members),
            transcripts=transcript_cache(doc),
            config=StageConfig(),
            clock=lambda: float(next(ticks)),
        )
        transaction.set_rollback(True)
    durations = ctx.diagnostics["durations"]
    assert durations["total_ms"] > durations["history_ms"] > 0
    assert "duration_ms" not in ctx.diagnostics["participants"]["hydration"]
