"""A preset's world-info and card markers in real turns (issue 31 item 4): fired lorebook entries go
where the preset's `worldInfoBefore`/`worldInfoAfter` are, and a persona's card fills `charPersonality`,
`scenario`, the main prompt and the post-history slot; what the local test LLM server receives is
what a provider would (README "Presets")."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from personas.actions import Actor
from personas.actions.cards import import_lorebook
from personas.character_data import LorebookData, LoreEntry
from personas.models import PersonaCard
from tests.bot.fake_llm import FakeLLMServer
from tests.bot.playground.conftest import Demo
from tests.personas.presets.preset_files import real_preset
from tests.personas.presets.turns import import_preset, post

BOOK = LorebookData(
    name="Night Owls lore",
    entries=(
        LoreEntry(uid=1, keys=("observatory",), content="BEFORE: {{char}} keeps the observatory key."),
        LoreEntry(uid=2, keys=("observatory",), content="AFTER: the dome is cold.", position="after_char"),
        LoreEntry(uid=3, keys=("observatory",), content="DEEP: a comet passes.", position="at_depth", depth=0),
    ),
)
CARD = {
    "personality": "PERSONALITY: quiet and wry.",
    "scenario": "SCENARIO: a rooftop at night with {{user}}.",
    "system_prompt": "{{original}} Keep {{char}} mysterious.",
    "post_history_instructions": "POST: answer in two sentences.",
}


@pytest.fixture
def lore(demo: Demo) -> None:
    import_lorebook(demo.server, BOOK, persona=None, actor=Actor.system("tests"))


def sent(server: FakeLLMServer) -> list[str]:
    return [str(message["content"]) for message in server.requests[-1]["messages"]]


def index_of(messages: list[str], start: str) -> int:
    [index] = [i for i, text in enumerate(messages) if text.startswith(start)]
    return index


def moved_markers() -> dict[str, Any]:
    """SillyTavern's default preset with `worldInfoBefore` first and `worldInfoAfter` between the
    dialogue examples and the chat history: neither where the native order puts world info."""
    doc = real_preset()
    [order] = [o["order"] for o in doc["prompt_order"] if o["character_id"] == 100001]
    moved = {e["identifier"]: e for e in order if e["identifier"] in ("worldInfoBefore", "worldInfoAfter")}
    order[:] = [e for e in order if e["identifier"] not in moved]
    order.insert(0, moved["worldInfoBefore"])
    order.insert(next(i for i, e in enumerate(order) if e["identifier"] == "chatHistory"), moved["worldInfoAfter"])
    return doc


def test_world_info_goes_where_the_presets_markers_are(demo: Demo, llm: FakeLLMServer, lore: None, tmp_path: Path):
    import_preset(tmp_path, moved_markers(), "Tomori")

    [record] = post(demo, "tomori, the observatory tonight?").records

    tags = [item["tag"] for item in record.context_items]
    assert tags == [
        "world_info_before",
        None,  # the preset's main prompt
        "system_instruction_block",
        "knowledge_server_info",
        "knowledge_server_memories",
        "knowledge_emojis",
        "system_personality",
        "knowledge_users_in_conversation",
        "dialogue_sample",
        "dialogue_sample",
        "world_info_after",
        "dialogue_history",
        "world_info_at_depth",  # at depth 0: after the newest message, as without a preset
        "knowledge_user_status",
        "knowledge_current_context",
    ]
    messages = sent(llm)
    assert messages[0] == "BEFORE: Tomori keeps the observatory key."
    assert index_of(messages, "AFTER:") < min(i for i, m in enumerate(messages) if "observatory tonight?" in m)


def test_a_preset_without_the_markers_keeps_world_info_beside_the_persona(
    demo: Demo, llm: FakeLLMServer, lore: None, tmp_path: Path
):
    doc = real_preset()
    for order in doc["prompt_order"]:
        order["order"] = [e for e in order["order"] if not e["identifier"].startswith("worldInfo")]
    import_preset(tmp_path, doc, "Tomori")

    [record] = post(demo, "tomori, the observatory tonight?").records

    tags = [item["tag"] for item in record.context_items]
    persona = tags.index("system_personality")
    assert tags[persona - 1 : persona + 2] == ["world_info_before", "system_personality", "world_info_after"]


def test_the_cards_fields_fill_the_presets_slots(demo: Demo, llm: FakeLLMServer, tmp_path: Path):
    PersonaCard.objects.create(persona=demo.tomori, **CARD)
    import_preset(tmp_path, real_preset(), "Tomori")  # …, charDescription, charPersonality, scenario, nsfw, …

    [record] = post(demo, "tomori, hello").records

    messages = sent(llm)
    main = "Write Tomori's next reply in a fictional chat between Tomori and Minnie."
    assert messages[0] == f"{main} Keep Tomori mysterious."  # {{original}}: the preset's main prompt
    assert messages[1].startswith("You are Tomori")  # the platform's instruction still follows
    persona = index_of(messages, "Tomori is a calm night-shift librarian.")
    # charDescription takes the persona's item, charPersonality the card's personality, then scenario.
    assert messages[persona + 1 : persona + 3] == [
        "PERSONALITY: quiet and wry.",
        "SCENARIO: a rooftop at night with Minnie.",
    ]
    tags = [item["tag"] for item in record.context_items]
    assert tags[tags.index("system_personality") + 1 : tags.index("system_personality") + 3] == [None, None]
    # The post-history instructions take the preset's `jailbreak` slot, after the conversation.
    post_history = index_of(messages, "POST:")
    assert messages[post_history - 1] == "Minnie: tomori, hello"


def test_a_card_without_a_preset_leaves_the_prompt_as_it_was(demo: Demo, llm: FakeLLMServer):
    PersonaCard.objects.create(persona=demo.tomori, **CARD)

    [record] = post(demo, "tomori, hello").records

    for marker in ("PERSONALITY", "SCENARIO", "POST", "mysterious"):
        assert not any(marker in message for message in sent(llm))
    tags = [item["tag"] for item in record.context_items]
    assert tags[0] == "system_instruction_block" and None not in tags
