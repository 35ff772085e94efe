"""SillyTavern preset reassembly of the native builder's items (participants.md R-17, R-18).

A preset is an ordered list of nodes: *markers* name a slot the native builder fills (`main`,
`charPersonality`, `dialogueExamples`, `chatHistory`, ...), *custom* nodes carry their own text. The
walk emits marker buckets and custom items in preset order and flushes TomoriBot-only groups at
anchors: the knowledge group after the first of `main`/`charDescription`/`charPersonality`, the
dialogue-adjacent group (participant profile first) once, immediately before the first
`dialogueExamples` or `chatHistory` marker. Tail-slot items never enter a bucket (R-18). The
world-info markers take the fired lorebook entries of their position; a persona's character card
fills its slots through ``Preset.with_card``.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from chatcontext.core.types import CardFields, ContextItem, ContextItemTag, TextPart

Tag = ContextItemTag

# Marker → the native buckets it pulls, in order. `charDescription` and `charPersonality` share the
# persona item: whichever comes first takes it.
MARKER_TAGS: dict[str, tuple[ContextItemTag, ...]] = {
    "main": (Tag.SYSTEM_INSTRUCTION_BLOCK,),
    "charDescription": (Tag.SYSTEM_PERSONALITY,),
    "charPersonality": (Tag.SYSTEM_PERSONALITY,),
    "dialogueExamples": (Tag.DIALOGUE_SAMPLE,),
    "chatHistory": (Tag.DIALOGUE_HISTORY, Tag.CONTEXT_NOTE_INJECTION),
    "worldInfoBefore": (Tag.WORLD_INFO_BEFORE,),
    "worldInfoAfter": (Tag.WORLD_INFO_AFTER,),
}
# A lorebook entry's position → the marker that places it under a preset (README, "Presets").
WORLD_INFO_MARKERS = {"before_char": "worldInfoBefore", "after_char": "worldInfoAfter"}
# The node ``personas.presets`` stores the preset's own main prompt in, and SillyTavern's post-history slot.
MAIN_PROMPT = "main-prompt"
POST_HISTORY = "jailbreak"
_ORIGINAL = re.compile(r"\{\{\s*original\s*\}\}", re.IGNORECASE)
KNOWLEDGE_GROUP = (
    Tag.KNOWLEDGE_SERVER_INFO,
    Tag.KNOWLEDGE_PERSONA_USER_BLOCKS,
    Tag.KNOWLEDGE_SERVER_MEMORIES,
    Tag.KNOWLEDGE_EMOJIS,
    Tag.KNOWLEDGE_STICKERS,
)
# profile → short-term memory → conditioning → documents; only the profile exists so far.
DIALOGUE_GROUP = (Tag.KNOWLEDGE_USERS_IN_CONVERSATION,)
KNOWLEDGE_ANCHORS = frozenset({"main", "charDescription", "charPersonality"})
DIALOGUE_ANCHORS = frozenset({"dialogueExamples", "chatHistory"})

_MACRO = re.compile(r"\{\{\s*(char|user)\s*\}\}", re.IGNORECASE)


@dataclass(frozen=True)
class PresetNode:
    identifier: str
    is_marker: bool = True
    content: str = ""
    role: Literal["system", "user", "model"] = "system"
    enabled: bool = True

    @classmethod
    def marker(cls, identifier: str) -> PresetNode:
        return cls(identifier=identifier)

    @classmethod
    def custom(cls, identifier: str, content: str, role: Literal["system", "user", "model"] = "system") -> PresetNode:
        return cls(identifier=identifier, is_marker=False, content=content, role=role)


@dataclass(frozen=True)
class Preset:
    nodes: tuple[PresetNode, ...]

    @classmethod
    def from_markers(cls, *identifiers: str) -> Preset:
        return cls(tuple(PresetNode.marker(i) for i in identifiers))

    @classmethod
    def from_json(cls, nodes: Sequence[Mapping[str, Any]]) -> Preset:
        """A preset as a persona stores it (``personas.presets``: checked when it was imported)."""
        return cls(
            tuple(
                PresetNode(
                    identifier=str(node["identifier"]),
                    is_marker=bool(node["marker"]),
                    content=str(node.get("content") or ""),
                    role=node.get("role", "system"),
                    enabled=bool(node.get("enabled", True)),
                )
                for node in nodes
            )
        )

    def has_marker(self, identifier: str) -> bool:
        return any(n.is_marker and n.enabled and n.identifier == identifier for n in self.nodes)

    def with_card(self, card: CardFields) -> Preset:
        """The preset with a character card's fields in its slots, as SillyTavern fills them: the
        personality right after the `charPersonality` marker, the scenario at `scenario`; the card's
        system prompt overrides the preset's main prompt (which the platform's instruction still
        follows) and its post-history instructions the `jailbreak` prompt, each with `{{original}}`
        standing for the preset's text. An empty card field leaves the preset's slot as it was."""
        nodes: list[PresetNode] = []
        for node in self.nodes:
            if node.identifier == MAIN_PROMPT and not node.is_marker:
                node = _override(node, card.system_prompt)
            elif node.identifier == POST_HISTORY and not node.is_marker:
                node = _override(node, card.post_history_instructions)
            elif node.identifier == "main" and node.is_marker and card.system_prompt.strip():
                if not any(n.identifier == MAIN_PROMPT for n in self.nodes):
                    nodes.append(PresetNode.custom(MAIN_PROMPT, _ORIGINAL.sub("", card.system_prompt).strip()))
            elif node.identifier == "scenario" and node.is_marker and card.scenario.strip():
                node = PresetNode("scenario", is_marker=False, content=card.scenario, enabled=node.enabled)
            nodes.append(node)
            if node.identifier == "charPersonality" and node.is_marker and card.personality.strip():
                nodes.append(PresetNode("card-personality", False, card.personality, enabled=node.enabled))
        if card.post_history_instructions.strip() and not any(n.identifier == POST_HISTORY for n in nodes):
            history = next((i for i, n in enumerate(nodes) if n.identifier == "chatHistory" and n.is_marker), None)
            text = _ORIGINAL.sub("", card.post_history_instructions).strip()
            nodes.insert(len(nodes) if history is None else history + 1, PresetNode.custom(POST_HISTORY, text))
        return Preset(tuple(nodes))


def _override(node: PresetNode, text: str) -> PresetNode:
    """``node`` with the card's ``text`` instead of its own (`{{original}}`: its own), unless ``text`` is empty."""
    if not text.strip():
        return node
    return dataclasses.replace(node, content=_ORIGINAL.sub(lambda _: node.content, text))


def _resolve_macros(text: str, char_name: str, user_name: str) -> str:
    return _MACRO.sub(lambda m: char_name if m.group(1).lower() == "char" else user_name, text)


def reassemble_with_preset(
    items: Sequence[ContextItem], preset: Preset, *, char_name: str, user_name: str
) -> list[ContextItem]:
    """R-17: reorder native (non-tail) items by the preset; tail-slot items are appended last (R-18).

    Sample dialogue is dropped when the preset has no `dialogueExamples` marker: the preset decides
    whether examples are shown, and leftovers after the walk would otherwise land after the live
    conversation. Other unconsumed items are appended after the walk, in native order.
    """
    tail = [item for item in items if item.placement == "tail"]
    buckets: dict[ContextItemTag | None, list[ContextItem]] = {}
    for item in items:
        if item.placement != "tail":
            buckets.setdefault(item.metadata_tag, []).append(item)
    if not preset.has_marker("dialogueExamples"):
        buckets.pop(Tag.DIALOGUE_SAMPLE, None)

    out: list[ContextItem] = []
    flushed: set[str] = set()

    def flush(name: str, tags: Sequence[ContextItemTag]) -> None:
        if name in flushed:
            return
        flushed.add(name)
        for tag in tags:
            out.extend(buckets.pop(tag, []))

    for node in preset.nodes:
        if not node.enabled:
            continue
        if not node.is_marker:
            if node.content.strip():
                text = _resolve_macros(node.content, char_name, user_name)
                out.append(ContextItem(role=node.role, parts=[TextPart(text)]))
            continue
        if node.identifier in DIALOGUE_ANCHORS:
            flush("dialogue", DIALOGUE_GROUP)
        for tag in MARKER_TAGS.get(node.identifier, ()):
            out.extend(buckets.pop(tag, []))
        if node.identifier in KNOWLEDGE_ANCHORS:
            flush("knowledge", KNOWLEDGE_GROUP)
    flush("knowledge", KNOWLEDGE_GROUP)
    flush("dialogue", DIALOGUE_GROUP)
    native_order = {id(item): index for index, item in enumerate(items)}
    leftovers = sorted((item for bucket in buckets.values() for item in bucket), key=lambda i: native_order[id(i)])
    return out + leftovers + tail
