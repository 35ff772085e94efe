"""Messages → admitted triggers → planned turns (design.md "One turn, end to end").

Only messages that address a persona cost a database read for their author; every other message is
screened in memory, with the server's personas cached for ``SERVER_STATE_TTL_S``.
"""

from __future__ import annotations

import logging
import time
from typing import TYPE_CHECKING

import discord
from channels.db import database_sync_to_async
from discord.ext import commands

from bot.conversation.admission import TriggerSignals, admit_message, persona_for_webhook_name, screen
from bot.conversation.db import closing_stale_connections
from bot.conversation.state import ServerState, enqueue_voice_transcription
from bot.discord.transport import to_discord_message
from bot.discord.turns import guild_server_state, message_job, server_key

if TYPE_CHECKING:
    from bot.discord.client import PlatformBotMixin

logger = logging.getLogger(__name__)

SERVER_STATE_TTL_S = 30.0


class ChatCog(commands.Cog):
    def __init__(self, bot: PlatformBotMixin) -> None:
        self.bot = bot
        self._servers: dict[str, tuple[float, ServerState]] = {}

    def forget_server(self, server_disc_id: str) -> None:
        self._servers.pop(server_disc_id, None)

    async def server_state(self, message: discord.Message) -> ServerState:
        key = server_key(message.guild.id if message.guild else None, message.channel.id)
        cached = self._servers.get(key)
        if cached is not None and cached[0] > time.monotonic():
            return cached[1]
        state = await guild_server_state(key, message.guild)
        self._servers[key] = (time.monotonic() + SERVER_STATE_TTL_S, state)
        return state

    async def replied_persona_id(self, message: discord.Message, state: ServerState) -> int | None:
        """The persona that wrote the message this one replies to: the bot itself (main persona) or
        our channel webhook speaking as an alter. Other webhooks and people are nobody."""
        reference = message.reference
        replied = reference.resolved if reference is not None else None
        if not isinstance(replied, discord.Message):
            return None
        main = state.main_persona
        if replied.webhook_id is None:
            is_bot = self.bot.user is not None and replied.author.id == self.bot.user.id
            return main.persona_id if is_bot and main is not None else None
        try:
            hook = await self.bot.webhooks.find(message.channel)
        except discord.HTTPException:
            return None
        if hook is None or hook.id != replied.webhook_id:
            return None
        persona = persona_for_webhook_name(state.personas, replied.author.name)
        return persona.persona_id if persona is not None else None

    @commands.Cog.listener()
    async def on_message(self, message: discord.Message) -> None:
        bot_user = self.bot.user
        if bot_user is None:
            return
        incoming = to_discord_message(message)
        if screen(incoming, str(bot_user.id)) is not None:
            return
        if incoming.attachments:
            await database_sync_to_async(enqueue_voice_transcription)(incoming)
        state = await self.server_state(message)
        signals = TriggerSignals(
            is_dm=message.guild is None,
            mentions_bot=bot_user in message.mentions,
            replied_persona_id=await self.replied_persona_id(message, state),
        )
        admission = await admit_message(incoming, signals, state, db=closing_stale_connections, now_ms=self.bot.clock())
        if not admission.admitted:
            logger.debug("trigger not admitted: %s", admission.skip)
            return
        job = message_job(self.bot, self.bot.webhooks, message, incoming, admission, state, pacing=self.bot.pacing)
        await self.bot.planner.submit(job)


async def setup(bot: PlatformBotMixin) -> None:
    await bot.add_cog(ChatCog(bot))
