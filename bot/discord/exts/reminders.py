"""Reminder occurrences from the dispatcher, received over the Channels layer group
``bot.reminders`` (``personas.reminder_firing.ChannelLayerDispatcher``): from the Celery beat
with Redis, from this process's own scheduler without it (``bot.conversation.reminder_scheduler``:
started when the bot was created with ``embedded_reminders``, which ``runbot`` sets without
``REDIS_URL``; it claims every reminder but the playground channels', which the web process fires).

Every bot process joins the group; each handles only the occurrences whose channel it serves (its
shards' guilds; DMs belong to the process holding shard 0) and ignores the rest, playground
channels included. The process that
serves the channel takes the occurrence (``accept_delivery``; refused when it was cancelled or is
already taken, and then nothing is posted), and it becomes a persona turn in its channel, queued
behind that channel's other turns (``bot.discord.reminder_turns``), whose post is confirmed
(``acknowledge_delivery``). A failure is reported back so the occurrence is retried or marked
failed (``report_delivery_failure``); an occurrence no process takes or confirms comes back when its
lease runs out (``personas.reminder_firing``).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from typing import TYPE_CHECKING

import discord
from channels.db import database_sync_to_async
from discord.ext import commands
from django.db.models import Q

from bot.conversation.reminder_scheduler import ReminderScheduler, receive_occurrences
from bot.conversation.reminder_turn_rules import report_failure
from bot.discord.reminder_turns import reminder_job
from bot.playground.reminder_scope import is_playground_channel, playground_reminders
from personas.reminder_firing import DueReminder, accept_delivery

if TYPE_CHECKING:
    from bot.discord.client import PlatformBotMixin

logger = logging.getLogger(__name__)


def discord_reminders() -> Q:
    """This process's scheduler's scope: every reminder but the playground channels', which the web
    process posts."""
    return ~playground_reminders()


class ChannelMissing(Exception):
    """The reminder's channel is not in its (served) guild any more."""


class RemindersCog(commands.Cog):
    def __init__(self, bot: PlatformBotMixin) -> None:
        self.bot = bot
        self._listener: asyncio.Task[None] | None = None
        # Set once this process is in the reminders group (what a restart waits for before a tick).
        self.listening = asyncio.Event()
        self.scheduler = ReminderScheduler(discord_reminders)

    async def cog_load(self) -> None:
        self._listener = asyncio.create_task(receive_occurrences(self.fire, self.listening))
        if self.bot.embedded_reminders:
            self.scheduler.start()

    async def cog_unload(self) -> None:
        await self.scheduler.stop()
        if self._listener is not None:
            self._listener.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._listener

    def serves_direct_messages(self) -> bool:
        shard_ids = getattr(self.bot, "shard_ids", None)
        return shard_ids is None or 0 in shard_ids

    async def destination(self, due: DueReminder) -> discord.abc.Messageable | None:
        """The channel, or None when this process does not serve it (a playground channel is the web
        process's, ``bot.playground.reminder_scope``); raises when it is gone."""
        guild = self.bot.get_guild(int(due.server_disc_id))
        if guild is not None:
            in_guild = guild.get_channel_or_thread(int(due.channel_disc_id))
            if not isinstance(in_guild, discord.abc.Messageable):
                if await database_sync_to_async(is_playground_channel)(due.channel_disc_id):
                    return None
                raise ChannelMissing
            return in_guild
        if due.server_disc_id == due.channel_disc_id and self.serves_direct_messages():
            direct = self.bot.get_channel(int(due.channel_disc_id)) or await self.bot.fetch_channel(
                int(due.channel_disc_id)
            )
            return direct if isinstance(direct, discord.abc.Messageable) else None
        return None

    async def fire(self, due: DueReminder) -> None:
        bot_user = self.bot.user
        if bot_user is None:
            return
        try:
            channel = await self.destination(due)
            if channel is None:
                return
            if not await database_sync_to_async(accept_delivery)(due.reminder_id, due.scheduled_at_ms):
                logger.info("reminder occurrence not taken: cancelled, settled or taken already")
                return
            job = await reminder_job(due, channel, client=self.bot, webhooks=self.bot.webhooks, now_ms=self.bot.clock())
        except (ChannelMissing, discord.NotFound, discord.Forbidden) as exc:
            await report_failure(due, channel_gone=True, reason=type(exc).__name__)
            return
        except discord.HTTPException as exc:
            await report_failure(due, channel_gone=False, reason=f"HTTP {exc.status}")
            return
        if job is None:
            await report_failure(due, channel_gone=False, reason="no persona")
        elif not await self.bot.planner.submit(job):
            await report_failure(due, channel_gone=False, reason="channel queue full")


async def setup(bot: PlatformBotMixin) -> None:
    await bot.add_cog(RemindersCog(bot))
