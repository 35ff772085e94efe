"""Due reminders as persona turns (issue 7; build-context.md §7.1, BC7-01/BC7-02).

A reminder occurrence runs the same turn as a message: the channel's planner lock, then
``bot.conversation.runner.TurnRunner`` (build the context, generate, deliver as the persona — the channel webhook
for alters —, write the prompt record with its snapshot). Only three things differ:

- **Trigger.** The channel's newest message, read through the channel; when the channel has no
  history the bot can read, a synthetic bot-authored message in that channel. The trigger only
  anchors the turn (history window, triggerer): nobody is replied to and nobody is registered.
- **Incoming.** ``reminder_data`` carries the purpose and the lateness. A persona self-task is a
  persona job told to execute its task now; a human reminder names its recipient
  (``reminder_recipient_id``), so the persona reminds and pings them in its own words.
- **Outlet.** The reply is posted in the channel, and a human reminder's reply always pings its
  recipient. When no reply is generated the plain reminder notice is posted instead, so an
  occurrence is never lost silently. Once Discord took the post, the occurrence is confirmed
  (``personas.reminders_service.acknowledge_delivery``: fired, or rescheduled); when Discord refuses
  it the failure goes back to ``report_delivery_failure`` (channel gone → failed, else retried). A
  process that stops in between confirms nothing, and the occurrence comes back when its lease ends.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from datetime import UTC, datetime

import discord
from channels.db import database_sync_to_async

from bot.conversation.runner import TurnJob
from bot.conversation.state import ServerState, load_server_state, read_author_state
from bot.discord.delivery import WebhookRegistry, localized, send_as_persona
from bot.discord.transport import to_author, to_discord_message
from chatcontext.config import StageConfig
from chatcontext.participants.presence import format_duration
from chatcontext.types import ChatIncoming, DiscordMessage, LockedTurn, PersonaInfo, ReminderData, ReplyNoticeState
from personas.reminders_service import DueReminder, ReminderKind, acknowledge_delivery, report_delivery_failure

logger = logging.getLogger(__name__)

DM_SERVER_NAME = "Direct messages"
MINUTE_MS = 60_000
REMINDER_TEXTS = {
    "en-US": "⏰ <@{target}> Reminder: {purpose}",
    "en-GB": "⏰ <@{target}> Reminder: {purpose}",
    "ja": "⏰ <@{target}> リマインダー: {purpose}",
}
TASK_TEXTS = {
    "en-US": "⏰ Task due: {purpose}",
    "en-GB": "⏰ Task due: {purpose}",
    "ja": "⏰ タスクの時間です: {purpose}",
}


# ---------------------------------------------------------------------------------------------
# Pure parts
# ---------------------------------------------------------------------------------------------


def reminder_lateness(scheduled_at_ms: int, now_ms: int) -> str | None:
    """BC7-01 lateness in whole minutes (``5 minutes``, ``2 hours, 5 minutes``). Under a minute is on
    time: the beat fires reminders up to one tick after their time."""
    late = now_ms - scheduled_at_ms
    if late < MINUTE_MS:
        return None
    return format_duration(late - late % MINUTE_MS)


def fallback_text(due: DueReminder, locale: str | None) -> str:
    """The plain notice posted when no reply could be generated."""
    catalog = TASK_TEXTS if due.kind == ReminderKind.SELF_TASK else REMINDER_TEXTS
    return localized(catalog, locale).format(target=due.target_user_id, purpose=due.purpose)


def ensure_ping(text: str, user_id: str) -> str:
    """A human reminder's reply pings its recipient. BC7-01 offers the model ``@{<@R>}`` and ``@{R}``
    as mention formats, but Discord pings only ``<@R>``: those become real mentions, and a reply
    that still has none gets one in front. Matrix recipients (not snowflakes) are left as written."""
    if not user_id.isdigit():
        return text
    mention = f"<@{user_id}>"
    text = text.replace(f"@{{{mention}}}", mention).replace(f"@{{{user_id}}}", mention)
    if mention in text or f"<@!{user_id}>" in text:
        return text
    return f"{mention} {text}"


def synthetic_trigger(channel_id: str, guild_id: str | None, bot_user: discord.abc.User, now_ms: int) -> DiscordMessage:
    """An empty bot-authored message in the channel at ``now_ms``: the anchor of a reminder turn in a
    channel without readable history. Its id is the snowflake of ``now_ms``, so the turn snapshot
    (whose message ids are snowflakes) stays valid."""
    at = datetime.fromtimestamp(now_ms / 1000, tz=UTC)
    return DiscordMessage(
        id=str(discord.utils.time_snowflake(at)),
        channel_id=channel_id,
        guild_id=guild_id,
        author=to_author(bot_user),
        created_timestamp=now_ms,
    )


def reminder_incoming(due: DueReminder, trigger: DiscordMessage, now_ms: int) -> ChatIncoming:
    """BC7-01: a self-task runs as a persona job; a human reminder names its recipient."""
    self_task = due.kind == ReminderKind.SELF_TASK
    return ChatIncoming(
        message=trigger,
        reminder_recipient_id=None if self_task else due.target_user_id,
        reminder_data=ReminderData(
            reminder_purpose=due.purpose,
            reminder_lateness=reminder_lateness(due.scheduled_at_ms, now_ms),
            self_reminder=self_task,
        ),
        is_persona_job=self_task,
    )


# ---------------------------------------------------------------------------------------------
# Shell
# ---------------------------------------------------------------------------------------------


async def report_failure(due: DueReminder, *, channel_gone: bool, reason: str) -> None:
    logger.warning("reminder not delivered (%s)", reason)
    await database_sync_to_async(report_delivery_failure)(
        due.reminder_id, scheduled_at_ms=due.scheduled_at_ms, channel_gone=channel_gone, reason=reason
    )


async def confirm_posted(due: DueReminder) -> None:
    """Tell the dispatcher this process posted the occurrence. Not confirmed (the database is
    unreachable): it is posted once more when its lease ends, which beats losing it."""
    try:
        await database_sync_to_async(acknowledge_delivery)(due.reminder_id, due.scheduled_at_ms)
    except Exception as exc:  # the post is out; failing the turn now would lose its prompt record
        logger.warning("reminder posted but not confirmed (%s); it will be posted again", type(exc).__name__)


@dataclass(frozen=True)
class ReminderOutlet:
    """Posts a reminder turn in its channel; refused posts are reported back to the dispatcher."""

    channel: discord.abc.Messageable
    due: DueReminder
    fallback: str

    async def deliver(
        self,
        persona: PersonaInfo,
        text: str,
        *,
        webhooks: WebhookRegistry,
        reply_notice: ReplyNoticeState | None,
        locale: str,
    ) -> None:
        if self.due.kind == ReminderKind.HUMAN:
            text = ensure_ping(text, self.due.target_user_id)
        await self._post(persona, text, webhooks)

    async def notify_failure(self, persona: PersonaInfo, *, webhooks: WebhookRegistry, locale: str) -> None:
        await self._post(persona, self.fallback, webhooks)

    async def _post(self, persona: PersonaInfo, text: str, webhooks: WebhookRegistry) -> None:
        try:
            await send_as_persona(self.channel, persona, text, webhooks=webhooks)
        except discord.HTTPException as exc:
            gone = isinstance(exc, discord.Forbidden | discord.NotFound)
            await report_failure(self.due, channel_gone=gone, reason=f"HTTP {exc.status}")
            raise
        await confirm_posted(self.due)


async def latest_message(channel: discord.abc.Messageable) -> discord.Message | None:
    """The channel's newest message; None when it has none or the bot may not read its history.
    ``discord.NotFound`` (the channel is gone) propagates."""
    if not hasattr(channel, "history"):
        return None
    try:
        async for message in channel.history(limit=1):
            return message
    except discord.Forbidden:
        return None
    return None


async def load_reminder_server(due: DueReminder, channel: discord.abc.Messageable) -> ServerState:
    guild: discord.Guild | None = getattr(channel, "guild", None)
    return await database_sync_to_async(load_server_state)(
        due.server_disc_id,
        name=guild.name if guild else DM_SERVER_NAME,
        is_dm=guild is None,
        locale=str(guild.preferred_locale) if guild else None,
        default_persona=StageConfig.from_env().default_botname,
    )


async def reminder_job(
    due: DueReminder, channel: discord.abc.Messageable, *, bot_user: discord.ClientUser, now_ms: int
) -> TurnJob | None:
    """The turn of one occurrence, spoken by its persona (the main persona when unassigned or
    deleted); None when the server has no persona at all."""
    server = await load_reminder_server(due, channel)
    persona = next((p for p in server.personas if p.persona_id == due.persona_id), server.main_persona)
    if persona is None:
        return None
    latest = await latest_message(channel)
    if latest is not None:
        trigger = to_discord_message(latest)
    else:
        guild = getattr(channel, "guild", None)
        trigger = synthetic_trigger(due.channel_disc_id, str(guild.id) if guild else None, bot_user, now_ms)
    author = await database_sync_to_async(read_author_state)(server.server_id, trigger.author.id, now_ms)
    locked = LockedTurn(
        incoming=reminder_incoming(due, trigger, now_ms),
        channel_id=due.channel_disc_id,
        triggered_persona_ids=(persona.persona_id,) if persona.persona_id is not None else (),
    )
    outlet = ReminderOutlet(channel, due, fallback_text(due, server.config.preferred_locale))
    return TurnJob(locked, outlet, (persona,), server, author, trigger=latest)
