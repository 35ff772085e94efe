"""One locked turn, end to end: for each planned persona build the context, generate, deliver and
write the prompt record (design.md "One turn, end to end").

The pipeline and the ORM are synchronous: they run through ``database_sync_to_async``
(thread-sensitive, stale connections closed around each call); the transport they read bridges back
to this event loop. Logs carry counts and failure kinds only, never message text, names or ids.
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import discord
from channels.db import database_sync_to_async

from bot.delivery import WebhookRegistry, deliver_reply, send_error_notice
from bot.discord_transport import DiscordTransport, to_author, to_member_info
from bot.providers import GenerationResult, Provider, ProviderConfig, ProviderError
from bot.rows import AuthorState, ServerState
from bot.turn_snapshot import capture_snapshot
from chatcontext.pipeline import build_turn_context
from chatcontext.records import store_prompt_record
from chatcontext.triggerer import triggerer_naming
from chatcontext.types import ChatTurn, ChatTurnContext, JSONDict, LockedTurn, PersonaInfo
from chatcontext.voice_cache import TranscriptCache

logger = logging.getLogger(__name__)

ProviderFactory = Callable[[ProviderConfig, str], Provider]
Clock = Callable[[], int]
DM_CHANNEL_NAME = "direct-message"
EMPTY_REPLY = "provider returned an empty reply"


@dataclass
class TurnJob:
    """A locked turn with the live Discord objects and rows it was admitted with."""

    locked_turn: LockedTurn
    trigger: discord.Message
    personas: tuple[PersonaInfo, ...]
    server: ServerState
    author: AuthorState


def build_chat_turn(
    job: TurnJob, persona: PersonaInfo, index: int, *, bot_user: discord.ClientUser, now_ms: int
) -> ChatTurn:
    channel = job.trigger.channel
    author = job.trigger.author
    member = to_member_info(author, presence_intent=False) if isinstance(author, discord.Member) else None
    name = triggerer_naming(
        job.server.config, persona, job.author.user_row, member, to_author(author), blacklisted=job.author.blacklisted
    )
    return ChatTurn(
        locked_turn=job.locked_turn,
        persona=persona,
        all_personas=job.server.personas,
        server=job.server.config,
        channel_name=getattr(channel, "name", None) or DM_CHANNEL_NAME,
        bot_user=to_author(bot_user),
        now_ms=now_ms,
        user_row=job.author.user_row,
        main_persona=job.server.main_persona,
        persona_index=index,
        total_personas=len(job.personas),
        channel_description=getattr(channel, "topic", None),
        thread_parent_id=str(channel.parent_id) if isinstance(channel, discord.Thread) else None,
        triggerer_name=name.nickname,
        triggerer_formatted_name=name.formatted,
        triggerer_address_term=name.address_term,
    )


class TurnRunner:
    def __init__(
        self,
        client: discord.Client,
        *,
        webhooks: WebhookRegistry,
        provider_factory: ProviderFactory,
        transcripts: TranscriptCache,
        clock: Clock,
        stream: bool = True,
    ) -> None:
        self.client = client
        self.webhooks = webhooks
        self.provider_factory = provider_factory
        self.transcripts = transcripts
        self.clock = clock
        self.stream = stream

    async def run(self, job: TurnJob) -> None:
        """Every persona of the locked turn in plan order; each re-reads the channel (BC1-02), so a
        later persona sees the replies of the earlier ones."""
        for index, persona in enumerate(job.personas):
            await self.run_persona_turn(job, persona, index)

    async def run_persona_turn(self, job: TurnJob, persona: PersonaInfo, index: int) -> None:
        assert self.client.user is not None
        turn = build_chat_turn(job, persona, index, bot_user=self.client.user, now_ms=self.clock())
        transport = DiscordTransport(self.client, job.trigger.channel, job.trigger)
        locale = job.server.config.preferred_locale
        try:
            ctx: ChatTurnContext = await database_sync_to_async(build_turn_context)(
                turn, transport, transcripts=self.transcripts
            )
        except Exception:
            logger.exception("context build failed; no prompt record written")
            await self._notify_failure(job.trigger, locale)
            return

        provider = self.provider_factory(job.server.provider, persona.persona_nickname)
        result, error = await self._generate(provider, ctx, job.trigger.channel)
        reply_text = result.text.strip() if result else ""
        if reply_text:
            try:
                await deliver_reply(
                    job.trigger,
                    ctx.current_persona,
                    reply_text,
                    webhooks=self.webhooks,
                    reply_notice=ctx.streaming_context.reply_notice_state,
                    locale=locale,
                )
            except discord.HTTPException as exc:
                error = f"delivery failed (HTTP {exc.status})"
                logger.warning("reply delivery failed (HTTP %s)", exc.status)
        else:
            error = error or EMPTY_REPLY
            await self._notify_failure(job.trigger, locale)
        await database_sync_to_async(store_prompt_record)(
            ctx,
            snapshot=await self._snapshot(turn, transport),
            source="bot",
            provider=provider.name,
            model_name=provider.model_name,
            reply_text=reply_text,
            error=error,
            latency_ms=result.latency_ms if result else None,
            usage=result.usage if result else None,
        )

    async def _snapshot(self, turn: ChatTurn, transport: DiscordTransport) -> JSONDict:
        """The turn's snapshot; a failure to capture it never costs the record (it keeps ``{}``)."""
        try:
            return await database_sync_to_async(capture_snapshot)(
                turn, transport.messages.values(), transport.members.values(), transport.reaction_users
            )
        except Exception:
            logger.exception("turn snapshot not captured")
            return {}

    async def _generate(
        self, provider: Provider, ctx: ChatTurnContext, channel: Any
    ) -> tuple[GenerationResult | None, str]:
        async with contextlib.AsyncExitStack() as stack:
            # The typing indicator is a courtesy: a channel that refuses it still gets the reply.
            with contextlib.suppress(discord.HTTPException):
                await stack.enter_async_context(channel.typing())
            try:
                return await provider.generate(ctx.context_items, stream=self.stream), ""
            except ProviderError as exc:
                return None, str(exc)

    async def _notify_failure(self, trigger: discord.Message, locale: str) -> None:
        try:
            await send_error_notice(trigger, locale)
        except discord.HTTPException as exc:
            logger.warning("error notice not delivered (HTTP %s)", exc.status)
