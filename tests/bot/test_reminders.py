"""Reminder occurrences received over the Channels layer group "bot.reminders" (in-memory layer)."""

from __future__ import annotations

import asyncio
from dataclasses import replace
from datetime import timedelta

import discord.ext.test as dpytest
import pytest
from channels.layers import get_channel_layer
from discord.ext.test import factories
from django.utils import timezone

from personas import models as m
from personas.reminders_service import REMINDERS_GROUP, DueReminder, ReminderKind
from tests.bot.fakes import run_db, setup_server

pytestmark = pytest.mark.django_db(transaction=True)


def fired_reminder(guild_id: int, channel_id: int, target: str, persona_nickname: str | None) -> DueReminder:
    server = m.Server.objects.get(server_disc_id=str(guild_id))
    persona = m.Persona.objects.get(server=server, persona_nickname=persona_nickname) if persona_nickname else None
    due_at = timezone.now() - timedelta(minutes=1)
    reminder = m.Reminder.objects.create(
        server=server,
        channel_disc_id=str(channel_id),
        user_discord_id=target,
        reminder_purpose="stretch your legs",
        reminder_time=due_at,
        persona=persona,
        status=m.Reminder.Status.FIRED,
    )
    at_ms = int(due_at.timestamp() * 1000)
    return DueReminder(
        reminder_id=reminder.reminder_id,
        kind=ReminderKind.HUMAN,
        server_disc_id=server.server_disc_id,
        channel_disc_id=str(channel_id),
        target_user_id=target,
        purpose=reminder.reminder_purpose,
        persona_id=reminder.persona_id,
        scheduled_at_ms=at_ms,
        fired_at_ms=at_ms + 60_000,
    )


async def until(condition, attempts: int = 3000) -> None:  # type: ignore[no-untyped-def]
    """Wait for the listener task to handle what the layer delivered (bounded only so a broken
    listener fails the test instead of hanging it)."""
    for _ in range(attempts):
        if await condition():
            return
        await asyncio.sleep(0.01)
    raise AssertionError("condition not reached")


async def test_a_due_reminder_is_posted_by_the_main_persona_mentioning_its_target(harness):
    await run_db(setup_server, harness.guild)
    ann = str(harness.member(0).id)
    due = await run_db(fired_reminder, harness.guild.id, harness.channel.id, ann, None)

    await get_channel_layer().group_send(REMINDERS_GROUP, due.as_message())

    async def posted() -> bool:
        return not dpytest.sent_queue.empty()

    await until(posted)
    assert dpytest.get_message().content == f"⏰ <@{ann}> Reminder: stretch your legs"
    status = await m.Reminder.objects.filter(pk=due.reminder_id).values_list("status", flat=True).aget()
    assert status == m.Reminder.Status.FIRED


async def test_an_alters_reminder_goes_through_the_webhook(harness):
    await run_db(setup_server, harness.guild)
    ann = str(harness.member(0).id)
    due = await run_db(fired_reminder, harness.guild.id, harness.channel.id, ann, "Ellen")

    await get_channel_layer().group_send(REMINDERS_GROUP, due.as_message())

    async def sent() -> bool:
        hook = harness.webhooks.hooks.get(harness.channel.id)
        return bool(hook and hook.sends)

    await until(sent)
    [send] = harness.webhooks.hooks[harness.channel.id].sends
    assert send.username == "Ellen" and f"<@{ann}>" in send.content


async def test_a_reminder_for_a_deleted_channel_is_reported_and_marked_failed(harness):
    await run_db(setup_server, harness.guild)
    due = await run_db(fired_reminder, harness.guild.id, factories.make_id(), str(harness.member(0).id), None)

    await get_channel_layer().group_send(REMINDERS_GROUP, due.as_message())

    async def failed() -> bool:
        row = await m.Reminder.objects.aget(pk=due.reminder_id)
        return row.status == m.Reminder.Status.FAILED

    await until(failed)
    row = await m.Reminder.objects.aget(pk=due.reminder_id)
    assert row.last_error.startswith("channel gone")
    assert dpytest.sent_queue.empty()


async def test_reminders_of_guilds_this_process_does_not_serve_are_left_alone(harness):
    await run_db(setup_server, harness.guild)
    due = await run_db(fired_reminder, harness.guild.id, harness.channel.id, str(harness.member(0).id), None)
    elsewhere = replace(due, server_disc_id=str(factories.make_id()))

    await harness.bot.get_cog("RemindersCog").fire(elsewhere)

    assert dpytest.sent_queue.empty()
    status = await m.Reminder.objects.filter(pk=due.reminder_id).values_list("status", flat=True).aget()
    assert status == m.Reminder.Status.FIRED
