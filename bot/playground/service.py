"""A playground message → the same path a Discord message takes (design.md "One turn, end to end").

``post_playground_message`` stores the message, sends an uploaded voice file through the
transcription task (``chatcontext.voice.tasks``) and waits for it, then runs the admission every surface
runs (``bot.conversation.admission``: mention, reply to a persona, trigger words; privacy-FULL,
muted and blocked authors cannot trigger), plans the turn on a ``TurnPlanner`` (per-channel lock,
queued turns carry ``is_from_queue``) and runs it on the shared ``TurnRunner`` through a
``PlaygroundOutlet``: ``build_turn_context`` over a ``PlaygroundTransport``, the server's provider
(the offline echo provider when none is configured) with the reply streamed to the page, the reply
stored in the channel, and a ``PromptRecord`` (source ``playground``) with its turn snapshot.

The playground runs inside a request (and tests inside ``atomic``), so every ORM call goes through
``bot.conversation.db.in_callers_transaction``, never through a helper that closes the connection.
A text that is a slash command (``bot.playground.commands``) is run, not stored.
``send_playground_message`` is the synchronous entry point with the signature of issue 8.
Logs carry counts and failure kinds only, never message text, names or ids.
"""

from __future__ import annotations

import asyncio
import logging
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from asgiref.sync import async_to_sync, sync_to_async
from celery.exceptions import TimeoutError as ResultTimeout
from django.conf import settings
from django.core.files.uploadedfile import UploadedFile

from bot.conversation.admission import Admission, TriggerSignals, admit_message, screen
from bot.conversation.db import in_callers_transaction as db
from bot.conversation.jobs import TurnJob, TurnResult
from bot.conversation.planner import Clock, TurnPlanner, wall_clock_ms
from bot.conversation.providers import build_provider
from bot.conversation.runner import ProviderFactory, TurnRunner
from bot.conversation.state import ServerState, audio_to_transcribe, load_server_state
from bot.playground import commands, live, store
from bot.playground.command_call import CommandAnswer, CommandCall, TurnSubmitter
from bot.playground.images import UploadImageFetcher
from bot.playground.models import PlaygroundChannel, PlaygroundMessage
from bot.playground.notes import NO_WORKER, PRIVACY_FULL_AUDIO, QUEUE_FULL
from bot.playground.outlet import PlaygroundOutlet
from bot.playground.transport import PlaygroundTransport
from chatcontext.core.simplify.media import is_audio_attachment
from chatcontext.core.transcripts import TranscriptCache
from chatcontext.core.types import Author, DiscordMessage, LockedTurn, MemberInfo
from chatcontext.models import PromptRecord
from chatcontext.voice.cache import shared_cache
from chatcontext.voice.tasks import TranscriptionOutcome, transcribe_voice_attachment
from personas import models as m

logger = logging.getLogger(__name__)


def mentions_user(content: str, user_id: str) -> bool:
    return re.search(rf"<@!?{re.escape(user_id)}>", content) is not None


def playground_runner(
    *,
    provider_factory: ProviderFactory = build_provider,
    transcripts: TranscriptCache = shared_cache,
    clock: Clock = wall_clock_ms,
) -> TurnRunner:
    """The runner of playground turns: the one every surface uses, on the playground's database rule."""
    return TurnRunner(
        db=db,
        provider_factory=provider_factory,
        transcripts=transcripts,
        clock=clock,
        image_fetcher=UploadImageFetcher(),
    )


PlaygroundTurn = TurnResult[PlaygroundMessage]


@dataclass
class PlaygroundOutcome:
    message: PlaygroundMessage | None  # None: the text ran a slash command, which is not stored
    skip: str | None = None  # a bot.conversation.admission.Skip value, or QUEUE_FULL
    results: list[PlaygroundTurn] = field(default_factory=list)
    transcription: TranscriptionOutcome | None = None
    command: CommandAnswer | None = None

    @property
    def records(self) -> list[PromptRecord]:
        return [r.record for r in self.results] + (self.command.records if self.command else [])


@dataclass
class PlaygroundJob:
    """A locked turn of a playground channel, the runner it runs on, and the future that resolves
    in the submitter's event loop."""

    turn: TurnJob[PlaygroundMessage]
    runner: TurnRunner
    done: asyncio.Future[list[PlaygroundTurn]]
    trigger: PlaygroundMessage | None = None  # the stored message it answers; None for a reminder turn

    @property
    def locked_turn(self) -> LockedTurn:
        return self.turn.locked_turn


def _resolve(future: asyncio.Future[list[PlaygroundTurn]], result: Any) -> None:
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
        try:
            results = await job.runner.run(job.turn)
        finally:
            # A turn that failed is over too: left pending, the next start would say "server restarted".
            if job.trigger is not None:
                await db(store.end_turn)(job.trigger)
    except BaseException as exc:
        _resolve(job.done, exc)
        raise
    _resolve(job.done, results)


# One planner per process, as the bot has one: its locks order the turns of each channel.
PLANNER: TurnPlanner[PlaygroundJob] = TurnPlanner(_run_job, wall_clock_ms)


def command_turns(runner: TurnRunner, planner: TurnPlanner[PlaygroundJob]) -> TurnSubmitter:
    """How a slash command's turn runs: on the channel's planner lock, answering no stored message."""

    async def run_turn(turn: TurnJob[PlaygroundMessage]) -> list[PlaygroundTurn]:
        job = PlaygroundJob(turn=turn, runner=runner, done=asyncio.get_running_loop().create_future())
        return await job.done if await planner.submit(job) else []

    return run_turn


# --- admission ----------------------------------------------------------------------------------


def server_state(server: m.Server) -> ServerState:
    """The server as every surface routes it (a main persona is created on first contact if it has none)."""
    return load_server_state(
        server.server_disc_id, name=server.name, is_dm=server.is_dm_channel, locale=server.registration_locale
    )


def playground_bot(channel: PlaygroundChannel, state: ServerState) -> Author:
    return store.bot_identity(channel.server, state.main_persona)


@dataclass(frozen=True)
class StoredTrigger:
    """A stored message as admission reads it: the message as Discord would give it, the signals of
    who it addresses, and its author as a member of the server."""

    message: DiscordMessage
    signals: TriggerSignals
    member: MemberInfo | None


def read_trigger(channel: PlaygroundChannel, row: PlaygroundMessage, bot_user: Author) -> StoredTrigger:
    transport = PlaygroundTransport(channel, bot_user=bot_user)
    message = transport.fetch_message(row.disc_id)
    replied = row.reply_to
    signals = TriggerSignals(
        is_dm=channel.server.is_dm_channel,
        mentions_bot=mentions_user(row.content, bot_user.id),
        replied_persona_id=replied.persona_id if replied is not None else None,
    )
    return StoredTrigger(message, signals, transport.get_cached_member(message.author.id))


async def admit_row(trigger: StoredTrigger, state: ServerState, bot_user: Author, now_ms: int) -> Admission:
    """``bot.discord.exts.chat.ChatCog.on_message`` for a stored playground message: screen the
    author, then the one admission of every surface."""
    skip = screen(trigger.message, bot_user.id)
    if skip is not None:
        return Admission(skip=skip)
    return await admit_message(trigger.message, trigger.signals, state, db=db, now_ms=now_ms)


# --- voice ----------------------------------------------------------------------------------------


def _voice_task(row: PlaygroundMessage) -> Any:
    """Queue the transcription of the message's audio (run at once when Celery is eager)."""
    attachments = [store.as_attachment(a) for a in row.attachments or []]
    audio = audio_to_transcribe(row.author_disc_id, attachments)
    return transcribe_voice_attachment.delay(row.disc_id, audio.id, audio.url) if audio is not None else None


async def transcribe_before_turn(row: PlaygroundMessage) -> TranscriptionOutcome | None:
    """BC11-01/02: the transcript is in the cache before the turn reads the channel. With a broker
    the wait happens off the database thread, and is bounded: when no worker answers in
    ``PLAYGROUND_TRANSCRIPTION_WAIT_SECONDS`` the turn goes on without the transcript and the page says
    why (the task stays queued; a worker that starts later still fills the cache for later turns)."""
    task = await db(_voice_task)(row)
    if task is None:
        return None
    try:
        outcome = await sync_to_async(task.get, thread_sensitive=False)(
            timeout=settings.PLAYGROUND_TRANSCRIPTION_WAIT_SECONDS
        )
    except ResultTimeout:
        logger.warning("playground: no transcript (%s)", NO_WORKER)
        return TranscriptionOutcome("failed", row.disc_id, failure=NO_WORKER)
    return TranscriptionOutcome(**outcome)


def untranscribed_reason(row: PlaygroundMessage, transcription: TranscriptionOutcome | None) -> str:
    """Why the message's audio has no transcript: the task's failure, or — audio that was never
    sent (``audio_to_transcribe`` withholds only a privacy-FULL author's) — the author's privacy."""
    if transcription is not None:
        return transcription.failure if transcription.status == "failed" else ""
    has_audio = any(is_audio_attachment(store.as_attachment(a)) for a in row.attachments or [])
    return PRIVACY_FULL_AUDIO if has_audio else ""


async def _note_skip(channel: PlaygroundChannel, row: PlaygroundMessage, bot_user: Author, reason: str) -> None:
    await db(store.note_message)(row, skip_reason=reason)
    await live.publish_message(channel, row, bot_user)


# --- entry points ---------------------------------------------------------------------------------


async def post_playground_message(
    channel: PlaygroundChannel,
    author_disc_id: str,
    content: str,
    *,
    reply_to: PlaygroundMessage | None = None,
    attachments: Sequence[UploadedFile] = (),
    runner: TurnRunner | None = None,
    planner: TurnPlanner[PlaygroundJob] = PLANNER,
    posted_by: int | None = None,
) -> PlaygroundOutcome:
    """Store a message and run the turns it triggers; returns when this message's turns are done
    (also when they waited in the channel's queue behind another trigger). ``posted_by``: the staff
    account posting as the member, whom the audit trail of the turn's tool writes names."""
    runner = runner or playground_runner()
    typed = commands.parse(content) if not attachments else None
    if typed is not None:
        call = CommandCall(
            channel, author_disc_id, typed.arguments, runner, posted_by, run_turn=command_turns(runner, planner)
        )
        return PlaygroundOutcome(message=None, command=await commands.run(typed, call))
    state = await db(server_state)(channel.server)
    bot_user = await db(playground_bot)(channel, state)
    row = await db(store.store_user_message)(
        channel, author_disc_id, content, now_ms=runner.clock(), reply_to=reply_to, uploads=attachments
    )
    submitted = False
    try:
        await live.publish_message(channel, row, bot_user)
        outcome = PlaygroundOutcome(message=row)
        outcome.transcription = await transcribe_before_turn(row)
        failure = untranscribed_reason(row, outcome.transcription)
        if failure:
            await db(store.note_message)(row, transcription_failure=failure)
        if outcome.transcription is not None or failure:  # the page shows the transcript, or why not, under the audio
            await live.publish_message(channel, row, bot_user)

        trigger = await db(read_trigger)(channel, row, bot_user)
        admission = await admit_row(trigger, state, bot_user, runner.clock())
        if not admission.admitted:
            outcome.skip = str(admission.skip)
            logger.info("playground message not admitted: %s", outcome.skip)
            await _note_skip(channel, row, bot_user, outcome.skip)
            return outcome
        outlet = PlaygroundOutlet(channel, row, bot_user, clock=runner.clock)
        job = PlaygroundJob(
            turn=TurnJob.answering(
                trigger.message, admission, state, outlet, triggerer=trigger.member, posted_by=posted_by
            ),
            runner=runner,
            done=asyncio.get_running_loop().create_future(),
            trigger=row,
        )
        submitted = await planner.submit(job)
        if not submitted:
            outcome.skip = QUEUE_FULL
            await _note_skip(channel, row, bot_user, QUEUE_FULL)
            return outcome
    finally:
        # Until the planner has the turn (it ends it), a failure or an early exit ends it here: a
        # message left pending would read "not answered: the server restarted" after the next start.
        if not submitted:
            await db(store.end_turn)(row)
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
