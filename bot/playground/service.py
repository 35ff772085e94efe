"""A playground message → the same path a Discord message takes (design.md "One turn, end to end").

``post_playground_message`` stores the message, sends an uploaded voice file through the
transcription task (``bot.voice.tasks``) and waits for it, then runs the bot's admission
(``bot.conversation.admission``: ``screen``, ``select_responders``, ``admit`` over
``bot.conversation.state.load_author_state``: mention, reply to a persona, trigger words;
privacy-FULL, muted and blocked authors cannot trigger), plans the turn on a
``bot.conversation.planner.TurnPlanner`` (per-channel lock, queued turns carry ``is_from_queue``)
and, for each persona of the plan, runs ``build_turn_context`` over a ``PlaygroundTransport``,
generates through the server's provider (the offline echo provider when none is configured) with
the reply streamed to the page, stores the reply in the channel and writes a ``PromptRecord``
(source ``playground``) with its turn snapshot.

``send_playground_message`` is the synchronous entry point with the signature of issue 8.
Logs carry counts and failure kinds only, never message text, names or ids.
"""

from __future__ import annotations

import asyncio
import logging
import re
import time
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, TypeVar

from asgiref.sync import async_to_sync, sync_to_async
from django.core.files.uploadedfile import UploadedFile

from bot.conversation.admission import Skip, TriggerSignals, admit, screen, select_responders
from bot.conversation.planner import TurnPlanner
from bot.conversation.providers import GenerationResult, Provider, ProviderConfig, ProviderError, build_provider
from bot.conversation.runner import EMPTY_REPLY
from bot.conversation.state import AuthorState, ServerState, load_author_state, load_server_state
from bot.discord.delivery import ERROR_MESSAGES, localized
from bot.playground import live, store
from bot.playground.models import PlaygroundChannel, PlaygroundMessage
from bot.playground.transport import PlaygroundTransport
from bot.turn_snapshot import snapshot_or_empty
from bot.voice.tasks import SOFT_TIME_LIMIT_SECONDS, TranscriptionOutcome, transcribe_voice_attachment
from chatcontext.config import StageConfig
from chatcontext.models import PromptRecord
from chatcontext.pipeline import build_turn_context
from chatcontext.records import store_prompt_record
from chatcontext.simplify.media import is_audio_attachment
from chatcontext.triggerer import triggerer_naming
from chatcontext.types import (
    Author,
    ChatIncoming,
    ChatTurn,
    ChatTurnContext,
    DiscordMessage,
    JSONDict,
    LockedTurn,
    PersonaInfo,
    PrivacyLevel,
)
from chatcontext.voice_cache import TranscriptCache, shared_cache
from personas import models as m

logger = logging.getLogger(__name__)

T = TypeVar("T")
ProviderFactory = Callable[[ProviderConfig, str], Provider]
Clock = Callable[[], int]
QUEUE_FULL = "queue_full"
# The echo provider answers at once; a short pause per word lets a person watch it stream in.
ECHO_STREAM_PACE_S = 0.04
TRANSCRIPTION_WAIT_S = SOFT_TIME_LIMIT_SECONDS + 30


def db(fn: Callable[..., T]) -> Callable[..., Awaitable[T]]:
    """ORM work off the event loop, on Django's thread for sync code. Not channels'
    ``database_sync_to_async``: it closes the thread's connection around each call, which would
    end a caller's transaction (``send_playground_message`` inside ``atomic``, a test). The
    playground runs inside a request, whose start and end already close stale connections."""
    return sync_to_async(fn, thread_sensitive=True)


def wall_clock_ms() -> int:
    return int(time.time() * 1000)


def mentions_user(content: str, user_id: str) -> bool:
    return re.search(rf"<@!?{re.escape(user_id)}>", content) is not None


@dataclass
class TurnResult:
    """One persona turn of a trigger: its record and the reply it posted (None when it failed)."""

    record: PromptRecord
    reply: PlaygroundMessage | None


@dataclass
class PlaygroundOutcome:
    message: PlaygroundMessage
    skip: str | None = None  # a bot.conversation.admission.Skip value, or QUEUE_FULL
    results: list[TurnResult] = field(default_factory=list)
    transcription: TranscriptionOutcome | None = None

    @property
    def records(self) -> list[PromptRecord]:
        return [r.record for r in self.results]


@dataclass
class PlaygroundJob:
    """A locked turn of a playground channel; ``done`` resolves in the submitter's event loop."""

    locked_turn: LockedTurn
    runner: PlaygroundRunner
    channel: PlaygroundChannel
    trigger_row: PlaygroundMessage
    personas: tuple[PersonaInfo, ...]
    server: ServerState
    author: AuthorState
    bot_user: Author
    done: asyncio.Future[list[TurnResult]]


def _resolve(future: asyncio.Future[list[TurnResult]], result: Any) -> None:
    """Settle the submitter's future from whichever loop or thread ran the job."""

    def settle() -> None:
        if future.done():
            return
        if isinstance(result, BaseException):
            future.set_exception(result)
        else:
            future.set_result(result)

    future.get_loop().call_soon_threadsafe(settle)


async def _run_job(job: PlaygroundJob) -> None:
    try:
        results = await job.runner.run(job)
    except BaseException as exc:
        _resolve(job.done, exc)
        raise
    _resolve(job.done, results)


# One planner per process, as the bot has one: its locks order the turns of each channel.
PLANNER: TurnPlanner[PlaygroundJob] = TurnPlanner(_run_job, wall_clock_ms)


def build_chat_turn(job: PlaygroundJob, persona: PersonaInfo, index: int, *, now_ms: int) -> ChatTurn:
    """The ``ChatTurn`` of one persona, as ``bot.conversation.runner.build_chat_turn`` builds it on Discord."""
    trigger = job.locked_turn.incoming.message
    member = PlaygroundTransport(job.channel, bot_user=job.bot_user).get_cached_member(trigger.author.id)
    state = job.server
    name = triggerer_naming(
        state.config, persona, job.author.user_row, member, trigger.author, blacklisted=job.author.blacklisted
    )
    return ChatTurn(
        locked_turn=job.locked_turn,
        persona=persona,
        all_personas=state.personas,
        server=state.config,
        channel_name=job.channel.name,
        bot_user=job.bot_user,
        now_ms=now_ms,
        user_row=job.author.user_row,
        main_persona=state.main_persona,
        persona_index=index,
        total_personas=len(job.personas),
        channel_description=job.channel.topic or None,
        triggerer_name=name.nickname,
        triggerer_formatted_name=name.formatted,
        triggerer_address_term=name.address_term,
    )


class PlaygroundRunner:
    """Runs the persona turns of a locked playground turn, like ``bot.conversation.runner.TurnRunner`` on Discord."""

    def __init__(
        self,
        *,
        provider_factory: ProviderFactory = build_provider,
        transcripts: TranscriptCache = shared_cache,
        clock: Clock = wall_clock_ms,
        stream: bool = True,
        echo_pace_s: float = 0.0,
    ) -> None:
        self.provider_factory = provider_factory
        self.transcripts = transcripts
        self.clock = clock
        self.stream = stream
        self.echo_pace_s = echo_pace_s

    async def run(self, job: PlaygroundJob) -> list[TurnResult]:
        """Every persona in plan order; each reads the channel again (BC1-02), so a later persona
        sees the earlier ones' replies."""
        results = []
        for index, persona in enumerate(job.personas):
            result = await self.run_persona_turn(job, persona, index)
            if result is not None:
                results.append(result)
        return results

    async def run_persona_turn(self, job: PlaygroundJob, persona: PersonaInfo, index: int) -> TurnResult | None:
        turn = await db(build_chat_turn)(job, persona, index, now_ms=self.clock())
        transport = PlaygroundTransport(job.channel, bot_user=job.bot_user)
        try:
            ctx: ChatTurnContext = await db(build_turn_context)(turn, transport, transcripts=self.transcripts)
        except Exception:
            logger.exception("playground context build failed; no prompt record written")
            await self._post_error_notice(job)
            return None

        stream = live.stream_id(job.trigger_row.disc_id, persona.persona_id)
        await live.publish(job.channel.pk, {"kind": "typing", "stream_id": stream, "persona": persona.persona_nickname})
        provider = self.provider_factory(job.server.provider, persona.persona_nickname)
        result, error = await self._generate(provider, ctx, job.channel.pk, stream)
        reply_text = result.text.strip() if result else ""
        reply: PlaygroundMessage | None = None
        if reply_text:
            reply = await db(store.store_bot_message)(
                job.channel,
                reply_text,
                persona=persona,
                bot_user=job.bot_user,
                reply_to=job.trigger_row,
                now_ms=self.clock(),
            )
            await self._publish_message(job, reply, stream)
        else:
            error = error or EMPTY_REPLY
            await self._post_error_notice(job, stream)
        record = await db(store_prompt_record)(
            ctx,
            snapshot=await db(snapshot_or_empty)(turn, transport),
            source=PromptRecord.Source.PLAYGROUND,
            provider=provider.name,
            model_name=provider.model_name,
            reply_text=reply_text,
            error=error,
            latency_ms=result.latency_ms if result else None,
            usage=result.usage if result else None,
        )
        return TurnResult(record=record, reply=reply)

    async def _generate(
        self, provider: Provider, ctx: ChatTurnContext, channel_pk: int, stream: str
    ) -> tuple[GenerationResult | None, str]:
        pace = self.echo_pace_s if provider.name == "echo" else 0.0

        async def on_delta(text: str) -> None:
            await live.publish(channel_pk, {"kind": "delta", "stream_id": stream, "text": text})
            if pace:
                await asyncio.sleep(pace)

        try:
            return await provider.generate(ctx.context_items, stream=self.stream, on_delta=on_delta), ""
        except ProviderError as exc:
            return None, str(exc)

    async def _post_error_notice(self, job: PlaygroundJob, stream: str | None = None) -> None:
        """The short, localised notice the bot posts on Discord when generation fails."""
        notice = await db(store.store_bot_message)(
            job.channel,
            localized(ERROR_MESSAGES, job.server.config.preferred_locale),
            persona=None,
            bot_user=job.bot_user,
            reply_to=job.trigger_row,
            now_ms=self.clock(),
        )
        await self._publish_message(job, notice, stream)

    async def _publish_message(self, job: PlaygroundJob, row: PlaygroundMessage, stream: str | None) -> None:
        await publish_message(job.channel, row, job.bot_user, stream_id=stream)


async def publish_message(
    channel: PlaygroundChannel, row: PlaygroundMessage, bot_user: Author, *, stream_id: str | None = None
) -> None:
    [payload] = await db(_payloads_with_reply)(channel, row, bot_user)
    await live.publish(channel.pk, {"kind": "message", "message": payload, "stream_id": stream_id})


def _payloads_with_reply(channel: PlaygroundChannel, row: PlaygroundMessage, bot_user: Author) -> list[JSONDict]:
    fresh = PlaygroundMessage.objects.select_related("reply_to").get(pk=row.pk)
    return live.message_payloads(channel, [fresh], bot_user=bot_user)


# --- admission ----------------------------------------------------------------------------------


@dataclass(frozen=True)
class Admitted:
    """The sync half of admission: what the planner needs, or why the message is not a trigger."""

    skip: Skip | None
    trigger: DiscordMessage | None = None
    personas: tuple[PersonaInfo, ...] = ()
    author: AuthorState | None = None


def server_state(server: m.Server) -> ServerState:
    """The server as the bot routes it (``bot.conversation.state.load_server_state``: a main persona is created
    on first contact if it has none)."""
    return load_server_state(
        server.server_disc_id,
        name=server.name,
        is_dm=server.is_dm_channel,
        locale=server.registration_locale,
        default_persona=StageConfig.from_env().default_botname,
    )


def playground_bot(channel: PlaygroundChannel, state: ServerState) -> Author:
    return store.bot_identity(channel.server, state.main_persona)


def admit_message(
    channel: PlaygroundChannel, row: PlaygroundMessage, state: ServerState, bot_user: Author, now_ms: int
) -> Admitted:
    """``bot.discord.exts.chat.ChatCog.on_message`` for a stored playground message: screen the author,
    read who is addressed, and only then the author's privacy level and mutes/blocks."""
    trigger = PlaygroundTransport(channel, bot_user=bot_user).fetch_message(row.disc_id)
    skip = screen(trigger, bot_user.id)
    if skip is not None:
        return Admitted(skip=skip)
    replied = row.reply_to
    replied_persona_id = replied.persona_id if replied is not None else None
    signals = TriggerSignals(
        is_dm=channel.server.is_dm_channel,
        mentions_bot=mentions_user(row.content, bot_user.id),
        replied_persona_id=replied_persona_id,
    )
    responders = select_responders(
        state.personas, signals, row.content, deliberate_trigger_mode=state.config.deliberate_trigger_mode
    )
    if not responders:
        return Admitted(skip=Skip.NOT_TRIGGERED)
    author = load_author_state(state.server_id, trigger.author, now_ms)
    admission = admit(
        responders, privacy_level=author.user_row.privacy_level, blocked_persona_ids=author.muted_persona_ids
    )
    if not admission.admitted:
        return Admitted(skip=admission.skip)
    return Admitted(skip=None, trigger=trigger, personas=admission.personas, author=author)


# --- voice ----------------------------------------------------------------------------------------


def _voice_task(row: PlaygroundMessage) -> Any:
    """Queue the transcription of the message's first audio attachment (run at once when Celery is
    eager). Privacy-FULL authors' audio is never sent, as on Discord (``bot.conversation.state``)."""
    audio = next((a for a in row.attachments or [] if is_audio_attachment(store.as_attachment(a))), None)
    if audio is None:
        return None
    level = m.DiscordUser.objects.filter(user_disc_id=row.author_disc_id).values_list("privacy_level", flat=True)
    if level.first() == PrivacyLevel.FULL:
        return None
    return transcribe_voice_attachment.delay(row.disc_id, audio["id"], store.attachment_url(audio))


async def transcribe_before_turn(row: PlaygroundMessage) -> TranscriptionOutcome | None:
    """BC11-01/02: the transcript is in the cache before the turn reads the channel. With a broker
    the wait happens off the database thread."""
    task = await db(_voice_task)(row)
    if task is None:
        return None
    outcome = await sync_to_async(task.get, thread_sensitive=False)(timeout=TRANSCRIPTION_WAIT_S)
    return TranscriptionOutcome(**outcome)


# --- entry points ---------------------------------------------------------------------------------


async def post_playground_message(
    channel: PlaygroundChannel,
    author_disc_id: str,
    content: str,
    *,
    reply_to: PlaygroundMessage | None = None,
    attachments: Sequence[UploadedFile] = (),
    runner: PlaygroundRunner | None = None,
    planner: TurnPlanner[PlaygroundJob] = PLANNER,
) -> PlaygroundOutcome:
    """Store a message and run the turns it triggers; returns when this message's turns are done
    (also when they waited in the channel's queue behind another trigger)."""
    runner = runner or PlaygroundRunner()
    state = await db(server_state)(channel.server)
    bot_user = await db(playground_bot)(channel, state)
    row = await db(store.store_user_message)(
        channel, author_disc_id, content, now_ms=runner.clock(), reply_to=reply_to, uploads=attachments
    )
    await publish_message(channel, row, bot_user)
    outcome = PlaygroundOutcome(message=row)
    outcome.transcription = await transcribe_before_turn(row)
    if outcome.transcription is not None:  # the page shows the transcript under the audio
        await publish_message(channel, row, bot_user)

    admitted = await db(admit_message)(channel, row, state, bot_user, runner.clock())
    if admitted.skip is not None or admitted.trigger is None:
        outcome.skip = str(admitted.skip)
        logger.info("playground message not admitted: %s", outcome.skip)
        await live.publish(channel.pk, {"kind": "skipped", "message_id": row.disc_id, "reason": outcome.skip})
        return outcome
    assert admitted.author is not None
    locked = LockedTurn(
        incoming=ChatIncoming(message=admitted.trigger),
        channel_id=channel.disc_id,
        triggered_persona_ids=tuple(p.persona_id for p in admitted.personas if p.persona_id is not None),
    )
    job = PlaygroundJob(
        locked_turn=locked,
        runner=runner,
        channel=channel,
        trigger_row=row,
        personas=admitted.personas,
        server=state,
        author=admitted.author,
        bot_user=bot_user,
        done=asyncio.get_running_loop().create_future(),
    )
    if not await planner.submit(job):
        outcome.skip = QUEUE_FULL
        await live.publish(channel.pk, {"kind": "skipped", "message_id": row.disc_id, "reason": QUEUE_FULL})
        return outcome
    outcome.results = await job.done
    return outcome


def send_playground_message(
    channel: PlaygroundChannel,
    author_disc_id: str,
    content: str,
    *,
    reply_to: PlaygroundMessage | None = None,
    attachments: Sequence[UploadedFile] = (),
) -> list[PromptRecord]:
    """Issue 8's synchronous entry point: the prompt records of the turns this message triggered
    (empty when it triggered none)."""
    outcome: PlaygroundOutcome = async_to_sync(post_playground_message)(
        channel, author_disc_id, content, reply_to=reply_to, attachments=attachments
    )
    return outcome.records
