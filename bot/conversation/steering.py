"""The write side of steering a conversation (README "Steering a conversation"), on every surface.

``/refresh`` posts the reset notice (build-context.md BC2-04..06): the next turn's history starts right
after it. ``/compact`` has the server's model summarise the visible window — a separate call with its
own prompt, made from the history a turn of the main persona would read (privacy, blocks and earlier
markers already applied by ``build_turn_context``), recorded as its own prompt record — and posts the
summary as a ``(Refreshed)`` notice: the next turn's history starts *at* it and reads it as
``[System: ## {title}\\n{summary}]`` (BC2-05, BC6-06). A manual entry posts a moderator's text the same
way, without a model call. Each summary is stored with the people whose messages it drew on
(``personas.actions.record_summary``), so forget-me deletes it.

The surfaces (``bot.discord.exts.steering``, ``bot.playground.commands``) decide who may and build the
job; notices go out through the job's outlet, the one a turn's tool confirmations use. With the
server's automatic compaction on, the runner compacts a full window before a turn
(``compact_before_turn``).
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

from bot.conversation.jobs import R, TurnJob, build_chat_turn
from bot.conversation.metering import MeteredProvider
from bot.conversation.providers import ProviderError
from bot.conversation.refusals import DeliveryRefused
from bot.conversation.tools.base import history_authors
from bot.conversation.tools.notices import Notice, notice
from chatcontext.captured import CapturedTurn, build_captured_turn
from chatcontext.core.compaction import summary_prompt, transcript
from chatcontext.core.types import ChatTurnContext, JSONDict
from chatcontext.history import normalize_fetch_limit
from chatcontext.models import PromptRecord
from chatcontext.personalization import process_cache
from chatcontext.records.store import Generation, TurnRecord, record_turn
from personas import actions
from personas import models as m
from personas.provenance import Provenance

if TYPE_CHECKING:  # the runner calls compact_before_turn: steering reads the runner, never imports it
    from bot.conversation.runner import TurnRunner

logger = logging.getLogger(__name__)

Kind = m.ConversationSummary.Kind
# Discord's embed description limit is 4096 characters; the summary notice must fit in one embed.
SUMMARY_MAX_CHARS = 4000
REFRESH_DESCRIPTION = "The personas no longer read the messages before this one."
_REFRESHED_TITLE_KEYS = {
    Kind.SUMMARY: "commands.compact.summary_title_refreshed",
    Kind.ROLEPLAY_SCENE: "commands.compact.roleplay_scene_title_refreshed",
    Kind.MANUAL_ENTRY: "commands.compact.manual_entry_title_refreshed",
}


# The private answers of the commands, the same on every surface. Who may: members with Manage Messages.
REFRESH_REFUSED = (
    "Only members with Manage Messages can use /refresh on this server: it clears the conversation the personas "
    "read, for everyone in the channel. A moderator can open it to every member (admin: Servers → this server → "
    "/refresh for everyone)."
)
COMPACT_REFUSED = (
    "Only members with Manage Messages can use /compact: it replaces the conversation the personas read with a "
    "summary, for everyone in the channel."
)
NO_PERSONA = "This server has no persona yet."
REFRESHED = "Conversation cleared: the personas now read only what comes after the notice."
MANUAL_NEEDS_TEXT = "A manual entry needs its text (the summary you want the personas to read)."
TEXT_ONLY_FOR_MANUAL = "Text is for a manual entry only; the other kinds are written by the model."
MANUAL_POSTED = "Manual entry posted: the personas now read it and what comes after it."


def compacted(outcome: Compaction) -> str:
    """The private answer to the member who asked for a compaction."""
    if outcome.done:
        return "Conversation compacted: the personas now read the summary and what comes after it."
    return f"Nothing was compacted: {outcome.error or 'no summary was written'}. The conversation is as it was."


def refresh_notice() -> Notice:
    return notice("commands.refresh.title", REFRESH_DESCRIPTION)


def summary_notice(kind: str, text: str) -> Notice:
    """The notice that is both the summary and the history marker (``compact_refresh``)."""
    return notice(_REFRESHED_TITLE_KEYS[Kind(kind)], text[:SUMMARY_MAX_CHARS])


@dataclass(frozen=True)
class CompactRequest:
    """``job``: a turn of the main persona anchored on the channel's newest message (its window is the
    one summarised); ``requested_by``: the member's Discord id, empty for automatic compaction."""

    job: TurnJob[Any]
    kind: str
    requested_by: str = ""
    # Automatic compaction: summarise only when the window is full (``window_reached``).
    only_when_full: bool = False


@dataclass(frozen=True)
class Compaction:
    record: PromptRecord | None  # None: no context could be built, so no call was made
    summary: str = ""
    error: str = ""

    @property
    def done(self) -> bool:
        return bool(self.summary) and not self.error


async def compact(runner: TurnRunner, request: CompactRequest) -> Compaction:
    """Summarise, record the call, post the summary notice, store the summary. A failed call or a
    refused post leaves the conversation as it was (the record says why)."""
    job, kind = request.job, Kind(request.kind)
    persona = job.personas[0]
    turn = build_chat_turn(job, persona, 0, now_ms=runner.clock())
    transport = job.outlet.transport()
    try:
        captured: CapturedTurn = await runner.db(build_captured_turn)(
            turn, transport, transcripts=runner.transcripts, personalization=process_cache()
        )
    except Exception:
        logger.exception("compaction: context build failed; nothing summarised")
        return Compaction(record=None, error="the conversation could not be read")
    ctx = captured.ctx
    if request.only_when_full and not window_reached(ctx):
        return Compaction(record=None)
    lines = transcript(ctx)
    command: JSONDict = {
        "name": "compact",
        "kind": str(kind),
        "by": request.requested_by or "automatic",
        "summarised_messages": len(lines),
    }
    items = summary_prompt(ctx, kind)
    provider = MeteredProvider(
        runner.provider_factory(job.server.provider, persona.persona_nickname), job.server.provider.endpoint
    )
    summary, error, result = "", "", None
    if not lines:
        error = "nothing to summarise: the conversation is empty"
    else:
        try:
            result = await provider.generate(items, stream=False)
            summary = result.text.strip()[:SUMMARY_MAX_CHARS]
            error = "" if summary else "the model returned an empty summary"
        except ProviderError as exc:
            error = str(exc)
    posted: str | None = None
    if summary:
        try:
            await job.outlet.post_notices(ctx.current_persona, [summary_notice(kind, summary)])
            posted = "posted"
        except DeliveryRefused as exc:
            error = f"summary notice not delivered ({exc})"
            logger.warning("compaction: %s", error)
    command["notice"] = posted or "not posted"
    generation = Generation(
        provider.name,
        provider.model_name,
        summary,
        error,
        latency_ms=result.latency_ms if result else None,
        usage=result.usage if result else None,
    )
    # The snapshot replays the context the summary prompt was made from (summary_prompt is a pure
    # function of it); the record holds the summary prompt itself.
    record = await runner.db(record_turn)(
        TurnRecord(replace(ctx, context_items=items), captured.snapshot, job.outlet.source, generation, command=command)
    )
    if posted:
        write = SummaryFields(
            persona_id=persona.persona_id,
            channel_disc_id=job.locked_turn.channel_id,
            kind=kind,
            content=summary,
            author_disc_ids=history_authors(ctx),
            requested_by_disc_id=request.requested_by,
            prompt_record_id=record.pk,
        )
        await runner.db(store_summary)(write)
    return Compaction(record=record, summary=summary if posted else "", error=error)


def window_reached(ctx: ChatTurnContext) -> bool:
    """The history fills the server's window (BC2-01) and no marker shortens it already."""
    history = ctx.diagnostics["history"]
    excluded: dict[str, int] = history["excluded_message_counts"]
    if "reset_marker" in excluded:
        return False
    window = normalize_fetch_limit(ctx.turn.server.message_fetch_limit)
    return history["visible_message_count"] + sum(excluded.values()) >= window


async def compact_before_turn(runner: TurnRunner, job: TurnJob[R]) -> TurnJob[R]:
    """Automatic compaction (the server's setting): when the window is full, the main persona's model
    summarises it first. The summary notice then stands after the trigger, so the turn is run as a
    queued one (BC2-03: the trigger is read after the summary, and an alter's reply says what it
    answers, BC9-04)."""
    main = job.server.main_persona
    if main is None:
        return job
    request = CompactRequest(replace(job, personas=(main,)), Kind.SUMMARY, only_when_full=True)
    if not (await compact(runner, request)).done:
        return job
    locked = job.locked_turn
    queued = replace(locked, incoming=replace(locked.incoming, is_from_queue=True))
    return replace(job, locked_turn=queued)


@dataclass(frozen=True)
class SummaryFields:
    """A summary to store, as the async side knows it (ids, not rows)."""

    persona_id: int | None
    channel_disc_id: str
    kind: str
    content: str
    author_disc_ids: tuple[str, ...]
    requested_by_disc_id: str
    prompt_record_id: int | None = None


def store_summary(fields: SummaryFields) -> m.ConversationSummary:
    """``personas.actions.record_summary`` by the member who asked, or the platform (automatic)."""
    # A summary is kept under a stored persona: steering runs on the server's personas, which have rows.
    assert fields.persona_id is not None
    requested_by = fields.requested_by_disc_id
    actor = actions.Actor.slash_command(requested_by) if requested_by else actions.Actor.system("automatic compaction")
    write = actions.SummaryWrite(
        persona=m.Persona.objects.get(pk=fields.persona_id),
        channel_disc_id=fields.channel_disc_id,
        kind=fields.kind,
        content=fields.content,
        author_disc_ids=fields.author_disc_ids,
        requested_by_disc_id=requested_by,
        provenance=Provenance(prompt_record_id=fields.prompt_record_id),
    )
    return actions.record_summary(write, actor=actor)


async def post_manual_entry(runner: TurnRunner, job: TurnJob[Any], text: str, requested_by: str) -> None:
    """A moderator's own summary, posted as the ``Manual Entry (Refreshed)`` notice; no model call.
    Raises ``DeliveryRefused`` (nothing is stored then)."""
    persona = job.personas[0]
    await job.outlet.post_notices(persona, [summary_notice(Kind.MANUAL_ENTRY, text)])
    fields = SummaryFields(
        persona_id=persona.persona_id,
        channel_disc_id=job.locked_turn.channel_id,
        kind=Kind.MANUAL_ENTRY,
        content=text[:SUMMARY_MAX_CHARS],
        author_disc_ids=(requested_by,),  # the moderator's own words
        requested_by_disc_id=requested_by,
    )
    await runner.db(store_summary)(fields)
