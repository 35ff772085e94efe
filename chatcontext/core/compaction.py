"""The prompt of a compaction (``/compact``, automatic compaction; issue 30 item 2): a separate model
call that summarises the conversation a persona reads. A pure function of the turn context it is
made from, so the turn's snapshot replays it: ``bot.conversation.steering`` sends it, and the
inspector's replay of a compaction record (``chatcontext.records.inspector.replay_now``) rebuilds it
from the replayed context and the record's ``kind``."""

from __future__ import annotations

from chatcontext.core.types import ChatTurnContext, ContextItem, ContextItemTag, TextPart

# What each kind of summary keeps (``ConversationSummary.Kind``; a manual entry is the moderator's
# own text and makes no call).
WHAT_TO_KEEP = {
    "summary": "who took part, what was said and decided, open questions and promises, and the current topic",
    "roleplay_scene": "the scene's setting, the characters present and their state, what happened in order, and "
    "where the scene stands now",
}
SUMMARY_WORDS = 250


def transcript(ctx: ChatTurnContext) -> list[str]:
    """The history entries as the persona's prompt shows them (named, privacy-filtered), one line each."""
    return [
        item.text
        for item in ctx.context_items
        if item.metadata_tag == ContextItemTag.DIALOGUE_HISTORY and item.message_id is not None and item.text.strip()
    ]


def summary_prompt(ctx: ChatTurnContext, kind: str) -> list[ContextItem]:
    """The summary call's prompt: an instruction naming what ``kind`` keeps, then the transcript."""
    persona = ctx.current_persona.persona_nickname
    instruction = (
        f"You summarise a Discord conversation for {persona}, who will continue it knowing only your summary. "
        f"Keep {WHAT_TO_KEEP[str(kind)]}. Name people as the conversation does. At most {SUMMARY_WORDS} words; "
        "write only the summary."
    )
    lines = "\n".join(transcript(ctx))
    return [
        ContextItem(role="system", parts=[TextPart(instruction)], metadata_tag=ContextItemTag.SYSTEM_INSTRUCTION_BLOCK),
        ContextItem(role="user", parts=[TextPart(f"The conversation:\n{lines}\n\nWrite the summary now.")]),
    ]
