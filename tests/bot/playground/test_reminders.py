"""Reminders in the embedded default (issue 15 item 7): without Redis the web process fires the
playground channels' reminders itself (``bot.playground.reminder_listener``), the bot process the others,
with the claim, accept and acknowledge of the Celery path. Time is moved by the scheduler's clock,
never slept through."""

from __future__ import annotations

import asyncio
import json
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from asgiref.sync import sync_to_async
from channels.layers import get_channel_layer
from django.db.models import Q
from django.urls import reverse
from django.utils import timezone

from bot.conversation.reminder_scheduler import ReminderScheduler
from bot.discord.exts.reminders import discord_reminders
from bot.playground import live
from bot.playground.models import PlaygroundMessage
from bot.playground.reminder_listener import PlaygroundReminders
from bot.playground.reminder_scope import is_playground_channel, playground_reminders
from bot.playground.service import post_playground_message
from botplatform.management.commands.serve import Command as ServeCommand
from personas import models as m
from personas.reminder_firing import DueReminder, fire_due_reminders
from tests.bot.fake_llm import tool_round
from tests.bot.playground.conftest import MINA, Demo
from tests.bot.playground.turns import record_panel, use_llm
from tests.waiting import until

pytestmark = pytest.mark.django_db(transaction=True)


class Clock:
    def __init__(self) -> None:
        self.at = timezone.now()

    def __call__(self) -> datetime:
        return self.at


async def page_events(channel_pk: int) -> tuple[Any, str]:
    """A page's subscription to the channel's live events."""
    layer = get_channel_layer()
    name = await layer.new_channel()
    await layer.group_add(live.channel_group(channel_pk), name)
    return layer, name


async def next_message_event(layer: Any, name: str) -> dict[str, Any]:
    while True:
        event = (await asyncio.wait_for(layer.receive(name), timeout=10))["event"]
        if event["kind"] == "message":
            return event["message"]


async def test_remind_me_in_2_minutes_comes_back_in_the_playground_once(tdemo, llm_server):
    await asyncio.to_thread(use_llm, tdemo, llm_server)
    when = (datetime.now(UTC) + timedelta(minutes=2)).replace(microsecond=0).isoformat()
    llm_server.script = [
        tool_round(("set_reminder", json.dumps({"user": "mina", "purpose": "stretch", "when": when}))),
        "I'll remind you in two minutes.",
    ]
    outcome = await post_playground_message(tdemo.channel, MINA, "tomori remind me in 2 minutes to stretch")
    reminder = await m.Reminder.objects.aget(channel_disc_id=tdemo.channel.disc_id)
    assert reminder.channel_disc_id == tdemo.channel.disc_id and reminder.user_discord_id == MINA
    panel = await sync_to_async(record_panel)(outcome.records[0])  # the page's prompt panel shows the call
    reminder_url = reverse("admin:personas_reminder_change", args=[reminder.pk])
    assert "<code>set_reminder</code>" in panel and f'<a href="{reminder_url}">reminder {reminder.pk}</a>' in panel

    clock = Clock()
    reminders = PlaygroundReminders(embedded=False, scheduler=ReminderScheduler(playground_reminders, now=clock))
    reminders.start()
    layer, page = await page_events(tdemo.channel.pk)
    try:
        assert (await reminders.scheduler.tick()).dispatched == 0  # not due yet
        llm_server.script = ["Time to stretch!"]
        clock.at = reminder.reminder_time + timedelta(seconds=3)  # the next tick after it is due
        assert (await reminders.scheduler.tick()).dispatched == 1

        async def fired() -> bool:
            return (await m.Reminder.objects.aget(pk=reminder.pk)).status == m.Reminder.Status.FIRED

        await until(fired)
        shown = await next_message_event(layer, page)
        assert shown["content"] == f"<@{MINA}> Time to stretch!" and shown["reply_to"] is None
        clock.at += timedelta(minutes=10)
        assert (await reminders.scheduler.tick()).dispatched == 0  # fired once
    finally:
        await reminders.stop()
        await layer.group_discard(live.channel_group(tdemo.channel.pk), page)
    stored = [r async for r in PlaygroundMessage.objects.filter(content__contains="Time to stretch")]
    assert [r.persona_id for r in stored] == [tdemo.tomori.pk]
    turn = llm_server.requests[-1]
    assert "stretch" in json.dumps(turn["messages"])  # the reminder's purpose reached the prompt


def create_reminder(demo: Demo, channel_disc_id: str) -> m.Reminder:
    return m.Reminder.objects.create(
        server=demo.server,
        channel_disc_id=channel_disc_id,
        user_discord_id=MINA,
        reminder_purpose="stretch",
        reminder_time=timezone.now() - timedelta(seconds=5),
    )


class Recording:
    def __init__(self) -> None:
        self.handed: list[DueReminder] = []

    def dispatch(self, reminder: DueReminder) -> None:
        self.handed.append(reminder)


def test_the_web_and_bot_schedulers_claim_complementary_reminders(tdemo):
    """The web process claims the playground channels' reminders, the bot process every other one:
    neither claims the other's, so two schedulers never hand the same occurrence over."""
    in_playground = create_reminder(tdemo, tdemo.channel.disc_id)
    on_discord = create_reminder(tdemo, "987654321098765432")
    web, bot = Recording(), Recording()

    fire_due_reminders(web, scope=playground_reminders())
    fire_due_reminders(bot, scope=discord_reminders())  # the bot's scope: every channel but the playground's
    fire_due_reminders(bot, scope=discord_reminders())

    web_ids, bot_ids = [d.reminder_id for d in web.handed], [d.reminder_id for d in bot.handed]
    assert web_ids == [in_playground.pk]  # the demo's own reminders are on Discord channels
    assert on_discord.pk in bot_ids and in_playground.pk not in bot_ids
    assert len(bot_ids) == len(set(bot_ids))
    assert is_playground_channel(tdemo.channel.disc_id) and not is_playground_channel(on_discord.channel_disc_id)


async def test_the_scheduler_ticks_while_started_and_stops(tdemo):
    ticked = asyncio.Event()
    scheduler = ReminderScheduler(lambda: Q(pk__in=[]), interval_s=0)

    async def tick() -> Any:
        ticked.set()

    scheduler.tick = tick  # type: ignore[method-assign]
    assert not scheduler.running
    scheduler.start()
    await asyncio.wait_for(ticked.wait(), timeout=10)
    assert scheduler.running
    await scheduler.stop()
    assert not scheduler.running
    ticked.clear()
    await asyncio.sleep(0)
    assert not ticked.is_set()


@pytest.mark.parametrize("embedded", [True, False])
async def test_the_playground_listener_always_runs_the_scheduler_only_when_embedded(tdemo, embedded):
    reminders = PlaygroundReminders(embedded=embedded, scheduler=ReminderScheduler(playground_reminders, interval_s=60))
    reminders.start()
    try:
        assert reminders.scheduler.running is embedded
        assert reminders._listener is not None and not reminders._listener.done()
    finally:
        await reminders.stop()
    assert not reminders.scheduler.running and reminders._listener is None


@pytest.mark.parametrize(("redis_url", "embedded"), [("", True), ("redis://127.0.0.1:6379/9", False)])
def test_serve_fires_playground_reminders_itself_only_without_redis(settings, redis_url, embedded):
    settings.REDIS_URL = redis_url
    assert ServeCommand().playground_reminders().embedded is embedded
