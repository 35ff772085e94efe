"""Reminders of playground channels, fired by the web process (issue 15 item 7).

A reminder set in a playground channel (``tomori remind me in 2 minutes to stretch``) belongs to
the web process, which holds the playground's pages and turn planner: ``start_reminders`` (called
by ``manage.py serve``) listens on ``bot.reminders`` and, without Redis, also runs the process's
scheduler over these channels' reminders (``bot.conversation.reminder_scheduler``). The bot
process leaves these channels alone.

An occurrence runs the persona turn of every surface (``bot.conversation.reminder_turn_rules``) on the
playground's planner: anchored on the channel's newest message, posted in the channel as a
message of its own (not a reply), published to the page like any reply, then confirmed
(``acknowledge_delivery``).
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field

from bot.conversation.db import in_callers_transaction as db
from bot.conversation.jobs import TurnJob
from bot.conversation.reminder_scheduler import ReminderScheduler, receive_occurrences
from bot.conversation.reminder_turn_rules import (
    confirm_posted,
    ensure_ping,
    fallback_text,
    reminder_incoming,
    report_failure,
)
from bot.conversation.runner import TurnRunner
from bot.conversation.state import read_author_state
from bot.playground import store
from bot.playground.models import PlaygroundChannel, PlaygroundMessage, allocate_snowflakes
from bot.playground.outlet import PlaygroundOutlet
from bot.playground.reminder_scope import playground_reminders
from bot.playground.service import PLANNER, PlaygroundJob, PlaygroundTurn, playground_runner, server_state
from bot.playground.transport import PlaygroundTransport
from chatcontext.core.types import Author, DiscordMessage, LockedTurn, PersonaInfo, ReplyNoticeState
from personas.reminder_firing import DueReminder, ReminderKind, accept_delivery


@dataclass
class PlaygroundReminderOutlet(PlaygroundOutlet):
    """Posts an occurrence in its channel (``trigger_row`` None: it answers no message) and
    confirms it; a post that could not be stored is reported back and retried."""

    due: DueReminder = field(kw_only=True)
    fallback: str = field(kw_only=True)

    def _stream_anchor(self) -> str:
        return f"reminder-{self.due.reminder_id}"

    async def deliver(
        self, persona: PersonaInfo, text: str, *, reply_notice: ReplyNoticeState | None, locale: str
    ) -> PlaygroundMessage:
        if self.due.kind == ReminderKind.HUMAN:
            text = ensure_ping(text, self.due.target_user_id)
        return await super().deliver(persona, text, reply_notice=reply_notice, locale=locale)

    async def notify_failure(self, persona: PersonaInfo, *, locale: str) -> None:
        streamed = persona.persona_id in self._streaming
        await self._post(self.fallback, persona=persona, stream_of=persona if streamed else None)

    async def _post(
        self, text: str, *, persona: PersonaInfo | None, stream_of: PersonaInfo | None
    ) -> PlaygroundMessage:
        try:
            row = await super()._post(text, persona=persona, stream_of=stream_of)
        except Exception as exc:
            await report_failure(self.due, channel_gone=False, reason=type(exc).__name__, db=db)
            raise
        await confirm_posted(self.due, db=db)
        return row


def anchor(channel: PlaygroundChannel, bot_user: Author, now_ms: int) -> DiscordMessage:
    """The channel's newest message as the pipeline reads it; in an empty channel a bot-authored
    message of ``now_ms`` that is not stored (as ``bot.discord.reminder_turns.synthetic_trigger``)."""
    transport = PlaygroundTransport(channel, bot_user=bot_user)
    newest = transport.fetch_history(1)
    if newest:
        return newest[0]
    [message_id] = allocate_snowflakes(1, now_ms)
    return DiscordMessage(
        id=message_id,
        channel_id=channel.disc_id,
        guild_id=None if channel.server.is_dm_channel else channel.server.server_disc_id,
        author=bot_user,
        created_timestamp=now_ms,
    )


def reminder_job(due: DueReminder, channel: PlaygroundChannel, runner: TurnRunner) -> TurnJob[PlaygroundMessage] | None:
    """The turn of one occurrence, spoken by its persona (the main persona when unassigned or
    deleted); None when the server has no persona at all."""
    state = server_state(channel.server)
    persona = next((p for p in state.personas if p.persona_id == due.persona_id), state.main_persona)
    if persona is None:
        return None
    now_ms = runner.clock()
    bot_user = store.bot_identity(channel.server, state.main_persona)
    trigger = anchor(channel, bot_user, now_ms)
    locked = LockedTurn(
        incoming=reminder_incoming(due, trigger, now_ms),
        channel_id=due.channel_disc_id,
        triggered_persona_ids=(persona.persona_id,) if persona.persona_id is not None else (),
    )
    fallback = fallback_text(due, state.config.preferred_locale)
    outlet = PlaygroundReminderOutlet(channel, None, bot_user, runner.clock, due=due, fallback=fallback)
    author = read_author_state(state.server_id, trigger.author.id, now_ms)
    triggerer = PlaygroundTransport(channel, bot_user=bot_user).get_cached_member(trigger.author.id)
    return TurnJob(locked, outlet, (persona,), state, author, triggerer=triggerer)


def _channel(channel_disc_id: str) -> PlaygroundChannel | None:
    return PlaygroundChannel.objects.select_related("server").filter(disc_id=channel_disc_id).first()


async def fire_playground_reminder(due: DueReminder, *, runner: TurnRunner | None = None) -> list[PlaygroundTurn]:
    """Take and post one occurrence when its channel is a playground channel; returns the turn's
    results (none when it is not this process's, or was cancelled or taken already)."""
    channel = await db(_channel)(due.channel_disc_id)
    if channel is None:
        return []
    if not await db(accept_delivery)(due.reminder_id, due.scheduled_at_ms):
        return []
    runner = runner or playground_runner()
    turn = await db(reminder_job)(due, channel, runner)
    if turn is None:
        await report_failure(due, channel_gone=False, reason="no persona", db=db)
        return []
    job = PlaygroundJob(turn=turn, runner=runner, done=asyncio.get_running_loop().create_future())
    if not await PLANNER.submit(job):
        await report_failure(due, channel_gone=False, reason="channel queue full", db=db)
        return []
    return await job.done


@dataclass
class PlaygroundReminders:
    """What the web process runs for the playground's reminders: the listener, and without Redis
    the scheduler (``embedded``)."""

    embedded: bool
    scheduler: ReminderScheduler = field(default_factory=lambda: ReminderScheduler(playground_reminders))
    runner: TurnRunner | None = None
    _listener: asyncio.Task[None] | None = field(default=None, init=False, repr=False)

    def start(self) -> None:
        """In the running event loop: listen, and tick when embedded."""

        async def handle(due: DueReminder) -> None:
            await fire_playground_reminder(due, runner=self.runner)

        self._listener = asyncio.get_running_loop().create_task(receive_occurrences(handle))
        if self.embedded:
            self.scheduler.start()

    async def stop(self) -> None:
        await self.scheduler.stop()
        if self._listener is not None:
            self._listener.cancel()
            await asyncio.gather(self._listener, return_exceptions=True)
            self._listener = None
