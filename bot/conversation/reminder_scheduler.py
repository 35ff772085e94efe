"""Reminders without Redis: each process fires its own channels' reminders (issue 15 item 7).

With Redis, the Celery beat task claims every due reminder and sends it over the Channels layer
group ``bot.reminders``; every process that posts reminders listens there (``receive_occurrences``)
and takes only the occurrences of its own channels. Without Redis there is no beat and the layer
is in memory, per process, so each process runs a ``ReminderScheduler``: every few seconds it
claims the due reminders of the channels it posts in (``scope``) and sends them over its own
layer to its own listener. The claim, accept and acknowledge steps are those of the beat
(``personas.reminder_firing``), so an occurrence is still posted once.

Which process claims what: the web process (``manage.py serve``) the playground channels'
reminders (``bot.playground.reminder_scope``), the bot process (``manage.py runbot``) every other
one (``bot.discord.exts.reminders.discord_reminders``). The scopes are complements, so two
schedulers never claim the same row (and the claim itself is exclusive anyway).

Nothing starts a scheduler on import or in tests: ``serve`` and ``runbot`` start one only when
``REDIS_URL`` is unset.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Awaitable, Callable
from dataclasses import fields
from datetime import datetime
from typing import Any

from channels.db import database_sync_to_async
from channels.layers import get_channel_layer
from django.db.models import Q
from django.utils import timezone

from personas.reminder_firing import (
    REMINDER_MESSAGE_TYPE,
    REMINDERS_GROUP,
    ChannelLayerDispatcher,
    DueReminder,
    FireReport,
    ReminderDispatcher,
    ReminderKind,
    fire_due_reminders,
)

logger = logging.getLogger(__name__)

TICK_SECONDS = 5.0
_DUE_FIELDS = {f.name for f in fields(DueReminder)}


def due_reminder(message: dict[str, Any]) -> DueReminder:
    values = {k: v for k, v in message.items() if k in _DUE_FIELDS}
    return DueReminder(**{**values, "kind": ReminderKind(values["kind"])})


async def receive_occurrences(
    handle: Callable[[DueReminder], Awaitable[None]], joined: asyncio.Event | None = None
) -> None:
    """Join ``bot.reminders`` on the process's layer and hand every occurrence to ``handle``, one at
    a time, until cancelled. ``handle`` takes (accepts) only the occurrences of its own channels.
    ``joined`` is set once the group has this listener: an occurrence sent earlier reaches nobody."""
    layer = get_channel_layer()
    if layer is None:
        logger.info("no channel layer configured: reminders are not received")
        return
    channel_name = await layer.new_channel()
    await layer.group_add(REMINDERS_GROUP, channel_name)
    if joined is not None:
        joined.set()
    try:
        while True:
            message = await layer.receive(channel_name)
            if message.get("type") != REMINDER_MESSAGE_TYPE:
                continue
            try:
                await handle(due_reminder(message))
            except Exception:
                logger.exception("reminder occurrence not handled")
    finally:
        await layer.group_discard(REMINDERS_GROUP, channel_name)


class ReminderScheduler:
    """The beat of one process: ``tick`` every ``interval_s`` seconds while started.

    ``scope`` is called at each tick (a Q on ``Reminder``; the rows this process posts); ``now`` is
    the clock the claim reads, so a test moves time instead of sleeping.
    """

    def __init__(
        self,
        scope: Callable[[], Q],
        *,
        interval_s: float = TICK_SECONDS,
        now: Callable[[], datetime] = timezone.now,
        dispatcher: ReminderDispatcher | None = None,
    ) -> None:
        self.scope = scope
        self.interval_s = interval_s
        self.now = now
        self.dispatcher = dispatcher or ChannelLayerDispatcher()
        self._task: asyncio.Task[None] | None = None

    @property
    def running(self) -> bool:
        return self._task is not None and not self._task.done()

    async def tick(self) -> FireReport:
        # Closes stale connections around the tick: the scheduler runs for as long as its process.
        return await database_sync_to_async(self._fire)()

    def _fire(self) -> FireReport:
        return fire_due_reminders(self.dispatcher, now=self.now(), scope=self.scope())

    def start(self) -> None:
        """Start ticking in the running event loop (idempotent)."""
        if not self.running:
            self._task = asyncio.get_running_loop().create_task(self._loop(), name="reminder-scheduler")
            logger.info("in-process reminder scheduler started (every %ss)", self.interval_s)

    async def stop(self) -> None:
        if self._task is None:
            return
        self._task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await self._task
        self._task = None

    async def _loop(self) -> None:
        while True:
            try:
                await self.tick()
            except Exception as exc:  # a database hiccup skips one tick; the next one claims what is due
                logger.warning("reminder tick failed (%s)", type(exc).__name__)
            await asyncio.sleep(self.interval_s)
