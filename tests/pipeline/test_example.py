"""End to end over the shared example: every bullet of shared/examples/README.md, asserted on
`build_turn_context` run against rows loaded into the test database."""

from __future__ import annotations

import json
import re
from collections.abc import Callable

import pytest

from chatcontext.serialize import dumps_output, turn_output
from chatcontext.types import ChatTurnContext, ContextItemTag
from tests.pipeline.conftest import example_doc

pytestmark = pytest.mark.django_db


@pytest.fixture
def ctx(assembled: Callable[..., ChatTurnContext]) -> ChatTurnContext:
    return assembled(example_doc())


def all_text(ctx: ChatTurnContext) -> str:
    return dumps_output(turn_output(ctx))


def entry(ctx: ChatTurnContext, message_id: str):  # type: ignore[no-untyped-def]
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


def test_privacy_full_rei_appears_nowhere_and_6002_has_no_ref(ctx: ChatTurnContext) -> None:
    """BC2-10, U-1, P-01: a FULL author's message, memory and saved nickname are absent."""
    text = all_text(ctx)
    for secret in ("4 Harbor Lane", "Rei lives near the station", "Ray", '"13"'):
        assert secret not in text
    assert entry(ctx, "6002") is None
    assert "6002" not in ctx.message_id_map.as_dict().values()


def test_blacklisted_okabe_keeps_his_message_but_not_his_memory(ctx: ChatTurnContext) -> None:
    """P-06: blacklisted users stay in context; their memories do not."""
    okabe = entry(ctx, "6007")
    assert okabe is not None and okabe.author_id == "14"
    assert "Friday game night" not in all_text(ctx)
    assert profile_block(ctx, "Okabe")[1:] == ["- Server Roles: Moderator"]


def test_partial_jun_merges_6003_and_6004_with_the_reaction_and_has_no_enrichments(ctx: ChatTurnContext) -> None:
    """BC4-01/02, BC3-08, P-03: PARTIAL shows messages but no personal enrichments."""
    jun = entry(ctx, "6003")
    assert jun is not None and jun.id == "6003"
    assert jun.combined_message_ids == ["6003", "6004"]
    assert jun.individual_contents is not None and jun.combined_created_ats == [1764615720000, 1764615780000]
    assert "[System: Reactions on this message: 👍 x2 by" in jun.individual_contents[0]
    assert profile_block(ctx, "Jun") == ["Jun (Mention: @{Jun})"]


def test_bot_memory_embed_6005_is_a_system_entry(ctx: ChatTurnContext) -> None:
    """BC6-05/06, BC3-21."""
    notice = entry(ctx, "6005")
    assert notice is not None and notice.author_id == "system-embed" and notice.author_name == "System"
    assert notice.content == "[System: 📝 Tomori Learned Something!\nMina is studying for a chemistry exam]"


def test_6006_is_authored_by_the_persona_pip_through_its_webhook(ctx: ChatTurnContext) -> None:
    """BC3-10, U-4."""
    pip = next(p for p in ctx.turn.all_personas if p.persona_nickname == "Pip")
    squawk = entry(ctx, "6006")
    assert squawk is not None
    assert (squawk.author_type, squawk.persona_name, squawk.author_id) == ("persona", "Pip", str(pip.persona_id))


def test_6007_refers_to_pips_message_by_its_ref(ctx: ChatTurnContext) -> None:
    """BC3-05/06, U-3, BC5-02."""
    reply = entry(ctx, "6007")
    assert reply is not None and reply.content is not None
    match = re.search(r"previous message \(ID: (ref_\d+)\) by Pip saying: SQUAWK!", reply.content)
    assert match is not None
    assert ctx.message_id_map.resolve(match.group(1)) == "6006"


def test_6008_is_its_own_entry_with_a_media_descriptor(ctx: ChatTurnContext) -> None:
    """BC4-01 (media never merges), BC7-05."""
    cat = entry(ctx, "6008")
    assert cat is not None and cat.id == "6008" and cat.combined_message_ids is None
    assert entry(ctx, "6009") is not cat and entry(ctx, "6010") is not cat
    item = next(i for i in ctx.context_items if i.message_id == "6008")
    assert item.media_descriptors and [d.kind for d in item.media_descriptors] == ["image"]
    assert ctx.message_id_map.resolve(item.media_descriptors[0].media_id) == "6008"


def test_6009_shows_the_known_voice_transcript(ctx: ChatTurnContext) -> None:
    """BC3-18, BC11-02."""
    voice = entry(ctx, "6009")
    assert voice is not None and voice.content is not None
    assert "[System: This was sent as a voice message.]\nhey tomori, is the library open tomorrow" in voice.content


def test_minas_profile_memories_reminder_and_tomoris_task(ctx: ChatTurnContext) -> None:
    """H-14, H-15, H-21, R-06: lineage and global memories only, reminders, self-tasks."""
    mina = "\n".join(profile_block(ctx, "Minnie"))
    assert "Mina is studying for a chemistry exam" in mina and "Mina prefers green tea" in mina
    assert "Remind Mina about the chemistry exam" in mina
    assert "Mina taught Pip a whistle" not in all_text(ctx)
    tasks = profile_text(ctx).split("Tasks you scheduled for yourself that are still pending:")
    assert len(tasks) == 2 and "Post the book-club poll" in tasks[1]


def test_tomoris_private_attribute_only_in_her_own_persona_block(ctx: ChatTurnContext) -> None:
    """D-13, H-19: private attributes never leave the persona's own block."""
    holders = [i.metadata_tag for i in ctx.context_items if "afraid of thunder" in i.text]
    assert holders == [ContextItemTag.SYSTEM_PERSONALITY]
    output = turn_output(ctx)
    assert "afraid of thunder" not in json.dumps(output["participant_target_index"])
    assert "afraid of thunder" not in json.dumps(output["simplified_messages"])


def test_exclusion_log_names_who_and_why_without_text(ctx: ChatTurnContext) -> None:
    """Prompt-record exclusion log: BC2-10 history exclusions plus P-03/P-06 profile exclusions."""
    assert {"message_id": "6002", "author_id": "13", "reason": "privacy_full"} in ctx.exclusions
    assert {"user_id": "12", "reason": "privacy_partial", "scope": "profile"} in ctx.exclusions
    assert {"user_id": "14", "reason": "blacklisted", "scope": "profile"} in ctx.exclusions
    assert "Harbor" not in json.dumps(ctx.exclusions)


def test_s66_bc10_04_diagnostics_are_counts_only(ctx: ChatTurnContext) -> None:
    """Scenario 66, BC10-04: no ids, aliases, names or message text in the diagnostics, and all
    seven rejection keys (the 18-digit snowflake variant is in test_stage.py)."""
    serialized = json.dumps(ctx.diagnostics, ensure_ascii=False)
    doc = example_doc()
    # The example's two-digit user ids are indistinguishable from counts; the property test over
    # 18-digit snowflakes covers user ids.
    forbidden = {m["id"] for m in doc["messages"]} | {"9000", "9100", "4100", "4200"}
    forbidden |= {u["username"] for u in doc["users"]} | {u["global_name"] for u in doc["users"]}
    forbidden |= {"Minnie", "Mina-chan", "Tomori", "Pip", "lounge", "Night Owls", "chemistry"}
    tokens = set(re.findall(r"[\w-]+", serialized))
    assert not {f.lower() for f in forbidden} & {t.lower() for t in tokens}
    assert set(ctx.diagnostics["participants"]["rejection_counts"]) == {
        "ineligible_state", "bot", "non_member", "ambiguous_alias", "existing_participant", "blocked_source",
        "missing_guild",
    }  # fmt: skip
