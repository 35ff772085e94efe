"""SillyTavern preset reassembly of the native builder's items (participants.md R-17, R-18).

A preset is an ordered list of nodes: *markers* name a slot the native builder fills (`main`,
`charPersonality`, `dialogueExamples`, `chatHistory`, ...), *custom* nodes carry their own text. The
walk emits marker buckets and custom items in preset order and flushes TomoriBot-only groups at
anchors: the knowledge group after the first of `main`/`charDescription`/`charPersonality`, the
dialogue-adjacent group (participant profile first) once, immediately before the first
`dialogueExamples` or `chatHistory` marker. Tail-slot items never enter a bucket (R-18).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from chatcontext.core.types import ContextItem, ContextItemTag, TextPart

Tag = ContextItemTag

# Marker → the native buckets it pulls, in order. `charDescription` and `charPersonality` share the
# persona item: whichever comes first takes it.
MARKER_TAGS: dict[str, tuple[ContextItemTag, ...]] = {
    "main": (Tag.SYSTEM_INSTRUCTION_BLOCK,),
    "charDescription": (Tag.SYSTEM_PERSONALITY,),
    "charPersonality": (Tag.SYSTEM_PERSONALITY,),
    "dialogueExamples": (Tag.DIALOGUE_SAMPLE,),
    "chatHistory": (Tag.DIALOGUE_HISTORY, Tag.CONTEXT_NOTE_INJECTION),
}
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
