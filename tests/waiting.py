"""Waiting for something another task or process does, with a bound: ``until`` polls a condition,
``due_now`` makes a reminder due."""

from __future__ import annotations

import asyncio
from datetime import timedelta

from django.utils import timezone

from personas import models as m


async def until(condition, attempts: int = 3000) -> None:  # type: ignore[no-untyped-def]
    """Wait for the listener task to handle what the layer delivered (bounded only so a broken
    listener fails the test instead of hanging it)."""
    for _ in range(attempts):
        if await condition():
            return
        await asyncio.sleep(0.01)
    raise AssertionError("condition not reached")


async def due_now(harness, **kwargs) -> m.Reminder:  # type: ignore[no-untyped-def]
    server = await m.Server.objects.aget(server_disc_id=str(harness.guild.id))
    return await m.Reminder.objects.acreate(
        server=server,
        channel_disc_id=str(harness.channel.id),
        user_discord_id=str(harness.member(0).id),
        reminder_purpose="stretch your legs",
        reminder_time=timezone.now() - timedelta(seconds=30),
        **kwargs,
    )
