"""Short-term memory in the prompt (build-context.md BC8-12b/c, BC9-12): the persona's note of the
channel as a memory-injection item, the nudge when its upkeep is due, and the tool name the intent
wrapper adds under deliberate tool mode. Pure: the note comes with the turn (``ChatTurn``)."""

from __future__ import annotations

from collections.abc import Sequence

from chatcontext.core.frames import system_frame
from chatcontext.core.types import ContextItem, ContextItemTag, ShortTermNote, SimplifiedMessage, TextPart

TOOL_NAME = "update_short_term_memory"
# The note sits just before the latest exchange, where the model weighs it most without it becoming
# the last word; the nudge goes at the end of the dialogue (depth 0, before the tail directives).
MEMORY_DEPTH = 2
NUDGE_DEPTH = 0
# Upkeep is due once this many messages arrived since the note was written (or, with no note, once
# the conversation is this long).
DUE_AFTER_MESSAGES = 8


def memory_items(note: ShortTermNote | None) -> list[ContextItem]:
    """BC8-12b: the note as one user item tagged ``dialogue_history``; none without a note. The note
    is model output, so its brackets cannot end the frame (``chatcontext.core.frames``)."""
    if note is None or not note.content.strip():
        return []
    text = system_frame(f"Your short-term memory of this channel (you wrote it):\n{note.content.strip()}")
    return [ContextItem(role="user", parts=[TextPart(text)], metadata_tag=ContextItemTag.DIALOGUE_HISTORY)]


def upkeep_due(note: ShortTermNote | None, entries: Sequence[SimplifiedMessage]) -> bool:
    """Whether the persona should rewrite its note: the tool is offered, and enough messages came
    since the note was written (or, with no note, the conversation is that long)."""
    if note is None or not note.tool_offered:
        return False
    since = note.updated_at_ms
    newer = [e for e in entries if since is None or (e.created_at is not None and e.created_at > since)]
    return len(newer) >= DUE_AFTER_MESSAGES


def nudge_item() -> ContextItem:
    """BC8-12c: the reminder to rewrite the note."""
    text = system_frame(
        "Your short-term memory of this channel is due for an update. If the conversation moved on, call "
        f"{TOOL_NAME} with the whole new note (what is going on, who is involved, what to keep in mind), then reply."
    )
    return ContextItem(role="user", parts=[TextPart(text)], metadata_tag=ContextItemTag.DIALOGUE_HISTORY)
