"""Stage-level wiring of `build_turn_context` (build-context.md BC1-01, BC1-02, BC10-01..04)."""

from __future__ import annotations

import dataclasses
import json
import random
import re
from typing import Any

import pytest
from django.core.cache import cache
from django.db import transaction

from chatcontext.core.config import StageConfig
from chatcontext.core.types import ChatTurn, ChatTurnContext, LockedTurn
from chatcontext.pipeline import build_turn_context
from chatcontext.snapshot import (
    load_snapshot_rows,
    snapshot_turn,
)
from tests.chatcontext.pipeline.conftest import assemble, example_doc
from tests.chatcontext.pipeline.documents import generate_snapshot

pytestmark = pytest.mark.django_db


DOC = example_doc()
USER = {u["username"]: u["disc_id"] for u in DOC["users"]}
PRIYA, DARIO, TOBIAS = USER["priya.k"], USER["dario_m"], USER["tobias.r"]
SPROCKET_SAYS, TOBIAS_REPLY = DOC["messages"][5]["id"], DOC["messages"][6]["id"]


def persona_turns(doc: dict[str, Any], locked_turn: LockedTurn | None = None) -> list[ChatTurnContext]:
    """Tomori's turn, then Sprocket's, both from the snapshot; Sprocket shares Tomori's locked-turn
    object unless ``locked_turn`` is given."""
    cache.clear()
    with transaction.atomic():
        loaded = load_snapshot_rows(doc)
        inputs = snapshot_turn(doc, loaded)
        tomori = inputs.turn
        sprocket_persona = next(p for p in tomori.all_personas if p.persona_nickname == "Sprocket")
        sprocket: ChatTurn = dataclasses.replace(
            tomori, persona=sprocket_persona, persona_index=1, locked_turn=locked_turn or tomori.locked_turn
        )
        contexts = [
            build_turn_context(turn, inputs.transport, transcripts=inputs.transcripts, config=StageConfig())
            for turn in (tomori, sprocket)
        ]
        transaction.set_rollback(True)
    return contexts


def test_bc10_02_persona_turns_of_one_locked_turn_share_discovery() -> None:
    """Scenario 64 (BC10-02/03, C-01, C-09): the second persona turn of the same locked-turn object
    reuses discovery: a cache hit with zero external calls."""
    doc = example_doc()
    doc["turn"]["co_responder_keys"] = ["sprocket"]
    first, second = persona_turns(doc)
    assert first.diagnostics["participants"]["discovery_cache_hit"] is False
    assert first.diagnostics["participants"]["external_calls"]["candidate_source_reads"] == 1
    assert second.diagnostics["participants"]["discovery_cache_hit"] is True
    assert set(second.diagnostics["participants"]["external_calls"].values()) == {0}


def test_bc10_02_another_locked_turn_object_gets_its_own_scope() -> None:
    """BC10-02: the scope is keyed by the locked-turn object's identity, never by equal fields."""
    doc = example_doc()
    first, second = persona_turns(doc, locked_turn=None)
    copy = dataclasses.replace(first.turn.locked_turn)  # the same fields, another object
    assert copy is not first.turn.locked_turn
    _, separate = persona_turns(doc, locked_turn=copy)
    assert second.diagnostics["participants"]["discovery_cache_hit"] is True
    assert separate.diagnostics["participants"]["discovery_cache_hit"] is False


def test_bc1_02_bc5_03_each_persona_turn_has_its_own_id_map_and_history_roles() -> None:
    """BC1-02, BC5-03: one id map per persona turn, shared with its streaming context."""
    doc = example_doc()
    tomori, sprocket = persona_turns(doc)
    assert tomori.message_id_map is not sprocket.message_id_map
    assert tomori.message_id_map.as_dict() == sprocket.message_id_map.as_dict()
    beep = {
        c.current_persona.persona_nickname: next(i for i in c.context_items if i.message_id == SPROCKET_SAYS)
        for c in (tomori, sprocket)
    }
    assert (beep["Tomori"].role, beep["Sprocket"].role) == ("user", "model")
    assert tomori.streaming_context.message_id_map is tomori.message_id_map


def test_bc10_01_discovery_sees_the_reminder_entry_and_the_final_history() -> None:
    doc = example_doc()
    doc["turn"]["reminder"] = {"purpose": "return the heat gun", "user_disc_id": DARIO}
    ctx, _ = persona_turns(doc)
    last = ctx.simplified_messages[-1]
    assert last.id == f"synthetic-reminder-{doc['now_ms']}" and f"<@{DARIO}>" in (last.content or "")
    assert ctx.streaming_context.forced_mentions == [
        {"handle": "Dario", "user_id": DARIO},
        {"handle": "dario_m", "user_id": DARIO},
    ]


def test_bc10_04_durations_come_from_the_stage_clock() -> None:
    doc = example_doc()
    cache.clear()
    ticks = iter(range(1000))
    ctx = assemble(doc, clock=lambda: float(next(ticks)))
    durations = ctx.diagnostics["durations"]
    assert durations["total_ms"] > durations["history_ms"] > 0
    assert "duration_ms" not in ctx.diagnostics["participants"]["hydration"]


def test_bc10_03_a_different_block_list_gives_a_separate_discovery() -> None:
    """Scenario 64, second half: Sprocket blocks Tobias, so Sprocket's sanitized history differs
    (Tobias's reply becomes a block notice) and the shared scope computes a second discovery for it
    (C-07)."""
    doc = example_doc()
    doc["turn"]["co_responder_keys"] = ["sprocket"]
    doc["persona_user_blocks"] = [
        {"persona_key": "sprocket", "user_disc_id": TOBIAS, "expires_at_ms": doc["now_ms"] + 3_600_000}
    ]
    tomori, sprocket = persona_turns(doc)
    assert any(e.id == f"synthetic-user-block-{TOBIAS_REPLY}" for e in sprocket.simplified_messages)
    assert not any(e.id.startswith("synthetic-user-block-") for e in tomori.simplified_messages)
    assert sprocket.diagnostics["participants"]["discovery_cache_hit"] is False
    assert sprocket.diagnostics["participants"]["external_calls"]["candidate_source_reads"] == 1


def test_bc11_01_03_blocked_and_full_authors_audio_is_never_transcribed() -> None:
    """Only the visible user's uncached voice message of visible_raw_messages (BC2-09) reaches
    speech-to-text (BC11-01); a blocked
    author's (BC11-03) and — hardening of the [QUIRK] — a privacy-FULL author's never do."""
    doc = example_doc()
    voice = doc["messages"][8]  # Priya's voice message
    for number, author_index in ((1, 1), (2, 6), (3, 0)):  # Wren (FULL), Tobias (blocked), Priya
        extra = {**voice, "id": f"700{number}", "author": doc["messages"][author_index]["author"]}
        extra["created_timestamp"] = voice["created_timestamp"] + number
        extra["attachments"] = [{**voice["attachments"][0], "id": f"710{number}", "url": f"file:///voice/{number}.ogg"}]
        doc["messages"].insert(9, extra)
    doc["persona_user_blocks"] = [
        {"persona_key": "tomori", "user_disc_id": TOBIAS, "expires_at_ms": doc["now_ms"] + 60_000}
    ]
    heard: list[str] = []

    def transcriber(attachment: Any, message: Any) -> str:
        heard.append(message.author.id)
        return "transcribed words"

    cache.clear()
    ctx = assemble(doc, transcriber=transcriber)
    assert heard == [PRIYA]  # her first voice message is cached; only her new one is transcribed
    assert ctx.diagnostics["history"]["voice_transcriptions"] == 1


def test_bc1_01_the_stage_runs_its_steps_in_order(monkeypatch: pytest.MonkeyPatch) -> None:
    """BC1-01: streaming context → assets → history → reminder → impersonation → tool gating →
    effective persona → participant preparation → naming projection → participant items → builder
    → tail directives → persona catalogue (BC8-16)."""
    import chatcontext.pipeline as stage

    steps = [
        "init_streaming_context",
        "load_persona_assets",
        "build_history",
        "build_reminder_entry",
        "impersonation_identity",
        "gate_deliberate_tools",
        "effective_persona",
        "prepare_participant_context",
        "history_user_labels",
        "build_participant_context_items",
        "build_context",
        "apply_tail_directives",
        "attach_persona_catalog",
    ]
    calls: list[str] = []
    for name in steps:
        original = getattr(stage, name)

        def recorder(*args: Any, _name: str = name, _original: Any = original, **kwargs: Any) -> Any:
            calls.append(_name)
            return _original(*args, **kwargs)

        monkeypatch.setattr(stage, name, recorder)
    persona_turns(example_doc())
    first_turn = calls[: len(steps)]
    assert first_turn == steps


def test_s65_bc10_03_a_failed_discovery_fails_the_turn_and_the_next_turn_recomputes(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Scenario 65 through the stage (concurrent waiters are covered at scope level, T-21/T-23):
    the first persona turn's discovery raises and the turn fails; the entry is evicted, so the next
    persona turn of the same locked turn recomputes discovery instead of reusing the failure."""
    import chatcontext.participants.prepare as prepare

    real = prepare.discover_shared_references
    failures = iter([RuntimeError("candidate source down")])

    def flaky(*args: Any, **kwargs: Any) -> Any:
        error = next(failures, None)
        if error is not None:
            raise error
        return real(*args, **kwargs)

    monkeypatch.setattr(prepare, "discover_shared_references", flaky)
    doc = example_doc()
    doc["turn"]["co_responder_keys"] = ["sprocket"]
    cache.clear()
    with transaction.atomic():
        loaded = load_snapshot_rows(doc)
        inputs = snapshot_turn(doc, loaded)
        tomori = inputs.turn
        sprocket = dataclasses.replace(
            tomori, persona=next(p for p in tomori.all_personas if p.persona_nickname == "Sprocket")
        )

        def run(turn: ChatTurn) -> ChatTurnContext:
            return build_turn_context(turn, inputs.transport, transcripts=inputs.transcripts, config=StageConfig())

        with pytest.raises(RuntimeError, match="candidate source down"):
            run(tomori)
        recovered = run(sprocket)
        transaction.set_rollback(True)
    assert recovered.diagnostics["participants"]["discovery_cache_hit"] is False
    assert recovered.diagnostics["participants"]["external_calls"]["candidate_source_reads"] == 1


def test_s66_bc10_04_diagnostics_carry_no_snowflake_name_or_text() -> None:
    """Scenario 66 over a busy synthetic channel with 18-digit ids: nothing of the history survives
    into the serialized diagnostics."""
    doc = generate_snapshot(random.Random(66), messages=40, participants=6, memories_per_user=2, reminders_per_user=1)
    cache.clear()
    ctx = assemble(doc)
    serialized = json.dumps(ctx.diagnostics, ensure_ascii=False)
    assert not re.search(r"\d{17,}", serialized)
    words = set(re.findall(r"\w+", " ".join(m["content"] for m in doc["messages"])))
    names = {u["username"] for u in doc["users"]} | {"Tomori", "Ellen", "Bench", "general"}
    leaked = (words | names) & set(re.findall(r"\w+", serialized))
    assert not {w for w in leaked if not w.isdigit()}
    assert len(ctx.diagnostics["participants"]["rejection_counts"]) == 7


def test_bc9_10_step_3_gives_the_turn_a_recorder_only_when_the_surface_offers_an_action() -> None:
    """A replayed turn (no action: the snapshot's ChatTurn) gets none, so a replay never clears a live
    channel's entries; the same turn from a surface offering Regenerate gets one."""
    doc = example_doc()
    cache.clear()
    with transaction.atomic():
        loaded = load_snapshot_rows(doc)
        inputs = snapshot_turn(doc, loaded)
        offering = dataclasses.replace(inputs.turn, fast_regeneration_actions=("regenerate",))
        replayed, live = (
            build_turn_context(t, inputs.transport, transcripts=inputs.transcripts, config=StageConfig())
            for t in (inputs.turn, offering)
        )
        transaction.set_rollback(True)
    assert replayed.fast_regeneration_recorder is None
    assert live.fast_regeneration_recorder is not None
    assert live.fast_regeneration_recorder.channel_id == inputs.turn.locked_turn.channel_id
    assert live.context_items == replayed.context_items  # the prompt itself is the same
