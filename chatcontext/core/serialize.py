"""The output document of an assembled turn (turn-snapshot.md §2) and its text rendering.

``turn_output(ctx)`` is what ``replay_turn`` prints, what prompt records store and what the API
serves. It is deterministic: every mapping is built in a fixed order from ordered inputs, so the
same turn gives byte-identical JSON (``dumps_output``) on every run.
"""

from __future__ import annotations

import json
import re
from dataclasses import asdict, fields
from typing import Any

from chatcontext.core.types import (
    ChatTurnContext,
    ContextItem,
    ImagePart,
    ImageRef,
    JSONDict,
    Part,
    SimplifiedMessage,
    StreamingContext,
    TextPart,
    VideoRef,
)

OUTPUT_KEYS = (
    "context_items",
    "simplified_messages",
    "message_id_map",
    "streaming_context",
    "participant_target_index",
    "diagnostics",
)

EMPTY_TARGET_INDEX: JSONDict = {"targets": [], "persona_catalog_complete": False}

_KEY_NUMBER = re.compile(r"^(ref|media)_(\d+)$")


def part_json(part: Part) -> JSONDict:
    if isinstance(part, TextPart):
        return {"type": "text", "text": part.text}
    if isinstance(part, ImagePart):
        return {"type": "image", "uri": part.uri, "mime_type": part.mime_type}
    return {"type": "video", "uri": part.uri, "mime_type": part.mime_type, "is_youtube_link": part.is_youtube_link}


def item_json(item: ContextItem) -> JSONDict:
    """§2 `context_items` entry: `{role, tag, text, message_id, parts}`, and `world_info` (the entries
    that fired and their keys) on a lorebook item only."""
    out: JSONDict = {
        "role": item.role,
        "tag": item.metadata_tag.value if item.metadata_tag is not None else None,
        "text": item.text,
        "message_id": item.message_id,
        "parts": [part_json(p) for p in item.parts],
    }
    if item.world_info is not None:
        out["world_info"] = item.world_info
    return out


def _media_json(ref: ImageRef | VideoRef) -> JSONDict:
    return {f.name: getattr(ref, f.name) for f in fields(ref)}


def simplified_message_json(entry: SimplifiedMessage) -> JSONDict:
    """build-context.md §1.5 fields, snake_case, in the table's order."""
    out: JSONDict = {}
    for f in fields(entry):
        value = getattr(entry, f.name)
        if f.name in ("image_attachments", "video_attachments"):
            value = [_media_json(ref) for ref in value]
        elif isinstance(value, list):
            value = list(value)
        out[f.name] = value
    return out


def message_id_map_json(id_map: Any) -> dict[str, str]:
    """`ref_N`/`media_N` → Discord id, refs first, each prefix in numeric order."""
    mapping: dict[str, str] = id_map.as_dict() if id_map is not None else {}

    def order(key: str) -> tuple[int, int, str]:
        match = _KEY_NUMBER.match(key)
        if match is None:
            return (2, 0, key)
        return (0 if match.group(1) == "ref" else 1, int(match.group(2)), key)

    return {key: mapping[key] for key in sorted(mapping, key=order)}


def streaming_context_json(streaming: StreamingContext) -> JSONDict:
    """build-context.md §9 fields, snake_case. The id map is its own output key, not repeated here."""
    out: JSONDict = {}
    for f in fields(streaming):
        if f.name == "message_id_map":
            continue
        value = getattr(streaming, f.name)
        out[f.name] = asdict(value) if hasattr(value, "__dataclass_fields__") else value
    return out


def turn_output(ctx: ChatTurnContext) -> JSONDict:
    """The §2 output document of one assembled turn."""
    return {
        "context_items": [item_json(i) for i in ctx.context_items],
        "simplified_messages": [simplified_message_json(e) for e in ctx.simplified_messages],
        "message_id_map": message_id_map_json(ctx.message_id_map),
        "streaming_context": streaming_context_json(ctx.streaming_context),
        "participant_target_index": ctx.participant_target_index or dict(EMPTY_TARGET_INDEX),
        "diagnostics": ctx.diagnostics,
    }


def dumps_output(output: JSONDict) -> str:
    """Canonical JSON text of an output document: UTF-8 as is, two-space indent, final newline."""
    return json.dumps(output, ensure_ascii=False, indent=2) + "\n"


def _part_line(part: JSONDict) -> str:
    if part["type"] == "image":
        return f"[image {part['mime_type']} {part['uri']}]"
    youtube = " youtube" if part.get("is_youtube_link") else ""
    return f"[video{youtube} {part['mime_type']} {part['uri']}]"


def render_text(output: JSONDict) -> str:
    """`--format text`: the prompt as readable text, one block per context item headed by its
    position, role, tag and message id; text parts verbatim, media parts as one line each."""
    blocks: list[str] = []
    for n, item in enumerate(output["context_items"], start=1):
        head = f"--- {n} · {item['role']} · {item['tag'] or 'untagged'}"
        if item["message_id"]:
            head += f" · message {item['message_id']}"
        body = [p["text"] if p["type"] == "text" else _part_line(p) for p in item["parts"]]
        blocks.append("\n".join([head + " ---", *body]))
    return "\n\n".join(blocks) + "\n"
