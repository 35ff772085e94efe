"""What a reminder occurrence's turn is, on any surface (issue 7; build-context.md §7.1, BC7-01/BC7-02).

A reminder occurrence runs the same turn as a message (``bot.conversation.runner``); these are the
parts that make it a reminder turn, with no transport in them:

- **Incoming.** ``reminder_data`` carries the purpose and the lateness. A persona self-task is a
  persona job told to execute its task now; a human reminder names its recipient
  (``reminder_recipient_id``), so the persona reminds and pings them in its own words.
- **Reply.** A human reminder's reply always pings its recipient (``ensure_ping``); when no reply is
  generated the plain reminder notice (``fallback_text``) is posted instead, so an occurrence is
  never lost silently.
- **Confirmation.** The outlet that posted an occurrence confirms it (``confirm_posted``), one that
  could not reports why (``report_failure``), through the surface's database rule (``db``).

The Discord turn of an occurrence (its trigger, outlet and delivery confirmation) is
``bot.discord.reminder_turns``; the playground's is ``bot.playground.reminder_listener``.
"""

from __future__ import annotations

import logging

from bot.conversation.db import Db, closing_stale_connections
from bot.conversation.texts import localized
from chatcontext.core.participants.presence import format_duration
from chatcontext.core.types import ChatIncoming, DiscordMessage, ReminderData
from personas.reminder_firing import DueReminder, ReminderKind, acknowledge_delivery, report_delivery_failure

logger = logging.getLogger(__name__)

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


async def report_failure(
    due: DueReminder, *, channel_gone: bool, reason: str, db: Db = closing_stale_connections
) -> None:
    logger.warning("reminder not delivered (%s)", reason)
    await db(report_delivery_failure)(
        due.reminder_id, scheduled_at_ms=due.scheduled_at_ms, channel_gone=channel_gone, reason=reason
    )


async def confirm_posted(due: DueReminder, *, db: Db = closing_stale_connections) -> None:
    """Tell the dispatcher this process posted the occurrence. Not confirmed (the database is
    unreachable): it is posted once more when its lease ends, which beats losing it."""
    try:
        await db(acknowledge_delivery)(due.reminder_id, due.scheduled_at_ms)
    except Exception as exc:  # the post is out; failing the turn now would lose its prompt record
        logger.warning("reminder posted but not confirmed (%s); it will be posted again", type(exc).__name__)
