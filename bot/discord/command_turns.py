"""Turns a slash command starts (``/impersonate``, ``/scene``): nobody's message is answered, so the
channel's newest message anchors the turn (its history window and triggerer), as for a reminder
(``bot.discord.reminder_turns``), and nobody is registered by it."""

from __future__ import annotations

from dataclasses import dataclass

import discord
from channels.db import database_sync_to_async

from bot.conversation.state import AuthorState, read_author_state
from bot.discord.reminder_turns import latest_message, synthetic_trigger
from bot.discord.transport import to_discord_message
from bot.discord.turns import as_member
from chatcontext.core.types import DiscordMessage, MemberInfo


@dataclass(frozen=True)
class Anchor:
    """The channel's newest message as the pipeline reads it (``live``: as discord.py gave it; None
    when the channel has no history the bot can read and a synthetic bot message stands in)."""

    message: DiscordMessage
    live: discord.Message | None
    author: AuthorState | None
    triggerer: MemberInfo | None


async def channel_anchor(
    channel: discord.abc.Messageable, *, client: discord.Client, server_id: int, now_ms: int
) -> Anchor:
    assert client.user is not None  # commands are handled only while the client is logged in
    live = await latest_message(channel)
    if live is not None:
        message = to_discord_message(live)
    else:
        guild = getattr(channel, "guild", None)
        channel_id = str(getattr(channel, "id", ""))
        message = synthetic_trigger(channel_id, str(guild.id) if guild else None, client.user, now_ms)
    author = await database_sync_to_async(read_author_state)(server_id, message.author.id, now_ms)
    return Anchor(message, live, author, as_member(live.author) if live is not None else None)
