"""The reaction tool: the persona reacts to a message of the turn (``ref_N`` of its id map)."""

from __future__ import annotations

from pydantic import Field

from bot.conversation.refusals import DeliveryRefused
from bot.conversation.tools.base import Tool, ToolArgs, ToolOutcome, ToolTurn, refusal

MAX_EMOJI_CHARS = 32


class React(ToolArgs):
    ref: str = Field(description="The ref_N of the message to react to.")
    emoji: str = Field(description="One emoji, e.g. 👍.")


async def react(turn: ToolTurn, args: React) -> ToolOutcome:
    message_id = turn.message_id(args.ref)
    if message_id is None:
        return refusal(f"{args.ref.strip()} is no message of this conversation.")
    emoji = args.emoji.strip()
    if not emoji or len(emoji) > MAX_EMOJI_CHARS or any(c.isspace() for c in emoji):
        return refusal("Pick one emoji.")
    try:
        await turn.reactor.react(message_id, emoji)
    except DeliveryRefused as exc:
        return refusal(f"the reaction was not accepted ({exc}).")
    return ToolOutcome(result=f"Reacted to {args.ref.strip()} with {emoji}.")


TOOLS: tuple[Tool, ...] = (
    Tool("react", "React to a message of the conversation with an emoji.", React, "react", react),
)
