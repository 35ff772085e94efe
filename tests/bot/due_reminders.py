"""Firing a due reminder on dpytest and reading the one record its turn wrote."""

from __future__ import annotations

from datetime import timedelta

from channels.layers import get_channel_layer
from django.utils import timezone

from chatcontext.models import PromptRecord
from personas import models as m
from personas.reminder_firing import (
    CLAIM_LEASE,
    REMINDERS_GROUP,
    DueReminder,
    ReminderKind,
)
from tests.bot.fakes import run_db
from tests.waiting import until


async def fire(harness, **kwargs) -> DueReminder:  # type: ignore[no-untyped-def]
    """Create the occurrence and hand it to the bot over the layer, as the Celery dispatcher does."""
    kwargs.setdefault("channel_id", harness.channel.id)
    due = await run_db(create_fired, harness.guild.id, kwargs.pop("channel_id"), kwargs.pop("target"), **kwargs)
    await get_channel_layer().group_send(REMINDERS_GROUP, due.as_message())
    return due


async def one_record() -> PromptRecord:
    async def written() -> bool:
        return await PromptRecord.objects.aexists()

    await until(written)
    return await PromptRecord.objects.aget()


def create_fired(
    guild_id: int,
    channel_id: int,
    target: str,
    *,
    persona_nickname: str | None = None,
    kind: ReminderKind = ReminderKind.HUMAN,
    purpose: str = "stretch your legs",
    late: timedelta = timedelta(minutes=1),
) -> DueReminder:
    """A reminder row as the dispatcher leaves it after claiming it, and the occurrence it sends."""
    server = m.Server.objects.get(server_disc_id=str(guild_id))
    persona = m.Persona.objects.get(server=server, persona_nickname=persona_nickname) if persona_nickname else None
    due_at = timezone.now() - late
    reminder = m.Reminder.objects.create(
        server=server,
        channel_disc_id=str(channel_id),
        user_discord_id=target,
        reminder_purpose=purpose,
        reminder_time=due_at,
        persona=persona,
        self_reminder=kind == ReminderKind.SELF_TASK,
        status=m.Reminder.Status.CLAIMED,
        next_attempt_at=timezone.now() + CLAIM_LEASE,
    )
    at_ms = int(due_at.timestamp() * 1000)
    return DueReminder(
        reminder_id=reminder.reminder_id,
        kind=kind,
        server_disc_id=server.server_disc_id,
        channel_disc_id=str(channel_id),
        target_user_id=target,
        purpose=purpose,
        persona_id=reminder.persona_id,
        scheduled_at_ms=at_ms,
        fired_at_ms=at_ms + int(late.total_seconds() * 1000),
    )
