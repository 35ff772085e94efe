"""Helpers shared by the slash-command cogs (not an extension: its name starts with ``_``)."""

from __future__ import annotations

import discord
from channels.db import database_sync_to_async

from bot.conversation.state import ServerState, load_server_state
from bot.discord.delivery import DISCORD_MESSAGE_LIMIT
from chatcontext.config import StageConfig

MODERATOR_ONLY = "Only moderators (Manage Server) can use this command."
ELLIPSIS = "…"


def interaction_server_key(interaction: discord.Interaction) -> str:
    """Guild id, or the DM channel id (a DM is its own pseudo server, as in ``bot.discord.exts.chat``)."""
    return str(interaction.guild_id if interaction.guild_id is not None else interaction.channel_id)


async def interaction_server(interaction: discord.Interaction) -> ServerState:
    guild = interaction.guild
    return await database_sync_to_async(load_server_state)(
        interaction_server_key(interaction),
        name=guild.name if guild else "Direct messages",
        is_dm=guild is None,
        locale=str(guild.preferred_locale) if guild else None,
        default_persona=StageConfig.from_env().default_botname,
    )


def is_moderator(interaction: discord.Interaction) -> bool:
    user = interaction.user
    return isinstance(user, discord.Member) and user.guild_permissions.manage_guild


def clip(text: str, limit: int = DISCORD_MESSAGE_LIMIT) -> str:
    return text if len(text) <= limit else text[: limit - len(ELLIPSIS)] + ELLIPSIS


async def reply(interaction: discord.Interaction, text: str) -> None:
    """Every command answers privately: the data is the member's own or a moderator's."""
    await interaction.response.send_message(clip(text), ephemeral=True)
