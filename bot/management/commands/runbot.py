"""``manage.py runbot``: connect the Discord bot (one process; run several to split the shards)."""

from __future__ import annotations

import contextlib
import gc
import logging
import os
import signal
import threading
from collections.abc import Callable
from typing import Any

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.db import DatabaseError

from bot.liveness import serve_liveness

logger = logging.getLogger("bot.runbot")


def health_check(port: int, gateway: Callable[[], str]) -> None:
    """``serve_liveness``, or one line and exit 2 when the port cannot be had (taken, out of range)."""
    try:
        serve_liveness(port, gateway)
    except (OSError, OverflowError) as exc:
        reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
        raise CommandError(
            f"--health-port {port}: cannot listen on 127.0.0.1:{port} ({reason}).", returncode=2
        ) from None


class Command(BaseCommand):
    help = (
        "Run the Discord bot. Needs DISCORD_TOKEN. To split shards across processes, give every process the "
        "same DISCORD_SHARD_COUNT and its own DISCORD_SHARD_IDS (e.g. 0,1 and 2,3); without them Discord's "
        "recommended shard count is used in this one process. DISCORD_PRESENCE_INTENT=true requests the "
        "privileged presences intent. The LLM provider comes from each server's settings, falling back to "
        "LLM_PROVIDER / LLM_BASE_URL / LLM_API_KEY / LLM_MODEL (the offline echo provider when none is set)."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument(
            "--no-sync",
            action="store_true",
            help="Do not register the slash commands with Discord at start-up (they are synced by default).",
        )
        parser.add_argument(
            "--offline",
            action="store_true",
            help="Without DISCORD_TOKEN, stay up with no Discord connection (and report it) instead of refusing to "
            "start: a deployment's bot process before the bot has its token.",
        )
        parser.add_argument(
            "--health-port",
            type=int,
            default=0,
            help="Answer GET /healthz on 127.0.0.1:PORT with the gateway's state, for a container health check "
            "(default 0: no health port).",
        )

    def handle(self, *args: Any, **options: Any) -> None:
        from bot.conversation.providers.summary import platform_model_summary

        token = settings.DISCORD_TOKEN
        health_port = options["health_port"]
        if not token and options["offline"]:
            self.stay_offline(health_port)
            return
        if not token:
            raise CommandError(
                "DISCORD_TOKEN is not set: create a bot at https://discord.com/developers and export it.",
                returncode=2,
            )
        if settings.DISCORD_SHARD_IDS and not settings.DISCORD_SHARD_COUNT:
            raise CommandError(
                "DISCORD_SHARD_IDS needs DISCORD_SHARD_COUNT (the total number of shards).", returncode=2
            )

        from bot.discord.client import create_bot, startup_failure
        from bot.discord.status import BotStatus, StatusReporter, report

        # Without Redis there is no beat: the bot fires its channels' reminders itself.
        bot = create_bot(sync_commands=not options["no_sync"], embedded_reminders=not settings.REDIS_URL)
        logger.info("Language model: %s", platform_model_summary())
        if health_port:
            health_check(health_port, lambda: "connected" if bot.is_ready() else "connecting")
        StatusReporter(bot)
        # The admin's status row is best effort: the bot starts (and says why it cannot) without it.
        with contextlib.suppress(DatabaseError):
            report(BotStatus.State.STARTING, pid=os.getpid(), shards={})
        # What is loaded by now (Django, the apps, discord.py, the cogs) lives as long as the process.
        # Frozen out of the collector's reach, a full collection walks only what turns allocated since:
        # ~6 ms instead of ~65 ms, once every ten turns or so (bench/run_all.py, docs/scaling.md).
        gc.freeze()
        try:
            # discord.py's own log handler is skipped: Django's LOGGING already configures the root logger.
            bot.run(token, log_handler=None)
        except Exception as exc:
            line = startup_failure(exc, presences=settings.DISCORD_PRESENCE_INTENT)
            with contextlib.suppress(DatabaseError):
                report(BotStatus.State.FAILED, last_error=line or f"stopped by {type(exc).__name__}")
            if line is None:
                raise
            raise CommandError(line, returncode=2) from None

    def stay_offline(self, health_port: int) -> None:
        """Up until SIGTERM or SIGINT, with nothing to do: no gateway, so no turns and no deliveries."""
        stopped = threading.Event()
        for signum in (signal.SIGTERM, signal.SIGINT):
            signal.signal(signum, lambda *_: stopped.set())
        if health_port:
            health_check(health_port, lambda: "offline")
        logger.info("DISCORD_TOKEN is not set: the bot is offline (--offline), connected to nothing, until stopped")
        stopped.wait()
        logger.info("offline bot stopped")
