"""One locked turn, end to end: for each planned persona build the context, generate, deliver and
write the prompt record (design.md "One turn, end to end").

Message turns and reminder turns (``bot.discord.reminder_turns``) run through the same ``TurnRunner``; they
differ only in their ``TurnOutlet``: a message turn replies to its trigger, a reminder turn posts in
its channel.

The pipeline and the ORM are synchronous: they run through ``database_sync_to_async``
(thread-sensitive, stale connections closed around each call); the transport they read bridges back
to this event loop. Logs carry counts and failure kinds only, never message text, names or ids.
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Protocol

import discord
from channels.db import database_sync_to_async

from bot.conversation.providers import GenerationResult, Provider, ProviderConfig, ProviderError
from bot.conversation.state import AuthorState, ServerState
from bot.discord.delivery import WebhookRegistry, deliver_reply, send_error_notice
from bot.discord.transport import DiscordTransport, to_author, to_member_info
from bot.turn_snapshot import snapshot_or_empty
from chatcontext.pipeline import build_turn_context
from chatcontext.records import store_prompt_record
from chatcontext.triggerer import triggerer_naming
from chatcontext.types import ChatTurn, ChatTurnContext, LockedTurn, PersonaInfo, ReplyNoticeState
from chatcontext.voice_cache import TranscriptCache

logger = logging.getLogger(__name__)

ProviderFactory = Callable[[ProviderConfig, str], Provider]
Clock = Callable[[], int]
DM_CHANNEL_NAME = "direct-message"
EMPTY_REPLY = "provider returned an empty reply"


class TurnOutlet(Protocol):
    """Where the persona turns of one job speak, and what a failed turn tells the channel."""

    @property
    def channel(self) -> discord.abc.Messageable: ...

    async def deliver(
        self,
        persona: PersonaInfo,
        text: str,
        *,
        webhooks: WebhookRegistry,
        reply_notice: ReplyNoticeState | None,
        locale: str,
    ) -> None:
        """Send the reply; raises ``discord.HTTPException`` when Discord refused it."""

    async def notify_failure(self, persona: PersonaInfo, *, webhooks: WebhookRegistry, locale: str) -> None:
        """Tell the channel that no reply was generated; raises ``discord.HTTPException``."""


@dataclass(frozen=True)
class ReplyToTrigger:
    """A message turn answers its trigger (native reply, or the alter's webhook)."""

    trigger: discord.Message

    @property
    def channel(self) -> discord.abc.Messageable:
        return self.trigger.channel

    async def deliver(
        self,
        persona: PersonaInfo,
        text: str,
        *,
        webhooks: WebhookRegistry,
        reply_notice: ReplyNoticeState | None,
        locale: str,
    ) -> None:
        await deliver_reply(self.trigger, persona, text, webhooks=webhooks, reply_notice=reply_notice, locale=locale)

    async def notify_failure(self, persona: PersonaInfo, *, webhooks: WebhookRegistry, locale: str) -> None:
        await send_error_notice(self.trigger, locale)


@dataclass
class TurnJob:
    """A locked turn with the live Discord objects and rows it runs with.

    ``locked_turn.incoming.message`` is the trigger as the pipeline reads it; ``trigger`` is the
    same message live from Discord, or None when the trigger is synthetic (a reminder in a channel
    without readable history). ``author`` holds the trigger author's rows, None when they have none.
    """

    locked_turn: LockedTurn
    outlet: TurnOutlet
    personas: tuple[PersonaInfo, ...]
    server: ServerState
    author: AuthorState | None
    trigger: discord.Message | None = None

    @classmethod
    def answering(
        cls,
        locked_turn: LockedTurn,
        message: discord.Message,
        personas: tuple[PersonaInfo, ...],
        server: ServerState,
        author: AuthorState,
    ) -> TurnJob:
        """The job of an admitted message: its personas reply to it."""
        return cls(locked_turn, ReplyToTrigger(message), personas, server, author, trigger=message)


def build_chat_turn(
    job: TurnJob, persona: PersonaInfo, index: int, *, bot_user: discord.ClientUser, now_ms: int
) -> ChatTurn:
    channel = job.outlet.channel
    trigger = job.locked_turn.incoming.message
    live_author = job.trigger.author if job.trigger is not None else None
    member = to_member_info(live_author, presence_intent=False) if isinstance(live_author, discord.Member) else None
    user_row = job.author.user_row if job.author else None
    blacklisted = bool(job.author and job.author.blacklisted)
    name = triggerer_naming(job.server.config, persona, user_row, member, trigger.author, blacklisted=blacklisted)
    bot_author = to_author(bot_user)
    return ChatTurn(
        locked_turn=job.locked_turn,
        persona=persona,
        all_personas=job.server.personas,
        server=job.server.config,
        channel_name=getattr(channel, "name", None) or DM_CHANNEL_NAME,
        bot_user=bot_author,
        now_ms=now_ms,
        user_row=user_row,
        main_persona=job.server.main_persona,
        persona_index=index,
        total_personas=len(job.personas),
        channel_description=getattr(channel, "topic", None),
        thread_parent_id=str(channel.parent_id) if isinstance(channel, discord.Thread) else None,
        triggerer_name=name.nickname,
        triggerer_formatted_name=name.formatted,
        triggerer_address_term=name.address_term,
        is_self_message=trigger.author.id == bot_author.id,
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
        transport = DiscordTransport(self.client, job.outlet.channel, job.trigger or turn.incoming.message)
        locale = job.server.config.preferred_locale
        try:
            ctx: ChatTurnContext = await database_sync_to_async(build_turn_context)(
                turn, transport, transcripts=self.transcripts
            )
        except Exception:
            logger.exception("context build failed; no prompt record written")
            await self._notify_failure(job.outlet, persona, locale)
            return

        provider = self.provider_factory(job.server.provider, persona.persona_nickname)
        result, error = await self._generate(provider, ctx, job.outlet.channel)
        reply_text = result.text.strip() if result else ""
        if reply_text:
            try:
                await job.outlet.deliver(
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
            await self._notify_failure(job.outlet, ctx.current_persona, locale)
        await database_sync_to_async(store_prompt_record)(
            ctx,
            snapshot=await database_sync_to_async(snapshot_or_empty)(turn, transport),
            source="bot",
            provider=provider.name,
            model_name=provider.model_name,
            reply_text=reply_text,
            error=error,
            latency_ms=result.latency_ms if result else None,
            usage=result.usage if result else None,
        )

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

    async def _notify_failure(self, outlet: TurnOutlet, persona: PersonaInfo, locale: str) -> None:
        try:
            await outlet.notify_failure(persona, webhooks=self.webhooks, locale=locale)
        except discord.HTTPException as exc:
            logger.warning("error notice not delivered (HTTP %s)", exc.status)
