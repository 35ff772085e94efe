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

What the persona does besides replying happens in 2: on a turn that offers tools
(``bot.conversation.tools.gating``) the provider and the tools take bounded rounds
(``bot.conversation.tools.loop``) until the reply of record; in 3 the reply's ``@handle``s become
pings and the tools' confirmations are posted after it; the record of 4 holds every call, and the
rows the calls wrote are pointed at it.

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

from django.conf import settings

from bot.conversation.admission import Admission
from bot.conversation.budget import CALIBRATION, calibration_key, fit_turn
from bot.conversation.db import Db
from bot.conversation.media import ImageFetcher, resolve_images
from bot.conversation.metering import MeteredProvider
from bot.conversation.planner import Clock
from bot.conversation.providers import DeltaSink, GenerationResult, Provider, ProviderConfig, ProviderError
from bot.conversation.refusals import DeliveryRefused
from bot.conversation.state import AuthorState, ServerState
from bot.conversation.tools.base import Tool, ToolTurn
from bot.conversation.tools.gating import ToolPolicy, offered_tools, turn_allows_tools
from bot.conversation.tools.loop import ToolRun, generate_with_tools
from bot.conversation.tools.mentions import ping_handles
from bot.conversation.tools.notices import Notice
from bot.conversation.window_memory import WINDOWS
from chatcontext.participants.target_index import collect_target_index
from chatcontext.personalization import process_cache
from chatcontext.pipeline import build_turn_context
from chatcontext.records.store import store_prompt_record
from chatcontext.snapshot.capture import RecordingTransport, turn_snapshot
from chatcontext.transport import ChatTransport
from chatcontext.triggerer import triggerer_naming
from chatcontext.types import (
    Author,
    ChatIncoming,
    ChatTurn,
    ChatTurnContext,
    ContextItem,
    DiscordMessage,
    JSONDict,
    LockedTurn,
    MemberInfo,
    PersonaInfo,
    ReplyNoticeState,
)
from chatcontext.voice.cache import TranscriptCache
from personas import metrics
from personas.actions.actor import name_prompt_record
from personas.provenance import attach_prompt_record

if TYPE_CHECKING:
    from chatcontext.models import PromptRecord

logger = logging.getLogger(__name__)

ProviderFactory = Callable[[ProviderConfig, str], Provider]
EMPTY_REPLY = "provider returned an empty reply"

# What an outlet's delivery gives back: the sent message ids on Discord, the stored reply row in
# the playground.
R = TypeVar("R")
R_co = TypeVar("R_co", covariant=True)


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

    async def post_notices(self, persona: PersonaInfo, notices: list[Notice]) -> None:
        """Post the confirmations of ``persona``'s tool calls as notices; raises ``DeliveryRefused``."""

    async def react(self, message_id: str, emoji: str) -> None:
        """React to a message of the channel as the bot; raises ``DeliveryRefused``."""


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
    or for a synthetic trigger. ``posted_by``: the staff account that posted the trigger as the
    member (the playground), which the audit trail of the turn's tool writes names.
    """

    locked_turn: LockedTurn
    outlet: Outlet[R]
    personas: tuple[PersonaInfo, ...]
    server: ServerState
    author: AuthorState | None
    triggerer: MemberInfo | None = None
    posted_by: int | None = None

    @classmethod
    def answering(
        cls,
        message: DiscordMessage,
        admission: Admission,
        server: ServerState,
        outlet: Outlet[R],
        *,
        triggerer: MemberInfo | None,
        posted_by: int | None = None,
    ) -> TurnJob[R]:
        """The job of an admitted message: its personas reply to it."""
        turn = message_turn(message, admission.personas)
        return cls(turn, outlet, admission.personas, server, admission.author, triggerer, posted_by)


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
        history_anchor_id=WINDOWS.anchor(job.locked_turn.channel_id, persona.persona_id),
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
            ctx: ChatTurnContext = await self.db(build_turn_context)(
                turn, transport, transcripts=self.transcripts, personalization=process_cache()
            )
        except Exception:
            logger.exception("context build failed; no prompt record written")
            metrics.TURNS.labels(metrics.NO_CONTEXT).inc()
            await self._notify_failure(outlet, persona, locale)
            return None

        WINDOWS.remember(turn.locked_turn.channel_id, persona.persona_id, ctx.history_anchor_id)
        provider = MeteredProvider(
            self.provider_factory(job.server.provider, persona.persona_nickname), job.server.provider.endpoint
        )
        tools = await self._offered_tools(job, ctx, provider)
        counted = fit_turn(ctx, job.server.provider, [tool.spec() for tool in tools])
        prompt = await resolve_images(ctx.context_items, job.server.images, self.image_fetcher)
        # Filled as the calls run, so a provider failure after a call still records what it wrote.
        run = ToolRun(offered=[tool.name for tool in tools])
        turn_tools = ToolTurn.of(self.db, ctx, outlet, self.clock(), account_id=job.posted_by) if tools else None
        result, error = await self._generate(
            provider,
            prompt.items,
            outlet,
            persona,
            live=job.server.stream_replies,
            tools=tools,
            turn_tools=turn_tools,
            run=run,
        )
        if result is not None and not tools:  # a tool turn's usage adds up several requests
            CALIBRATION.observe(calibration_key(job.server.provider), counted=counted, usage=result.usage)
        # The reply of record, with its handles turned into pings (bot.conversation.tools.mentions).
        index, _ = collect_target_index(ctx.context_items)
        reply_text = ping_handles(result.text.strip(), index) if result else ""
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
            metrics.TURNS.labels(metrics.NOT_DELIVERED if reply is None else metrics.REPLIED).inc()
        else:
            metrics.TURNS.labels(metrics.FAILED).inc()
            error = error or EMPTY_REPLY
            await self._notify_failure(outlet, ctx.current_persona, locale)
        if run.notices:
            try:
                await outlet.post_notices(ctx.current_persona, run.notices)
            except DeliveryRefused as exc:
                logger.warning("tool confirmations not delivered (%s)", exc)
        record = await self.db(store_prompt_record)(
            ctx,
            snapshot=await self._snapshot(turn, transport),
            source=outlet.source,
            provider=provider.name,
            model_name=provider.model_name,
            reply_text=reply_text,
            error=error,
            latency_ms=result.latency_ms if result else None,
            usage=result.usage if result else None,
            images=prompt.record,
            tool_calls=run.as_json() if tools else None,
            tool_subjects=run.subjects,
        )
        if run.written:
            await self.db(attach_prompt_record)(run.written, record.pk)
        if turn_tools is not None:
            await self.db(name_prompt_record)(turn_tools.actor, record.pk)
        return TurnResult(record, reply)

    async def _generate(
        self,
        provider: Provider,
        items: Sequence[ContextItem],
        outlet: Outlet[R],
        persona: PersonaInfo,
        *,
        live: bool,
        tools: list[Tool],  # type: ignore[type-arg]
        turn_tools: ToolTurn | None,
        run: ToolRun,
    ) -> tuple[GenerationResult | None, str]:
        """``live``: the server shows the reply while it is written (its stream-replies setting);
        with ``tools`` the model may call them for a few rounds before the reply of record."""
        async with outlet.composing(persona) as on_delta:
            sink = on_delta if live else None  # nothing shows a partial reply: the provider gets no sink
            try:
                if tools and turn_tools is not None:
                    result = await generate_with_tools(
                        provider,
                        items,
                        tools,
                        turn_tools,
                        run,
                        stream=self.stream,
                        on_delta=sink,
                        max_rounds=settings.LLM_TOOL_MAX_ROUNDS,
                        timeout_s=settings.LLM_TOOL_TIMEOUT_SECONDS,
                    )
                elif sink is None:
                    result = await provider.generate(items, stream=self.stream)
                else:
                    result = await provider.generate(items, stream=self.stream, on_delta=sink)
            except ProviderError as exc:
                return None, str(exc)
        return result, ""

    async def _snapshot(self, turn: ChatTurn, transport: TurnTransport) -> JSONDict:
        """The turn's snapshot; a failure to capture it never costs the prompt record (it keeps ``{}``).
        Caught here, outside the ``db`` seam, so a connection lost meanwhile is retried there first."""
        try:
            snapshot: JSONDict = await self.db(turn_snapshot)(turn, transport)
        except Exception:
            logger.exception("turn snapshot not captured")
            return {}
        return snapshot

    async def _offered_tools(self, job: TurnJob[R], ctx: ChatTurnContext, provider: Provider) -> list[Tool]:  # type: ignore[type-arg]
        """The tools this turn offers (``bot.conversation.tools.gating``); the switches are read only
        when the turn and the provider could take tools at all."""
        persona_id = ctx.current_persona.persona_id
        provider_tools = job.server.provider.tools and getattr(provider, "supports_tools", False)
        if not turn_allows_tools(ctx.streaming_context, provider_tools=provider_tools, persona_id=persona_id):
            return []
        assert persona_id is not None
        policy = await self.db(ToolPolicy.load)(job.server.server_id, persona_id)
        return offered_tools(ctx.streaming_context, policy)

    async def _notify_failure(self, outlet: Outlet[R], persona: PersonaInfo, locale: str) -> None:
        try:
            await outlet.notify_failure(persona, locale=locale)
        except DeliveryRefused as exc:
            logger.warning("error notice not delivered (%s)", exc)
