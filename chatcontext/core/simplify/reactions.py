"""Reaction annotations (BC3-08/09): `[System: Reactions on this message: 👍 x3 by A, B (+1 more); …]`.

Fetching reactor names costs Discord calls, so the history shell fetches them up front, in message
order, under one per-turn budget; this module decides which reactions are shown and renders them.
"""

from __future__ import annotations

from collections.abc import Sequence

from chatcontext.core.config import StageConfig
from chatcontext.core.frames import system_frame
from chatcontext.core.simplify.base import SimplifyContext
from chatcontext.core.types import Author, DiscordMessage, Reaction, ReactionEmoji


def shown_reactions(message: DiscordMessage, config: StageConfig) -> tuple[list[Reaction], int]:
    """Reactions with a count, by count descending (stable), capped; and how many types are hidden."""
    ranked = sorted((r for r in message.reactions if r.count > 0), key=lambda r: -r.count)
    limit = config.reaction_max_reactions_per_message
    return ranked[:limit], max(0, len(ranked) - limit)


def emoji_label(emoji: ReactionEmoji) -> str:
    if emoji.id and emoji.name:
        return f":{emoji.name}:"
    if emoji.name:
        return emoji.name
    if emoji.id:
        return f"<emoji:{emoji.id}>"
    return "unknown_emoji"


def reactor_label(user: Author, ctx: SimplifyContext) -> str | None:
    """The bot user → the main persona's nickname; else global name or username.

    Hardening: a privacy-FULL reactor is not named (the count still includes them).
    """
    if ctx.visibility.is_full(user.id):
        return None
    if user.id == ctx.bot_user_id:
        nickname = ctx.identity_persona.persona_nickname.strip()
        if nickname:
            return nickname
    return user.global_name or user.username or None


def reaction_annotation(
    message: DiscordMessage, fetched: Sequence[Sequence[Author] | None], ctx: SimplifyContext
) -> str | None:
    """`fetched[i]` holds the users fetched for the i-th shown reaction, or None (no budget / error)."""
    if not ctx.config.reaction_context_enabled:
        return None
    shown, hidden = shown_reactions(message, ctx.config)
    if not shown:
        return None
    segments: list[str] = []
    for index, reaction in enumerate(shown):
        segment = f"{emoji_label(reaction.emoji)} x{reaction.count}"
        users = fetched[index] if index < len(fetched) else None
        labels = [label for label in (reactor_label(u, ctx) for u in users or ()) if label]
        if labels:
            segment += f" by {', '.join(labels)}"
            if reaction.count > len(labels):
                segment += f" (+{reaction.count - len(labels)} more)"
        segments.append(segment)
    if hidden:
        segments.append(f"+{hidden} more reaction type" + ("" if hidden == 1 else "s"))
    return system_frame(f"Reactions on this message: {'; '.join(segments)}")
