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
from django.conf import settings

from bot.conversation.admission import TriggerSignals, admit, persona_for_webhook_name, screen, select_responders
from bot.conversation.runner import TurnJob
from bot.conversation.state import ServerState, enqueue_voice_transcription, load_author_state, load_server_state
from bot.discord.transport import to_discord_message
from chatcontext.config import StageConfig
from chatcontext.types import ChatIncoming, LockedTurn

if TYPE_CHECKING:
    from bot.discord.client import PlatformBotMixin

logger = logging.getLogger(__name__)

SERVER_STATE_TTL_S = 30.0
DM_SERVER_NAME = "Direct messages"


def server_key(message: discord.Message) -> str:
    """Guild id, or the DM channel id: a DM is its own pseudo server."""
    return str(message.guild.id if message.guild else message.channel.id)


class ChatCog(commands.Cog):
    def __init__(self, bot: PlatformBotMixin) -> None:
        self.bot = bot
        self._servers: dict[str, tuple[float, ServerState]] = {}

    def forget_server(self, server_disc_id: str) -> None:
        self._servers.pop(server_disc_id, None)

    async def server_state(self, message: discord.Message) -> ServerState:
        key = server_key(message)
        cached = self._servers.get(key)
        if cached is not None and cached[0] > time.monotonic():
            return cached[1]
        guild = message.guild
        state = await database_sync_to_async(load_server_state)(
            key,
            name=guild.name if guild else DM_SERVER_NAME,
            is_dm=guild is None,
            locale=str(guild.preferred_locale) if guild else None,
            default_persona=StageConfig.from_env().default_botname,
        )
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
        # With an in-process (eager) Celery, speech-to-text would run on the bot's database thread.
        if incoming.attachments and not settings.CELERY_TASK_ALWAYS_EAGER:
            await database_sync_to_async(enqueue_voice_transcription)(incoming)
        state = await self.server_state(message)
        signals = TriggerSignals(
            is_dm=message.guild is None,
            mentions_bot=bot_user in message.mentions,
            replied_persona_id=await self.replied_persona_id(message, state),
        )
        responders = select_responders(
            state.personas, signals, message.content, deliberate_trigger_mode=state.config.deliberate_trigger_mode
        )
        if not responders:
            return
        author = await database_sync_to_async(load_author_state)(state.server_id, incoming.author, self.bot.clock())
        admission = admit(
            responders, privacy_level=author.user_row.privacy_level, blocked_persona_ids=author.muted_persona_ids
        )
        if not admission.admitted:
            logger.debug("trigger not admitted: %s", admission.skip)
            return
        locked = LockedTurn(
            incoming=ChatIncoming(message=incoming),
            channel_id=str(message.channel.id),
            triggered_persona_ids=tuple(p.persona_id for p in admission.personas if p.persona_id is not None),
        )
        await self.bot.planner.submit(TurnJob.answering(locked, message, admission.personas, state, author))


async def setup(bot: PlatformBotMixin) -> None:
    await bot.add_cog(ChatCog(bot))
