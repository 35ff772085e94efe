"""NovelAI memory-only projection (participants.md N-01..N-05).

The projection travels as hidden metadata on the profile item. Only the NovelAI adapter renders it
(as a nested system-role block) and then sends the profile variant without `- Memories:` lines, so
the memories reach that model once; every other adapter ignores it and sends the profile text.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from chatcontext.core.types import ContextItem
from chatcontext.participants.hydration import MemoryEntry

JSONDict = dict[str, Any]


def build_memory_projection(entries: Sequence[MemoryEntry], *, profile_text_without_memories: str) -> JSONDict | None:
    """N-01..N-04: `{role, entries, text}` from the memories that passed H-14/P-05; None without any.

    ``profile_text_without_memories`` ([DES] N-05) is the profile text the NovelAI adapter sends
    instead of the item text, to avoid sending the memories twice.
    """
    if not entries:
        return None
    ordered = sorted(entries, key=lambda e: (e.created_at_ms, e.memory_id), reverse=True)  # N-03
    return {
        "role": "system",
        "entries": [
            {
                "memory_id": e.memory_id,
                "owner_key": e.owner_key.serialized,
                "content": e.content,
                "created_at": e.created_at_ms,
            }
            for e in ordered
        ],
        "text": "\n".join(e.content for e in ordered),  # N-04: no owners, IDs, tags or header
        "profile_text_without_memories": profile_text_without_memories,
    }


def participant_payload(item: ContextItem, *, novelai: bool) -> list[tuple[str, str]]:
    """N-05: what an adapter sends for a profile item, as `(role, text)` pairs.

    NovelAI: the profile without memory lines, then the projection as a system-role block. Every
    other adapter: the item text unchanged (the projection is ignored).
    """
    projection = item.memory_projection
    if not novelai or not projection:
        return [(item.role, item.text)]
    return [
        (item.role, str(projection.get("profile_text_without_memories", item.text))),
        (str(projection.get("role", "system")), str(projection["text"])),
    ]
