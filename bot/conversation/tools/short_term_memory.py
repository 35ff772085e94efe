"""The short-term memory tool: the persona rewrites its note of the channel, whole
(``personas.actions.replace_short_term_memory``). The next turns of the channel read the note
(build-context.md BC8-12b); the turns that read it are what it draws on, for forget-me."""

from __future__ import annotations

from pydantic import Field

from bot.conversation.tools.base import Tool, ToolArgs, ToolOutcome, ToolTurn, history_authors, refusal
from chatcontext.core.short_term_memory import TOOL_NAME
from personas import actions
from personas import models as m
from personas.provenance import Provenance, WrittenRow


class UpdateShortTermMemory(ToolArgs):
    note: str = Field(
        description=f"The whole new note, replacing the old one (at most {m.SHORT_TERM_MEMORY_MAX_CHARS} characters): "
        "what is going on in this channel, who is involved, what to keep in mind. Empty clears it."
    )


async def update_short_term_memory(turn: ToolTurn, args: UpdateShortTermMemory) -> ToolOutcome:
    def write() -> m.ShortTermMemory | None:
        return actions.replace_short_term_memory(
            actions.NoteWrite(
                persona=m.Persona.objects.get(pk=turn.persona_id),
                channel_disc_id=turn.ctx.turn.locked_turn.channel_id,
                content=args.note,
                author_disc_ids=history_authors(turn.ctx),
                provenance=Provenance(message_disc_id=turn.trigger_message_id),
            ),
            actor=turn.actor,
        )

    try:
        note = await turn.db(write)()
    except actions.ActionError as exc:
        return refusal(str(exc))
    if note is None:
        return ToolOutcome(result="Short-term memory cleared.")
    return ToolOutcome(result="Short-term memory saved.", written=(WrittenRow("short_term_memory", note.pk),))


TOOLS: tuple[Tool, ...] = (
    Tool(
        TOOL_NAME,
        "Rewrite your short-term memory of this channel: a short note you read at every turn here.",
        UpdateShortTermMemory,
        "short_term_memory",
        update_short_term_memory,
    ),
)
