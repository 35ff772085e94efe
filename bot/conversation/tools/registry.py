"""Every tool a persona can call, in one place, and the specs the model is offered."""

from __future__ import annotations

from bot.conversation.tools import memory, react, reminders, short_term_memory
from bot.conversation.tools.base import Tool

TOOLS: dict[str, Tool] = {
    tool.name: tool
    for tool in (
        *memory.TOOLS,
        *reminders.TOOLS,
        *react.TOOLS,
        *short_term_memory.TOOLS,
    )
}

# Deliberate tool mode (BC9-07..09) names the intents of its catalogue; each family answers to one.
# A family without an intent (reactions) is never offered while the mode limits the tools.
FAMILY_INTENTS = {
    "memory": "create_long_term_memory",
    "reminder": "create_task",
    # Named by the short-term-memory intent wrapper (BC9-12) when the note's upkeep is due.
    "short_term_memory": "update_short_term_memory",
}
