"""``/refresh`` and ``/compact`` on Discord (``bot.conversation.steering`` does the work).

Who may: members with Manage Messages — clearing or summarising a channel's conversation changes what
the personas read for everyone in it. A server can open ``/refresh`` to every member (its
``/refresh for everyone`` setting). Discord hides nothing here by default, so every handler checks
and refuses with a private message that says who may and why.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import discord
from channels.db import database_sync_to_async
from discord import app_commands
from discord.ext import commands

from bot.conversation import steering
from bot.conversation.jobs import TurnJob
from bot.conversation.refusals import DeliveryRefused
from bot.conversation.state import ServerState, read_author_state
from bot.conversation.steering import (
    COMPACT_REFUSED,
    MANUAL_NEEDS_TEXT,
    MANUAL_POSTED,
    NO_PERSONA,
    REFRESH_REFUSED,
    REFRESHED,
    TEXT_ONLY_FOR_MANUAL,
    compacted,
)
from bot.discord.delivery import send_notices
from bot.discord.exts._interactions import answer_later, interaction_server, reply
from bot.discord.reminder_turns import latest_message, synthetic_trigger
from bot.discord.transport import to_discord_message
from bot.discord.turns import DiscordOutlet, as_member
from chatcontext.core.types import ChatIncoming, LockedTurn

if TYPE_CHECKING:
    from bot.discord.client import PlatformBotMixin

Kind = steering.Kind
KIND_CHOICES = [app_commands.Choice(name=label, value=value) for value, label in Kind.choices]


def may_steer(interaction: discord.Interaction) -> bool:
    user = interaction.user
    return isinstance(user, discord.Member) and user.guild_permissions.manage_messages


class SteeringCog(commands.Cog):
    def __init__(self, bot: PlatformBotMixin) -> None:
        self.bot = bot

    async def _channel(self, interaction: discord.Interaction) -> Any:
        channel_id = interaction.channel_id
        assert channel_id is not None  # guild-only commands run in a channel
        return self.bot.get_channel(channel_id) or await self.bot.fetch_channel(channel_id)

    async def _job(self, interaction: discord.Interaction, state: ServerState) -> TurnJob[Any] | None:
        """A turn of the main persona anchored on the channel's newest message: the window a turn
        would read now (None: the server has no persona)."""
        persona, bot_user = state.main_persona, self.bot.user
        if persona is None or bot_user is None:
            return None
        channel = await self._channel(interaction)
        latest = await latest_message(channel)
        now_ms = self.bot.clock()
        guild_id = str(interaction.guild_id) if interaction.guild_id else None
        trigger = (
            to_discord_message(latest)
            if latest is not None
            else synthetic_trigger(str(channel.id), guild_id, bot_user, now_ms)
        )
        author = await database_sync_to_async(read_author_state)(state.server_id, trigger.author.id, now_ms)
        persona_ids = (persona.persona_id,) if persona.persona_id is not None else ()
        locked = LockedTurn(
            incoming=ChatIncoming(message=trigger), channel_id=str(channel.id), triggered_persona_ids=persona_ids
        )
        outlet = DiscordOutlet(self.bot, self.bot.webhooks, channel, latest or trigger)
        triggerer = as_member(latest.author) if latest is not None else None
        return TurnJob(locked, outlet, (persona,), state, author, triggerer=triggerer)

    @app_commands.command(name="refresh", description="Clear the conversation the personas read in this channel")
    @app_commands.guild_only()
    async def refresh(self, interaction: discord.Interaction) -> None:
        state = await interaction_server(interaction)
        if not (state.refresh_open_to_all or may_steer(interaction)):
            await reply(interaction, REFRESH_REFUSED)
            return
        if state.main_persona is None:
            await reply(interaction, NO_PERSONA)
            return
        try:
            channel = await self._channel(interaction)
            await send_notices(channel, state.main_persona, [steering.refresh_notice()], webhooks=self.bot.webhooks)
        except discord.HTTPException as exc:
            await reply(interaction, f"The notice could not be posted here (HTTP {exc.status}); nothing changed.")
            return
        await reply(interaction, REFRESHED)

    @app_commands.command(name="compact", description="Replace this channel's conversation with a summary")
    @app_commands.guild_only()
    @app_commands.describe(kind="What to write", text="Your own summary (manual entry only)")
    @app_commands.choices(kind=KIND_CHOICES)
    async def compact(
        self, interaction: discord.Interaction, kind: str = Kind.SUMMARY, text: str | None = None
    ) -> None:
        state = await interaction_server(interaction)
        if not may_steer(interaction):
            await reply(interaction, COMPACT_REFUSED)
            return
        manual = kind == Kind.MANUAL_ENTRY
        if manual != bool(text and text.strip()):
            await reply(interaction, MANUAL_NEEDS_TEXT if manual else TEXT_ONLY_FOR_MANUAL)
            return
        job = await self._job(interaction, state)
        if job is None:
            await reply(interaction, NO_PERSONA)
            return
        # The model may take longer than the three seconds Discord waits for an answer.
        await interaction.response.defer(ephemeral=True, thinking=True)
        member = str(interaction.user.id)
        if manual:
            assert text is not None
            try:
                await steering.post_manual_entry(self.bot.runner, job, text.strip(), member)
            except DeliveryRefused as exc:
                await answer_later(interaction, f"The entry could not be posted here ({exc}); nothing changed.")
                return
            await answer_later(interaction, MANUAL_POSTED)
            return
        outcome = await steering.compact(self.bot.runner, steering.CompactRequest(job, kind, member))
        await answer_later(interaction, compacted(outcome))


async def setup(bot: PlatformBotMixin) -> None:
    await bot.add_cog(SteeringCog(bot))
