"""One locked turn, end to end, on every surface (design.md "One turn, end to end").

A surface — a Discord message (``bot.discord.exts.chat``), a reminder occurrence
(``bot.discord.reminder_turns``), a playground message (``bot.playground.service``) — admits its
trigger (``bot.conversation.admission.admit_message``), plans it on a ``TurnPlanner`` and hands the
``TurnJob`` to ``TurnRunner.run``, which runs every planned persona in plan order, each in four steps:

1. **context**: the persona's ``ChatTurn`` (``build_chat_turn``) and ``build_turn_context`` over a
   fresh transport of the outlet's channel;
2. **generate**: the images the server's model may see join the prompt (``bot.conversation.media``:
   fetched by the runner's ``ImageFetcher``), then the server's provider writes the reply of record
   while the outlet shows the persona composing (the typing indicator, and the reply growing as it
   is written unless the server turned streaming off);
3. **deliver**: the outlet posts the reply or, when none came, tells the channel so;
4. **record**: the prompt record with its turn snapshot, whatever 2 and 3 did.

What the persona does besides replying (tool calls) belongs between 2 and 3: it reads the reply of
record and the turn's context, and the record of 4 says what it did.

The surfaces differ only in their ``Outlet`` (where the turn reads and speaks) and in the ``db``
adapter the runner is built with (``bot.conversation.db``): the bot closes stale connections around
each call, the playground keeps its caller's transaction. Nothing here imports discord.py. Logs
carry counts and failure kinds only, never message text, names or ids.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass
from typing import TYPE_CHECKING, Generic, Protocol, TypeVar

from bot.conversation.admission import Admission
from bot.conversation.db import Db
from bot.conversation.media import ImageFetcher, resolve_images
from bot.conversation.planner import Clock
from bot.conversation.providers import DeltaSink, GenerationResult, Provider, ProviderConfig, ProviderError
from bot.conversation.state import AuthorState, ServerState
from chatcontext.pipeline import build_turn_context
from chatcontext.records.store import store_prompt_record
from chatcontext.snapshot.capture import RecordingTransport, snapshot_or_empty
from chatcontext.transport import ChatTransport
from chatcontext.triggerer import triggerer_naming
from chatcontext.types import (
    Author,
    ChatIncoming,
    ChatTurn,
    ChatTurnContext,
    ContextItem,
    DiscordMessage,
    LockedTurn,
    MemberInfo,
    PersonaInfo,
    ReplyNoticeState,
)
from chatcontext.voice.cache import TranscriptCache

if TYPE_CHECKING:
    from chatcontext.models import PromptRecord

logger = logging.getLogger(__name__)

ProviderFactory = Callable[[ProviderConfig, str], Provider]
EMPTY_REPLY = "provider returned an empty reply"

# What an outlet's delivery gives back: the sent message ids on Discord, the stored reply row in
# the playground.
R = TypeVar("R")
R_co = TypeVar("R_co", covariant=True)


class DeliveryRefused(Exception):
    """The surface refused a post (Discord answered with an HTTP error). The message is short and
    names no one: it becomes the prompt record's error."""


class TurnTransport(ChatTransport, RecordingTransport, Protocol):
    """One persona turn's view of a channel, which remembers what it read for the turn snapshot."""


class Outlet(Protocol[R_co]):
    """Where the persona turns of one job read and speak."""

    @property
    def source(self) -> str:
        """The ``PromptRecord.Source`` of the turns spoken here."""

    @property
    def bot_user(self) -> Author:
        """The account the main persona speaks as."""

    @property
    def channel_name(self) -> str: ...

    @property
    def channel_description(self) -> str | None: ...

    @property
    def thread_parent_id(self) -> str | None: ...

    def transport(self) -> TurnTransport:
        """A fresh view of the channel for one persona turn (BC1-02: every persona reads it again)."""

    def composing(self, persona: PersonaInfo) -> AbstractAsyncContextManager[DeltaSink | None]:
        """Held while ``persona``'s reply is generated; gives where streamed pieces go, or None
        when the surface shows none."""

    async def deliver(
        self, persona: PersonaInfo, text: str, *, reply_notice: ReplyNoticeState | None, locale: str
    ) -> R_co:
        """Post the reply of record; raises ``DeliveryRefused``."""

    async def notify_failure(self, persona: PersonaInfo, *, locale: str) -> None:
        """Tell the channel that no reply was generated; raises ``DeliveryRefused``."""


def message_turn(message: DiscordMessage, personas: tuple[PersonaInfo, ...]) -> LockedTurn:
    """The locked turn of an admitted message: ``personas`` answer it."""
    return LockedTurn(
        incoming=ChatIncoming(message=message),
        channel_id=message.channel_id,
        triggered_persona_ids=tuple(p.persona_id for p in personas if p.persona_id is not None),
    )


@dataclass
class TurnJob(Generic[R]):
    """A locked turn with the outlet it speaks through and the rows it runs with.

    ``locked_turn.incoming.message`` is the trigger as the pipeline reads it. ``author`` holds the
    trigger author's rows, None when they have none (a reminder turn anchored on the message of
    someone never registered); ``triggerer`` is the author as a member of the server, None in a DM
    or for a synthetic trigger.
    """

    locked_turn: LockedTurn
    outlet: Outlet[R]
    personas: tuple[PersonaInfo, ...]
    server: ServerState
    author: AuthorState | None
    triggerer: MemberInfo | None = None

    @classmethod
    def answering(
        cls,
        message: DiscordMessage,
        admission: Admission,
        server: ServerState,
        outlet: Outlet[R],
        *,
        triggerer: MemberInfo | None,
    ) -> TurnJob[R]:
        """The job of an admitted message: its personas reply to it."""
        turn = message_turn(message, admission.personas)
        return cls(turn, outlet, admission.personas, server, admission.author, triggerer=triggerer)


@dataclass(frozen=True)
class TurnResult(Generic[R]):
    """One persona turn: its prompt record and what the outlet delivered (None when no reply was)."""

    record: PromptRecord
    reply: R | None


def build_chat_turn(job: TurnJob[R], persona: PersonaInfo, index: int, *, now_ms: int) -> ChatTurn:
    """The ``ChatTurn`` of the ``index``-th persona of the job."""
    outlet, server = job.outlet, job.server
    trigger = job.locked_turn.incoming.message
    user_row = job.author.user_row if job.author else None
    blacklisted = bool(job.author and job.author.blacklisted)
    name = triggerer_naming(server.config, persona, user_row, job.triggerer, trigger.author, blacklisted=blacklisted)
    bot_user = outlet.bot_user
    return ChatTurn(
        locked_turn=job.locked_turn,
        persona=persona,
        all_personas=server.personas,
        server=server.config,
        channel_name=outlet.channel_name,
        bot_user=bot_user,
        now_ms=now_ms,
        user_row=user_row,
        main_persona=server.main_persona,
        persona_index=index,
        total_personas=len(job.personas),
        channel_description=outlet.channel_description,
        thread_parent_id=outlet.thread_parent_id,
        triggerer_name=name.nickname,
        triggerer_formatted_name=name.formatted,
        triggerer_address_term=name.address_term,
        is_self_message=trigger.author.id == bot_user.id,
    )


class TurnRunner:
    def __init__(
        self,
        *,
        db: Db,
        provider_factory: ProviderFactory,
        transcripts: TranscriptCache,
        clock: Clock,
        stream: bool = True,
        image_fetcher: ImageFetcher | None = None,
    ) -> None:
        """``image_fetcher`` reads the images a vision model is sent (None: the surface sends none)."""
        self.db = db
        self.provider_factory = provider_factory
        self.transcripts = transcripts
        self.clock = clock
        self.stream = stream
        self.image_fetcher = image_fetcher

    async def run(self, job: TurnJob[R]) -> list[TurnResult[R]]:
        """Every persona of the locked turn in plan order; each re-reads the channel (BC1-02), so a
        later persona sees the replies of the earlier ones. A persona whose context could not be
        built has no record, and no result."""
        results = []
        for index, persona in enumerate(job.personas):
            result = await self.run_persona_turn(job, persona, index)
            if result is not None:
                results.append(result)
        return results

    async def run_persona_turn(self, job: TurnJob[R], persona: PersonaInfo, index: int) -> TurnResult[R] | None:
        outlet = job.outlet
        turn = build_chat_turn(job, persona, index, now_ms=self.clock())
        transport = outlet.transport()
        locale = job.server.config.preferred_locale
        try:
            ctx: ChatTurnContext = await self.db(build_turn_context)(turn, transport, transcripts=self.transcripts)
        except Exception:
            logger.exception("context build failed; no prompt record written")
            await self._notify_failure(outlet, persona, locale)
            return None

        provider = self.provider_factory(job.server.provider, persona.persona_nickname)
        prompt = await resolve_images(ctx.context_items, job.server.images, self.image_fetcher)
        result, error = await self._generate(provider, prompt.items, outlet, persona, live=job.server.stream_replies)
        # The reply of record. What the persona does besides replying (tool calls) belongs here,
        # between generating and delivering (module docstring).
        reply_text = result.text.strip() if result else ""
        reply: R | None = None
        if reply_text:
            try:
                reply = await outlet.deliver(
                    ctx.current_persona,
                    reply_text,
                    reply_notice=ctx.streaming_context.reply_notice_state,
                    locale=locale,
                )
            except DeliveryRefused as exc:
                error = f"delivery failed ({exc})"
                logger.warning("reply delivery failed (%s)", exc)
        else:
            error = error or EMPTY_REPLY
            await self._notify_failure(outlet, ctx.current_persona, locale)
        record = await self.db(store_prompt_record)(
            ctx,
            snapshot=await self.db(snapshot_or_empty)(turn, transport),
            source=outlet.source,
            provider=provider.name,
            model_name=provider.model_name,
            reply_text=reply_text,
            error=error,
            latency_ms=result.latency_ms if result else None,
            usage=result.usage if result else None,
            images=prompt.record,
        )
        return TurnResult(record, reply)

    async def _generate(
        self, provider: Provider, items: Sequence[ContextItem], outlet: Outlet[R], persona: PersonaInfo, *, live: bool
    ) -> tuple[GenerationResult | None, str]:
        """``live``: the server shows the reply while it is written (its stream-replies setting)."""
        async with outlet.composing(persona) as on_delta:
            try:
                if on_delta is None or not live:  # nothing shows a partial reply: the provider gets no sink
                    return await provider.generate(items, stream=self.stream), ""
                return await provider.generate(items, stream=self.stream, on_delta=on_delta), ""
            except ProviderError as exc:
                return None, str(exc)

    async def _notify_failure(self, outlet: Outlet[R], persona: PersonaInfo, locale: str) -> None:
        try:
            await outlet.notify_failure(persona, locale=locale)
        except DeliveryRefused as exc:
            logger.warning("error notice not delivered (%s)", exc)
