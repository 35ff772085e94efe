"""Slash commands for moderators (Manage Server): personas and the prompt inspector link.

Discord hides these from members by default (``default_permissions``), but a server can override
that, so every handler checks the permission again and refuses with a short ephemeral message.
"""

from __future__ import annotations

import discord
from channels.db import database_sync_to_async
from discord import app_commands
from discord.ext import commands
from django.conf import settings

from bot.conversation.state import ServerState
from bot.discord.exts._interactions import (
    MODERATOR_ONLY,
    interaction_server,
    interaction_server_key,
    is_moderator,
    reply,
)
from bot.discord.exts.members import pick_persona
from chatcontext.core.types import PersonaInfo
from chatcontext.models import PromptRecord

PROMPT_PREVIEW_CHARS = 300
PROMPT_COMMAND_OFF = (
    "/prompt is turned off on this server (admin: Servers → this server → /prompt command). "
    "Its prompt records are in the admin's Prompt records."
)


def inspector_url(record_id: int) -> str:
    return f"{settings.PUBLIC_BASE_URL}/admin/chatcontext/promptrecord/{record_id}/change/"


def describe_personas(state: ServerState) -> str:
    lines = [
        f"**{p.persona_nickname}** ({'alter' if p.is_alter else 'main'}) — triggers: "
        + (", ".join(p.trigger_words) or "none")
        for p in state.personas
    ]
    return "Personas on this server:\n" + "\n".join(lines)


def describe_persona(persona: PersonaInfo) -> str:
    prompt = (persona.persona_prompt or "").strip()
    if len(prompt) > PROMPT_PREVIEW_CHARS:
        prompt = prompt[:PROMPT_PREVIEW_CHARS] + "…"
    public = sum(1 for a in persona.attributes if a.is_public)
    return "\n".join(
        [
            f"**{persona.persona_nickname}** ({'alter, speaks through a webhook' if persona.is_alter else 'main'})",
            f"Lineage: {persona.persona_lineage_id}",
            f"Triggers: {', '.join(persona.trigger_words) or 'none'}",
            f"Attributes: {len(persona.attributes)} ({public} public)",
            f"Appearance tags: {', '.join(persona.physical_appearance_tags) or 'none'}",
            f"Prompt: {prompt or 'none'}",
        ]
    )


def last_record_id(server_disc_id: str, channel_disc_id: str) -> int | None:
    """The newest record of this channel, else of the server."""
    records = PromptRecord.objects.filter(server__server_disc_id=server_disc_id).order_by("-created_at", "-id")
    in_channel = records.filter(channel_disc_id=channel_disc_id).values_list("id", flat=True).first()
    return in_channel if in_channel is not None else records.values_list("id", flat=True).first()


MODERATORS = discord.Permissions(manage_guild=True)


class ModerationCog(commands.Cog):
    persona = app_commands.Group(
        name="persona", description="Personas of this server", guild_only=True, default_permissions=MODERATORS
    )
    prompt = app_commands.Group(
        name="prompt", description="What the personas were told", guild_only=True, default_permissions=MODERATORS
    )

    @persona.command(name="list", description="List the personas of this server")
    async def persona_list(self, interaction: discord.Interaction) -> None:
        if not is_moderator(interaction):
            await reply(interaction, MODERATOR_ONLY)
            return
        await reply(interaction, describe_personas(await interaction_server(interaction)))

    @persona.command(name="show", description="Show one persona's settings")
    @app_commands.describe(name="Persona name")
    async def persona_show(self, interaction: discord.Interaction, name: str) -> None:
        if not is_moderator(interaction):
            await reply(interaction, MODERATOR_ONLY)
            return
        persona = pick_persona(await interaction_server(interaction), name)
        await reply(interaction, describe_persona(persona) if persona else "There is no persona with that name here.")

    @prompt.command(name="last", description="Link to the prompt inspector for the last turn here")
    async def prompt_last(self, interaction: discord.Interaction) -> None:
        if not is_moderator(interaction):
            await reply(interaction, MODERATOR_ONLY)
            return
        if not (await interaction_server(interaction)).config.prompt_command_enabled:
            await reply(interaction, PROMPT_COMMAND_OFF)
            return
        record_id = await database_sync_to_async(last_record_id)(
            interaction_server_key(interaction), str(interaction.channel_id)
        )
        if record_id is None:
            await reply(interaction, "No turn has been recorded on this server yet.")
            return
        await reply(interaction, f"Last turn: {inspector_url(record_id)}")


async def setup(bot: commands.Bot) -> None:
    await bot.add_cog(ModerationCog())
