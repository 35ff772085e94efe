"""The servers' custom emojis, kept as Discord lists them (issue 30 item 8): synced for every guild
when the bot is ready, and again whenever a guild's emojis change. The rows are what a persona is
offered (build-context.md BC7-08) and what ``:name:`` in its reply becomes
(``bot.conversation.emojis``)."""

from __future__ import annotations

import logging
from collections.abc import Sequence

import discord
from channels.db import database_sync_to_async
from discord.ext import commands

from bot.discord.turns import guild_server_state
from chatcontext.assets import invalidate_server_assets
from personas import models as m
from personas.actions import Actor
from personas.actions.emojis import GuildEmoji, sync_server_emojis

logger = logging.getLogger(__name__)

EMOJI_SYNC = Actor.system("custom emojis synced from Discord")


def guild_emojis(emojis: Sequence[discord.Emoji]) -> list[GuildEmoji]:
    return [GuildEmoji(str(e.id), e.name, e.animated) for e in emojis]


def store_emojis(server_id: int, emojis: list[GuildEmoji]) -> int:
    changed = sync_server_emojis(m.Server.objects.get(pk=server_id), emojis, actor=EMOJI_SYNC)
    if changed:
        invalidate_server_assets(server_id)  # the next turn reads the new rows, not the cached ones
    return changed


class EmojisCog(commands.Cog):
    def __init__(self, bot: commands.Bot) -> None:
        self.bot = bot

    async def sync(self, guild: discord.Guild, emojis: Sequence[discord.Emoji]) -> None:
        state = await guild_server_state(str(guild.id), guild)
        changed = await database_sync_to_async(store_emojis)(state.server_id, guild_emojis(emojis))
        logger.debug("custom emojis synced: %d rows changed", changed)

    @commands.Cog.listener()
    async def on_ready(self) -> None:
        for guild in self.bot.guilds:
            await self.sync(guild, guild.emojis)

    @commands.Cog.listener()
    async def on_guild_join(self, guild: discord.Guild) -> None:
        await self.sync(guild, guild.emojis)

    @commands.Cog.listener()
    async def on_guild_emojis_update(
        self, guild: discord.Guild, before: Sequence[discord.Emoji], after: Sequence[discord.Emoji]
    ) -> None:
        await self.sync(guild, after)


async def setup(bot: commands.Bot) -> None:
    await bot.add_cog(EmojisCog(bot))
