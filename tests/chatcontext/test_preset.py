"""SillyTavern preset reassembly (participants.md R-17, R-18, R-19; T-46 preset half, T-52)."""

from __future__ import annotations

from itertools import pairwise

from chatcontext.core.builder import BuilderOutput, build_context, merge_for_strict_alternation
from chatcontext.core.directives import TailContext, apply_tail_directives
from chatcontext.core.idmap import MessageIdMap
from chatcontext.core.impersonation import ImpersonationIdentity
from chatcontext.core.preset import Preset, PresetNode, reassemble_with_preset
from chatcontext.core.types import ContextItem, ContextItemTag, TextPart
from tests.chatcontext.builders import profile_item
from tests.chatcontext.preset_turns import preset_inputs
from tests.chatcontext.turn_factory import U2

Tag = ContextItemTag


def test_t46_r17_profile_immediately_before_first_history_item() -> None:
    items = build_context(preset_inputs(Preset.from_markers("main", "charPersonality", "chatHistory"))).items
    tags = [i.metadata_tag for i in items]
    # Knowledge flushes after the first knowledge anchor (`main`), the profile right before history.
    assert tags == [
        Tag.SYSTEM_INSTRUCTION_BLOCK,
        Tag.KNOWLEDGE_SERVER_INFO,
        Tag.KNOWLEDGE_SERVER_MEMORIES,
        Tag.KNOWLEDGE_STICKERS,
        Tag.SYSTEM_PERSONALITY,
        Tag.KNOWLEDGE_USERS_IN_CONVERSATION,
        Tag.DIALOGUE_HISTORY,
        Tag.DIALOGUE_HISTORY,
        Tag.DIALOGUE_HISTORY,
        Tag.KNOWLEDGE_USER_STATUS,
        Tag.KNOWLEDGE_CURRENT_CONTEXT,
    ]
    # Without a dialogueExamples marker the preset shows no sample dialogue.
    assert Tag.DIALOGUE_SAMPLE not in tags


def test_t46_r18_tail_position_and_depth_nudge_count_only_dialogue() -> None:
    built = build_context(preset_inputs(Preset.from_markers("main", "charPersonality", "chatHistory")))
    nudge = ContextItem(role="user", parts=[TextPart("N")], metadata_tag=Tag.DIALOGUE_HISTORY)
    output = BuilderOutput(items=built.items, nudge_item=nudge, nudge_injection_depth=2)
    result = apply_tail_directives(
        built.items,
        output,
        TailContext(persona_nickname="Tomori", is_stop_response=True),
        history=[],
        id_map=MessageIdMap(),
    )
    assert [i.message_id or i.text for i in result[-7:]] == [
        "m1",
        "N",
        "m2",
        "m3",
        "[System: presence]",
        "[System: clock]",
        "[System: The user has requested you to stop your current generation.]",
    ]


def test_r17_custom_nodes_and_marker_order() -> None:
    preset = Preset(
        (
            PresetNode.custom("intro", "Write as {{char}} for {{user}}."),
            PresetNode.marker("charPersonality"),
            PresetNode.marker("main"),
            PresetNode.marker("dialogueExamples"),
            PresetNode.custom("jb", "Stay vivid.", role="user"),
            PresetNode.marker("chatHistory"),
            PresetNode(identifier="off", is_marker=False, content="disabled", enabled=False),
        )
    )
    items = build_context(preset_inputs(preset, triggerer_name="Ann")).items
    summary = [(i.role, i.metadata_tag, i.text if i.metadata_tag is None else None) for i in items]
    assert summary[:2] == [("system", None, "Write as Tomori for Ann."), ("system", Tag.SYSTEM_PERSONALITY, None)]
    tags = [i.metadata_tag for i in items]
    # Knowledge flushes once, after the first knowledge anchor (charPersonality).
    assert tags[2:5] == [Tag.KNOWLEDGE_SERVER_INFO, Tag.KNOWLEDGE_SERVER_MEMORIES, Tag.KNOWLEDGE_STICKERS]
    assert tags[5] == Tag.SYSTEM_INSTRUCTION_BLOCK
    # The dialogue group flushes before the first dialogue anchor (dialogueExamples), exactly once.
    assert tags[6:9] == [Tag.KNOWLEDGE_USERS_IN_CONVERSATION, Tag.DIALOGUE_SAMPLE, Tag.DIALOGUE_SAMPLE]
    assert (items[9].role, items[9].text) == ("user", "Stay vivid.")
    assert tags.count(Tag.KNOWLEDGE_USERS_IN_CONVERSATION) == 1
    assert "disabled" not in [i.text for i in items]


def test_r17_without_dialogue_markers_the_group_flushes_after_the_walk() -> None:
    items = build_context(preset_inputs(Preset.from_markers("main"))).items
    tags = [i.metadata_tag for i in items]
    assert tags[:5] == [
        Tag.SYSTEM_INSTRUCTION_BLOCK,
        Tag.KNOWLEDGE_SERVER_INFO,
        Tag.KNOWLEDGE_SERVER_MEMORIES,
        Tag.KNOWLEDGE_STICKERS,
        Tag.KNOWLEDGE_USERS_IN_CONVERSATION,
    ]
    # Leftovers follow in native order: the persona item, then history; the tail slot stays last.
    assert tags[5:] == [
        Tag.SYSTEM_PERSONALITY,
        Tag.DIALOGUE_HISTORY,
        Tag.DIALOGUE_HISTORY,
        Tag.DIALOGUE_HISTORY,
        Tag.KNOWLEDGE_USER_STATUS,
        Tag.KNOWLEDGE_CURRENT_CONTEXT,
    ]


def test_r17_impersonation_turns_ignore_the_preset() -> None:
    identity = ImpersonationIdentity(U2, "Bob")
    preset = Preset.from_markers("chatHistory", "main")
    items = build_context(preset_inputs(preset, impersonation=identity)).items
    assert items[0].metadata_tag == Tag.SYSTEM_INSTRUCTION_BLOCK


def test_t52_r19_metadata_survives_preset_and_strict_alternation() -> None:
    built = build_context(preset_inputs(Preset.from_markers("main", "charPersonality", "chatHistory")))
    merged = merge_for_strict_alternation(built.items)
    roles = [i.role for i in merged]
    assert all(a != b for a, b in pairwise(roles))
    carrier = next(i for i in merged if i.metadata_tag == Tag.KNOWLEDGE_USERS_IN_CONVERSATION)
    original = profile_item()
    assert carrier.participant_target_index == original.participant_target_index
    assert carrier.conversation_users == original.conversation_users
    assert carrier.memory_projection == original.memory_projection


def test_reassemble_keeps_unknown_markers_harmless() -> None:
    items = [
        ContextItem(role="system", parts=[TextPart("sys")], metadata_tag=Tag.SYSTEM_INSTRUCTION_BLOCK),
        ContextItem(role="user", parts=[TextPart("h")], metadata_tag=Tag.DIALOGUE_HISTORY),
    ]
    result = reassemble_with_preset(
        items, Preset.from_markers("worldInfoBefore", "chatHistory", "main"), char_name="T", user_name="U"
    )
    assert [i.text for i in result] == ["h", "sys"]
