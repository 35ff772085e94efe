"""What the Discord bot process last said about itself, for the admin's *Discord bot* page.

``manage.py runbot`` writes one row per process (keyed by the shards it runs): starting, connected
(each shard's state and latency, refreshed every ``HEARTBEAT_SECONDS``), or failed with the line it
exited with; ``manage.py serve`` adds its restarts of the child. A status row is no rule-bearing
data (nothing is decided from it), so it is written here rather than through ``personas.actions``.
"""

from __future__ import annotations

import asyncio
import logging
import math
import os
from datetime import timedelta
from typing import Any

import discord
from channels.db import database_sync_to_async
from discord.ext import commands
from django.conf import settings
from django.db import models, transaction
from django.db.models import F
from django.utils import timezone

logger = logging.getLogger(__name__)

HEARTBEAT_SECONDS = 30
# A row older than this is a process that stopped reporting (killed, hung, machine down).
SILENT_AFTER = timedelta(seconds=3 * HEARTBEAT_SECONDS)


class BotStatus(models.Model):
    class State(models.TextChoices):
        STARTING = "starting", "starting"
        CONNECTED = "connected", "connected"
        DISCONNECTED = "disconnected", "reconnecting"
        FAILED = "failed", "stopped"
        RESTARTING = "restarting", "restarting"

    process = models.CharField(max_length=64, unique=True, help_text="The shards this bot process runs.")
    state = models.CharField(max_length=16, choices=State.choices)
    # shard id → {"connected": bool, "latency_ms": int | None}
    shards = models.JSONField(default=dict, blank=True)
    last_error = models.TextField(blank=True, default="")
    pid = models.PositiveIntegerField(null=True, blank=True)
    restarts = models.PositiveIntegerField(default=0, help_text="Restarts by manage.py serve since it started.")
    updated_at = models.DateTimeField()

    class Meta:
        app_label = "bot"
        db_table = "bot_status"
        verbose_name = "Discord bot"
        verbose_name_plural = "Discord bot"

    def __str__(self) -> str:
        return self.process

    @property
    def silent(self) -> bool:
        return timezone.now() - self.updated_at > SILENT_AFTER


def this_process() -> str:
    """The row's key: the shard split of this process's settings (``serve`` and its child agree)."""
    shard_ids = settings.DISCORD_SHARD_IDS
    return f"shards {','.join(map(str, shard_ids))}" if shard_ids else "all shards"


def report(state: str, **fields: Any) -> None:
    BotStatus.objects.update_or_create(
        process=this_process(), defaults={"state": state, "updated_at": timezone.now(), **fields}
    )


def report_restart(exit_status: int, delay_s: float) -> None:
    """``serve``'s note that the child exited: the child's own last error stays when it wrote one."""
    with transaction.atomic():
        row, _ = BotStatus.objects.select_for_update().get_or_create(
            process=this_process(), defaults={"state": BotStatus.State.RESTARTING, "updated_at": timezone.now()}
        )
        exited = f"exited with status {exit_status}; restarting in {delay_s:g} s"
        last_error = f"{row.last_error} ({exited})" if row.state == BotStatus.State.FAILED else exited
        BotStatus.objects.filter(pk=row.pk).update(
            state=BotStatus.State.RESTARTING,
            last_error=last_error,
            restarts=F("restarts") + 1,
            updated_at=timezone.now(),
        )


def shard_states(bot: discord.AutoShardedClient) -> dict[str, dict[str, Any]]:
    return {
        str(shard_id): {
            "connected": not shard.is_closed(),
            # NaN before the first heartbeat, infinity once the connection is gone.
            "latency_ms": round(shard.latency * 1000) if math.isfinite(shard.latency) else None,
        }
        for shard_id, shard in bot.shards.items()
    }


class StatusReporter:
    """Keeps this process's row current from the bot's shard events and a heartbeat."""

    def __init__(self, bot: commands.AutoShardedBot) -> None:
        self.bot = bot
        self._heartbeat: asyncio.Task[None] | None = None
        for event in ("on_shard_ready", "on_shard_resumed", "on_shard_disconnect"):
            bot.add_listener(self.changed, event)

    async def changed(self, shard_id: int | None = None) -> None:
        """Any error is logged, never raised: the bot keeps serving when its status cannot be told."""
        try:
            await self._report()
        except Exception as exc:
            logger.warning("bot status not written (%s)", type(exc).__name__)
        if self._heartbeat is None:
            self._heartbeat = asyncio.create_task(self._beat())

    async def _report(self) -> None:
        shards = shard_states(self.bot)
        connected = bool(shards) and all(s["connected"] for s in shards.values())
        state = BotStatus.State.CONNECTED if connected else BotStatus.State.DISCONNECTED
        fields: dict[str, Any] = {"shards": shards, "pid": os.getpid()}
        if connected:
            fields["last_error"] = ""
        await database_sync_to_async(report)(state, **fields)

    async def _beat(self) -> None:
        while not self.bot.is_closed():
            await asyncio.sleep(HEARTBEAT_SECONDS)
            await self.changed()
