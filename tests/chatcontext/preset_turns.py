"""A builder input for the preset tests: a short history with a server memory, a sticker, the
participant profile and tail items, and Tomori with example dialogue, ordered by ``preset``."""

from __future__ import annotations

from chatcontext.core.preset import Preset
from chatcontext.core.types import ServerMemoryRow, StickerRow
from tests.chatcontext.builders import profile_item, tail_items
from tests.chatcontext.turn_factory import U1, U2, entry, inputs, tomori, tomori_entry


def preset_inputs(preset: Preset, **changes: object):  # type: ignore[no-untyped-def]
    history = [entry("m1", U1, "Ann", "hi"), tomori_entry("m2", "hello"), entry("m3", U2, "Bob", "yo")]
    fields: dict[str, object] = {
        "preset": preset,
        "server_memories": [ServerMemoryRow(10, "The cafe opens at 9.")],
        "stickers": [StickerRow("55", "wave")],
        "participant_profile_item": profile_item(),
        "participant_tail_items": tail_items(),
        "persona": tomori(sample_dialogue=({"role": "user", "text": "hi"}, {"role": "model", "text": "hello"})),
    }
    fields.update(changes)
    return inputs(history, **fields)
