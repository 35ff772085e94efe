"""Helpers shared by the slash-command cogs (not an extension: its name starts with ``_``)."""

from __future__ import annotations

import discord

from bot.conversation.state import ServerState
from bot.discord.delivery import DISCORD_MESSAGE_LIMIT
from bot.discord.turns import guild_server_state, server_key

MODERATOR_ONLY = "Only moderators (Manage Server) can use this command."
ELLIPSIS = "…"


def interaction_server_key(interaction: discord.Interaction) -> str:
    return server_key(interaction.guild_id, interaction.channel_id)


async def interaction_server(interaction: discord.Interaction) -> ServerState:
    return await guild_server_state(interaction_server_key(interaction), interaction.guild)


def is_moderator(interaction: discord.Interaction) -> bool:
    user = interaction.user
    return isinstance(user, discord.Member) and user.guild_permissions.manage_guild


def clip(text: str, limit: int = DISCORD_MESSAGE_LIMIT) -> str:
    return text if len(text) <= limit else text[: limit - len(ELLIPSIS)] + ELLIPSIS


async def reply(interaction: discord.Interaction, text: str) -> None:
    """Every command answers privately: the data is the member's own or a moderator's."""
    await interaction.response.send_message(clip(text), ephemeral=True)


async def answer_later(interaction: discord.Interaction, text: str) -> None:
    """The private answer of a command that deferred its response (one that waits for the model)."""
    await interaction.followup.send(clip(text), ephemeral=True)
