"""Rules of build-context.md whose behaviour no other test pinned exactly (found while writing
docs/spec-coverage.md): BC2-07, BC3-24, BC5-05, BC6-01 and the conditions of BC8-06."""

from __future__ import annotations

import re
from dataclasses import replace
from datetime import timedelta
from typing import Any

import pytest
from django.core.cache import cache

from chatcontext import repository
from chatcontext.core.config import StageConfig
from chatcontext.core.directives import TailContext, continuation_directive
from chatcontext.core.idmap import MessageIdMap
from chatcontext.core.memory_transport import InMemoryTransport
from chatcontext.core.transcripts import MemoryTranscriptCache
from chatcontext.core.types import (
    Attachment,
    Embed,
    ForwardSnapshot,
    MessageReference,
    Reaction,
    ReactionEmoji,
)
from chatcontext.history import build_history
from personas import models as m
from tests.chatcontext.builders import ANN, BOB, BOT, NOW, SERVER, U1, U2, make_turn, msg, run_history
from tests.chatcontext.pipeline.conftest import assemble, example_doc
from tests.chatcontext.turn_factory import tomori_entry

# --- BC2-07 ---------------------------------------------------------------------------------------


@pytest.mark.django_db
def test_bc2_07_blocks_load_only_in_a_guild_for_a_persona_with_both_ids() -> None:
    server = m.Server.objects.create(server_disc_id=SERVER.server_disc_id, name="Cafe")
    tomori = m.Persona.objects.create(server=server, persona_nickname="Tomori")
    m.PersonaUserBlock.objects.create(
        server=server,
        persona=tomori,
        user_disc_id=U2,
        block_type="block",
        reason="spam",
        expires_at=repository.ms_to_datetime(NOW) + timedelta(minutes=90),
    )
    persona = repository.persona_info(tomori)
    guild = repository.server_config(server)
    messages = [msg("m1", BOB, "bob words"), msg("m2", ANN, "hi")]

    def entry_ids(**turn_changes: Any) -> list[str]:
        turn = make_turn(messages[-1], **turn_changes)
        result = build_history(
            turn, InMemoryTransport(messages), MessageIdMap(), config=StageConfig(), transcripts=MemoryTranscriptCache()
        )
        return [e.id for e in result.simplified_messages]

    assert entry_ids(persona=persona, personas=(persona,), server=guild) == ["synthetic-user-block-m1", "m2"]
    assert entry_ids(persona=persona, personas=(persona,), server=replace(guild, is_dm=True)) == ["m1", "m2"]
    no_id = replace(persona, persona_id=None)
    assert entry_ids(persona=no_id, personas=(no_id,), server=guild) == ["m1", "m2"]
    no_server = replace(persona, server_id=None)
    assert entry_ids(persona=no_server, personas=(no_server,), server=guild) == ["m1", "m2"]


# --- BC3-24 ---------------------------------------------------------------------------------------

PDF = Attachment(id="f1", name="notes.pdf", url="https://cdn.example/notes.pdf", content_type="application/pdf")
PREVIEW = Embed(title="T")
THUMBS = (Reaction(ReactionEmoji(name="👍"), 1, users=(U1,)),)
FILE_HINT = (
    "[System: A file named `notes.pdf` is attached (message ID: media_1). "
    "Use `read_file` with this message ID to read its contents, only if needed.]"
)
TAIL = "main text\n[System: Reactions on this message: 👍 x1 by Annie]\n[System: Link preview embed content: T] "


def test_bc3_24_final_content_order_reply() -> None:
    """Reply annotation \\n content \\n reactions \\n link previews, then the media hints joined by a space."""
    reply = msg("m2", ANN, "main text", reply_to="m1", reactions=THUMBS, embeds=(PREVIEW,), attachments=(PDF,))
    run = run_history([msg("m1", BOB, "q"), reply], users=(ANN,))
    assert run.entry("m2").content == (
        "[System: This message (ID: ref_1) by Ann is referring to a previous message (ID: ref_2) by Bob saying: q]\n"
        + TAIL
        + FILE_HINT
    )


def test_bc3_24_final_content_order_forward() -> None:
    """Forward blocks come first, before the message's own text."""
    wrapper = msg(
        "w1",
        ANN,
        "main text",
        reference=MessageReference(type="forward", message_id="o1"),
        message_snapshots=(ForwardSnapshot(content="deep  words", author=BOB),),
        reactions=THUMBS,
        embeds=(PREVIEW,),
        attachments=(PDF,),
    )
    run = run_history([wrapper], users=(ANN,))
    assert run.entries[0].content == (
        "[System: Ann forwarded a message by Bobby from another channel saying: deep words]\n" + TAIL + FILE_HINT
    )


# --- BC5-05 ---------------------------------------------------------------------------------------


@pytest.mark.django_db
def test_bc5_05_no_raw_message_snowflake_in_any_prompt_text() -> None:
    """The example's message ids are 19-digit snowflakes, so a leaked one is unmistakable."""
    doc = example_doc()
    snowflakes = [message["id"] for message in doc["messages"]]
    cache.clear()
    ctx = assemble(doc)
    prompt = "\n".join(item.text for item in ctx.context_items)
    assert re.search(r"\bref_\d+\b", prompt)  # the reply is addressed, by its opaque key
    assert [s for s in snowflakes if s in prompt] == []
    assert set(ctx.message_id_map.as_dict().values()) <= set(snowflakes)


# --- BC6-01 ---------------------------------------------------------------------------------------

PREAMBLE = "[System: The following content came from a system-produced embed]"


@pytest.mark.parametrize(
    ("kind", "expected"),
    [
        ("memory_learning", "[System: T\nBody]"),
        ("reminder_set", f"{PREAMBLE}\nT\nBody"),
        ("system_injection", "[System: Body]"),
        ("scene_directive", "[System: Body]"),
        ("compact_summary", "[System: ## T\nBody]"),
        ("compact_refresh", "[System: ## T\nBody]"),
        ("reward", "[System: Body]"),
        ("punish", "[System: Body]"),
        ("user_info_update", "[System: T\nBody]"),
        ("user_moderation", "[System: T\nBody]"),
    ],
)
def test_bc6_01_every_target_kind_is_a_system_notice(kind: str, expected: str) -> None:
    notice = msg("m1", BOT, embeds=(Embed(title="T", description="Body", footer_text=f"[tomori:v1:{kind}]"),))
    (entry,) = run_history([notice]).entries
    assert (entry.content, entry.author_id, entry.author_name) == (expected, "system-embed", "System")


def test_bc6_01_reset_is_a_target_kind_too() -> None:
    """A reset embed is a history marker (BC2-05); as a CV2 notice (never a marker) it still renders."""
    container = {"type": 17, "components": [{"type": 10, "content": "### 🧹 Conversation History Cleared\nBody"}]}
    (entry,) = run_history([msg("m1", BOT, components=(container,))]).entries
    assert (entry.content, entry.author_id) == (f"{PREAMBLE}\nBody", "system-embed")


@pytest.mark.parametrize("kind", ["diagnostic", "reply_context"])
def test_bc6_01_protocol_kinds_outside_the_targets_are_not_notices(kind: str) -> None:
    embed = Embed(title="T", description="Body", footer_text=f"[tomori:v1:{kind}]")
    assert run_history([msg("m1", BOT, embeds=(embed,))]).entries == []
    # A persona reply keeps its own text and is not re-attributed to the system.
    (entry,) = run_history([msg("m1", BOT, "hello", embeds=(embed,))]).entries
    assert (entry.content, entry.author_id) == ("hello", BOT.id)


# --- BC8-06 (with BC7-04) -----------------------------------------------------------------------


@pytest.mark.parametrize(
    "blocker",
    [
        {"is_manually_triggered": False},
        {"is_user_impersonation": True},
        {"is_self_reminder": True},
        {"is_scene_turn": True},
        {"reasoning_query": "why"},
        {"has_reminder_recipient": True},
    ],
)
def test_bc8_06_bc7_04_continuation_needs_every_condition(blocker: dict[str, Any]) -> None:
    """BC8-06: manual trigger, no scene, no impersonation (BC7-04), no reasoning query, no reminder
    recipient, no self reminder, non-empty history — each missing condition suppresses the
    directive, with or without a prefill."""
    own_message = [tomori_entry("m1", "and so")]
    context = TailContext(persona_nickname="Tomori", is_manually_triggered=True)
    assert continuation_directive(context, own_message) == "[Continue your last message without repeating it]"
    assert continuation_directive(context, []) is None
    blocked = replace(context, **blocker)
    assert continuation_directive(blocked, own_message) is None
    assert continuation_directive(replace(blocked, manual_prefill="Hm"), own_message) is None
