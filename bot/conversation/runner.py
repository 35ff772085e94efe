"""One locked turn, end to end, on every surface (design.md "One turn, end to end").

A surface — a Discord message (``bot.discord.exts.chat``), a reminder occurrence
(``bot.discord.reminder_turns``), a playground message (``bot.playground.service``) — admits its
trigger (``bot.conversation.admission.admit_message``), plans it on a ``TurnPlanner`` and hands the
``TurnJob`` (``bot.conversation.jobs``) to ``TurnRunner.run``, which runs every planned persona in
plan order, each in four steps:

1. **context**: the persona's ``ChatTurn`` (``build_chat_turn``) and ``build_turn_context`` over a
   fresh transport of the outlet's channel;
2. **generate**: the images the server's model may see join the prompt (``bot.conversation.media``:
   fetched by the runner's ``ImageFetcher``), then the server's provider writes the reply of record
   while the outlet shows the persona composing (the typing indicator, and the reply growing as it
   is written unless the server turned streaming off);
3. **deliver**: the outlet posts the reply or, when none came, tells the channel so;
4. **record**: the prompt record with its turn snapshot, whatever 2 and 3 did.

The snapshot is captured in step 1, in the same database call as the context
(``chatcontext.captured``), so nothing 2 and 3 write is in it; step 4 is one database call
(``chatcontext.records.store.record_turn``) that stores the record and points the rows the tools
wrote at it in one transaction.

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

import dataclasses
import logging
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

from django.conf import settings

from bot.conversation.budget import CALIBRATION, calibration_key, context_budget, with_reported_window
from bot.conversation.db import Db
from bot.conversation.emojis import render_custom_emojis
from bot.conversation.jobs import Outlet, R, TurnJob, TurnResult, build_chat_turn
from bot.conversation.media import ImageFetcher, resolve_images
from bot.conversation.metering import MeteredProvider
from bot.conversation.planner import Clock
from bot.conversation.providers import (
    GenerationResult,
    Provider,
    ProviderConfig,
    ProviderError,
    generation_record,
)
from bot.conversation.refusals import DeliveryRefused
from bot.conversation.steering import compact_before_turn
from bot.conversation.tools.base import Tool, ToolTurn
from bot.conversation.tools.gating import ToolPolicy, load_short_term_note, offered_tools, turn_allows_tools
from bot.conversation.tools.loop import ToolLimits, ToolRun, generate_with_tools
from bot.conversation.tools.mentions import ping_handles
from bot.conversation.window_memory import WINDOWS
from chatcontext.captured import CapturedTurn, build_captured_turn, with_budget
from chatcontext.core.budget import fit_context
from chatcontext.core.transcripts import TranscriptCache
from chatcontext.core.types import (
    ChatTurnContext,
    ContextItem,
    PersonaInfo,
    ShortTermNote,
)
from chatcontext.personalization import process_cache
from chatcontext.records.store import Generation, ToolWrites, TurnRecord, record_turn
from personas import metrics

if TYPE_CHECKING:
    pass

logger = logging.getLogger(__name__)

ProviderFactory = Callable[[ProviderConfig, str], Provider]
EMPTY_REPLY = "provider returned an empty reply"


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
        if job.server.auto_compact:
            job = await compact_before_turn(self, job)
        results = []
        for index, persona in enumerate(job.personas):
            result = await self.run_persona_turn(job, persona, index)
            if result is not None:
                results.append(result)
        return results

    async def run_persona_turn(self, job: TurnJob[R], persona: PersonaInfo, index: int) -> TurnResult[R] | None:
        outlet = job.outlet
        config = dataclasses.replace(job.server.provider, sampling=persona.sampling)
        provider = MeteredProvider(self.provider_factory(config, persona.persona_nickname), config.endpoint)
        note = await self._short_term_memory(job, persona, provider)
        turn = build_chat_turn(job, persona, index, now_ms=self.clock(), short_term_memory=note)
        transport = outlet.transport()
        locale = job.server.config.preferred_locale
        try:
            captured: CapturedTurn = await self.db(build_captured_turn)(
                turn, transport, transcripts=self.transcripts, personalization=process_cache()
            )
        except Exception:
            logger.exception("context build failed; no prompt record written")
            metrics.TURNS.labels(metrics.NO_CONTEXT).inc()
            await self._notify_failure(outlet, persona, locale)
            return None
        ctx = captured.ctx
        WINDOWS.remember(turn.locked_turn.channel_id, persona.persona_id, ctx.history_anchor_id)
        tools = await self._offered_tools(job, ctx, provider)
        # The budget is the snapshot's too: the replay cuts the prompt as this turn did (turn-snapshot.md §4);
        # the window is the setting, or the one the endpoint's server reports when that is smaller.
        budget = context_budget(await with_reported_window(job.server.provider), [tool.spec() for tool in tools])
        counted = fit_context(ctx, budget).counted_tokens
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
        # The reply of record, with its handles turned into pings (bot.conversation.tools.mentions)
        # and its :name: shortcodes into the server's emojis (bot.conversation.emojis).
        reply_text = (
            render_custom_emojis(ping_handles(result.text.strip(), ctx.targets.index), ctx.loaded_emojis)
            if result
            else ""
        )
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
        generation = Generation(
            provider.name,
            provider.model_name,
            reply_text,
            error,
            latency_ms=result.latency_ms if result else None,
            usage=result.usage if result else None,
            requested=generation_record(provider),
        )
        writes = (
            ToolWrites(run.as_json(), tuple(run.subjects), tuple(run.written), turn_tools.actor if turn_tools else None)
            if tools
            else None
        )
        record = await self.db(record_turn)(
            TurnRecord(
                ctx,
                with_budget(captured.snapshot, budget),
                outlet.source,
                generation,
                images=prompt.record,
                tools=writes,
                command=job.command.as_json() if job.command else None,
            )
        )
        if reply is not None and ctx.fast_regeneration_recorder is not None:
            try:
                await outlet.offer_regeneration(ctx, record.pk)
            except DeliveryRefused as exc:
                logger.warning("regenerate action not shown (%s)", exc)
        return TurnResult(record, reply)

    async def _generate(
        self,
        provider: Provider,
        items: Sequence[ContextItem],
        outlet: Outlet[R],
        persona: PersonaInfo,
        *,
        live: bool,
        tools: list[Tool],
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
                        limits=ToolLimits(settings.LLM_TOOL_MAX_ROUNDS, settings.LLM_TOOL_TIMEOUT_SECONDS),
                    )
                elif sink is None:
                    result = await provider.generate(items, stream=self.stream)
                else:
                    result = await provider.generate(items, stream=self.stream, on_delta=sink)
            except ProviderError as exc:
                return None, str(exc)
        return result, ""

    async def _short_term_memory(
        self, job: TurnJob[R], persona: PersonaInfo, provider: Provider
    ) -> ShortTermNote | None:
        """The persona's note of the channel (``bot.conversation.tools.gating``); None for a persona
        that is not stored (it has no note)."""
        if persona.persona_id is None:
            return None
        provider_tools = job.server.provider.tools and getattr(provider, "supports_tools", False)
        return await self.db(load_short_term_note)(
            job.server.server_id, persona.persona_id, job.locked_turn.channel_id, provider_tools=provider_tools
        )

    async def _offered_tools(self, job: TurnJob[R], ctx: ChatTurnContext, provider: Provider) -> list[Tool]:
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
