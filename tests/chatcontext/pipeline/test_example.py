"""End to end over the project's example (examples/tidepool-workbench.snapshot.json): every point of
examples/README.md, asserted on `build_turn_context` run against rows loaded into the test database."""

from __future__ import annotations

import json
import re
from collections.abc import Callable

import pytest

from chatcontext.core.serialize import dumps_output, turn_output
from chatcontext.core.types import ChatTurnContext, ContextItemTag, SimplifiedMessage
from tests.chatcontext.pipeline.conftest import example_doc

pytestmark = pytest.mark.django_db

DOC = example_doc()
USER = {u["username"]: u["disc_id"] for u in DOC["users"]}
PRIYA, DARIO, WREN, TOBIAS = USER["priya.k"], USER["dario_m"], USER["wrenfield"], USER["tobias.r"]
# The channel's messages in order: Priya's greeting, Wren's door code, Dario's two messages, the memory
# notice, Sprocket's webhook message, Tobias's reply to it, Priya's image, voice message and mention.
(GREETING, DOOR_CODE, DARIO_ASKS, DARIO_OFFERS, NOTICE, SPROCKET, TOBIAS_REPLY, IMAGE, VOICE, TRIGGER) = (
    m["id"] for m in DOC["messages"]
)


@pytest.fixture
def ctx(assembled: Callable[..., ChatTurnContext]) -> ChatTurnContext:
    return assembled(example_doc())


def all_text(ctx: ChatTurnContext) -> str:
    return dumps_output(turn_output(ctx))


def entry(ctx: ChatTurnContext, message_id: str) -> SimplifiedMessage | None:
    for e in ctx.simplified_messages:
        if e.id == message_id or message_id in (e.combined_message_ids or []):
            return e
    return None


def profile_text(ctx: ChatTurnContext) -> str:
    items = [i for i in ctx.context_items if i.metadata_tag == ContextItemTag.KNOWLEDGE_USERS_IN_CONVERSATION]
    assert len(items) == 1
    return items[0].text


def profile_block(ctx: ChatTurnContext, heading: str) -> list[str]:
    """The lines of one person's profile entry (heading line to the blank line)."""
    lines = profile_text(ctx).split("\n")
    start = next(i for i, line in enumerate(lines) if line == heading or line.startswith(heading + " ("))
    block = []
    for line in lines[start:]:
        if not line:
            break
        block.append(line)
    return block


def test_privacy_full_wren_appears_nowhere_and_her_message_has_no_ref(ctx: ChatTurnContext) -> None:
    """BC2-10, U-1, P-01: a FULL author's message, memory, saved nickname and id are absent."""
    text = all_text(ctx)
    for secret in ("4471", "side door", "night shifts", "Birdie", "Wren", "wrenfield", WREN):
        assert secret not in text
    assert entry(ctx, DOOR_CODE) is None
    assert DOOR_CODE not in ctx.message_id_map.as_dict().values()


def test_partial_dario_merges_his_two_messages_with_the_reaction_and_has_no_enrichments(ctx: ChatTurnContext) -> None:
    """BC4-01/02, BC3-08, P-03: PARTIAL shows messages but no pronouns, appearance or memories."""
    dario = entry(ctx, DARIO_ASKS)
    assert dario is not None and dario.id == DARIO_ASKS and dario.author_id == DARIO
    assert dario.combined_message_ids == [DARIO_ASKS, DARIO_OFFERS]
    assert dario.individual_contents is not None and dario.combined_created_ats == [
        DOC["messages"][2]["created_timestamp"],
        DOC["messages"][3]["created_timestamp"],
    ]
    assert dario.individual_contents[0].endswith("\n[System: Reactions on this message: 🔥 x2 by Priya, Tobias]")
    assert profile_block(ctx, "Dario") == ["Dario (Mention: @{Dario}; Aliases: @{dario_m})"]
    for withheld in ("he/him", "paint-stained", "vintage radios"):
        assert withheld not in all_text(ctx)


def test_blacklisted_tobias_keeps_his_message_but_not_his_memory_or_saved_nickname(ctx: ChatTurnContext) -> None:
    """P-06: blacklisted users stay in context with their roles; memories and saved names do not."""
    reply = entry(ctx, TOBIAS_REPLY)
    assert reply is not None and reply.author_id == TOBIAS and reply.author_name == "Tobias"
    assert "Saturday market" not in all_text(ctx)
    assert not re.search(r"\bToby\b", all_text(ctx))
    assert profile_block(ctx, "Tobias") == [
        "Tobias (Mention: @{Tobias}; Aliases: @{tobias.r})",
        "- Server Roles: Moderator",
    ]


def test_bot_memory_notice_is_a_system_entry(ctx: ChatTurnContext) -> None:
    """BC6-05/06, BC3-21: the bot's embed reads as a notice authored by the platform."""
    notice = entry(ctx, NOTICE)
    assert notice is not None and (notice.author_id, notice.author_name) == ("system-embed", "System")
    assert notice.content == (
        "[System: 📝 Tomori Learned Something About Pree!\nPriya is building a fume extractor for the soldering bench]"
    )
    item = next(i for i in ctx.context_items if i.message_id == NOTICE)
    assert item.text == notice.content  # a platform entry carries no speaker label


def test_sprocket_speaks_through_its_webhook_as_the_persona(ctx: ChatTurnContext) -> None:
    """BC3-10, U-4, H-18/H-19: the webhook message is the persona's; its public attribute is known."""
    sprocket = next(p for p in ctx.turn.all_personas if p.persona_nickname == "Sprocket")
    said = entry(ctx, SPROCKET)
    assert said is not None
    assert (said.author_type, said.persona_name, said.author_id) == ("persona", "Sprocket", str(sprocket.persona_id))
    assert next(i for i in ctx.context_items if i.message_id == SPROCKET).role == "user"  # Tomori's turn
    assert profile_block(ctx, "Sprocket") == [
        "Sprocket",
        "- Known Information about Sprocket:",
        "  - Measures everything in millimetres",
    ]


def test_tobias_reply_names_sprockets_message_by_its_ref(ctx: ChatTurnContext) -> None:
    """BC3-05/06, U-3, BC5-02: the reply annotation addresses both messages by opaque ids."""
    reply = entry(ctx, TOBIAS_REPLY)
    assert reply is not None and reply.content is not None
    match = re.fullmatch(
        r"\[System: This message \(ID: (ref_\d+)\) by Tobias is referring to a previous message \(ID: (ref_\d+)\) "
        r"by Sprocket saying: BEEP BOOP! Bed levelling is my favourite hobby!\]"
        r"\nSprocket, you say that about every hobby",
        reply.content,
    )
    assert match is not None
    assert [ctx.message_id_map.resolve(key) for key in match.groups()] == [TOBIAS_REPLY, SPROCKET]


def test_the_image_is_its_own_entry_with_a_media_descriptor(ctx: ChatTurnContext) -> None:
    """BC4-01 (media never merges), BC7-05/06: one descriptor and its attribution hint."""
    image = entry(ctx, IMAGE)
    assert image is not None and image.id == IMAGE and image.combined_message_ids is None
    assert entry(ctx, VOICE) is not image and entry(ctx, GREETING) is not image
    item = next(i for i in ctx.context_items if i.message_id == IMAGE)
    assert item.media_descriptors and [(d.kind, d.filename) for d in item.media_descriptors] == [
        ("image", "benchy.png")
    ]
    media_id = item.media_descriptors[0].media_id
    assert ctx.message_id_map.resolve(media_id) == IMAGE
    assert item.text.endswith(f"\n[System: This image (Media ID: {media_id}) was sent by Pree]")


def test_the_voice_message_shows_its_known_transcript(ctx: ChatTurnContext) -> None:
    """BC3-18, BC11-01/02: the cached transcript renders (chat mode unset = off); nothing is transcribed."""
    voice = entry(ctx, VOICE)
    assert voice is not None and voice.content is not None
    assert "[System: This was sent as a voice message.]\ntomori, do we still have the blue filament" in voice.content
    assert ctx.diagnostics["history"]["voice_transcriptions"] == 0


def test_prees_profile_memories_reminder_and_tomoris_task(ctx: ChatTurnContext) -> None:
    """H-14, H-15, H-21, R-06: her lineage and global memories only, her reminder, Tomori's self-task."""
    pree = profile_block(ctx, "Pree")
    assert pree[0] == "Pree (Mention: @{Priya K}; Aliases: @{Pree}, @{Priya}, @{priya.k})"
    memories = next(line for line in pree if line.startswith("- Memories: "))
    assert re.fullmatch(
        r"- Memories: ID:\d+ Pree is building a fume extractor for the soldering bench; "
        r"ID:\d+ Pree prefers metric screws",
        memories,
    )
    assert any('"Remind Priya to order more M3 screws"' in line for line in pree)
    assert "wave hello" not in all_text(ctx)  # Sprocket's lineage
    tasks = profile_text(ctx).split("Tasks you scheduled for yourself that are still pending:\n")
    assert len(tasks) == 2 and '"Post the weekly tool-return checklist"' in tasks[1]
    assert "(destination: #workbench)" in tasks[1]


def test_tomoris_private_attribute_only_in_her_own_persona_block(ctx: ChatTurnContext) -> None:
    """D-13, H-19: private attributes never leave the persona's own block."""
    holders = [i.metadata_tag for i in ctx.context_items if "glue gun" in i.text]
    assert holders == [ContextItemTag.SYSTEM_PERSONALITY]
    output = turn_output(ctx)
    assert "glue gun" not in json.dumps(output["participant_target_index"])
    assert "glue gun" not in json.dumps(output["simplified_messages"])


def test_exclusion_log_names_who_and_why_without_text(ctx: ChatTurnContext) -> None:
    """Prompt-record exclusion log: BC2-10 history exclusions plus P-03/P-06 profile exclusions."""
    assert {"message_id": DOOR_CODE, "author_id": WREN, "reason": "privacy_full"} in ctx.exclusions
    assert {"user_id": DARIO, "reason": "privacy_partial", "scope": "profile"} in ctx.exclusions
    assert {"user_id": TOBIAS, "reason": "blacklisted", "scope": "profile"} in ctx.exclusions
    assert "4471" not in json.dumps(ctx.exclusions)


def test_s66_bc10_04_diagnostics_are_counts_only(ctx: ChatTurnContext) -> None:
    """Scenario 66, BC10-04: no ids, aliases, names or message text in the diagnostics, and all
    seven rejection keys."""
    serialized = json.dumps(ctx.diagnostics, ensure_ascii=False)
    forbidden = {m["id"] for m in DOC["messages"]} | {u["disc_id"] for u in DOC["users"]}
    forbidden |= {DOC["server"]["disc_id"], DOC["channel"]["id"], DOC["channel"]["name"], DOC["server"]["name"]}
    forbidden |= {u["username"] for u in DOC["users"]} | {u["global_name"] for u in DOC["users"]}
    forbidden |= {"Pree", "Priya K", "Tomori", "Sprocket", "printer", "filament"}
    tokens = {t.lower() for t in re.findall(r"[\w.-]+", serialized)}
    assert not {word.lower() for f in forbidden for word in f.split()} & tokens
    assert set(ctx.diagnostics["participants"]["rejection_counts"]) == {
        "ineligible_state", "bot", "non_member", "ambiguous_alias", "existing_participant", "blocked_source",
        "missing_guild",
    }  # fmt: skip
