"""``manage.py serve``: the one process ``make run`` starts.

Runs the ASGI application (HTTP and websockets) under daphne, serves the admin's static files
itself when DEBUG is on (no whitenoise, no collectstatic needed for a local start), and starts the
Discord bot (``manage.py runbot``) as a child process when DISCORD_TOKEN is set, restarted with
capped exponential backoff when it exits. It also posts the
playground channels' reminders (``bot.playground.reminder_listener``), and without Redis fires them itself
every few seconds (the bot child fires the others). At start it notes the playground messages whose
turn was cut off by a stopped process (``bot.playground.store.note_interrupted_turns``).
"""

from __future__ import annotations

import logging
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from typing import TYPE_CHECKING, Any

from django.conf import settings
from django.core.management import get_commands
from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.db import DatabaseError, close_old_connections

from botplatform.logging_filters import mask_ids

if TYPE_CHECKING:
    from bot.playground.reminder_listener import PlaygroundReminders

logger = logging.getLogger("botplatform.serve")

CHILD_STOP_SECONDS = 10
RESTART_CAP_SECONDS = 300.0
STABLE_SECONDS = 600.0
STATIC_PATH = "/" + settings.STATIC_URL.lstrip("/")


def access_log(protocol: Any, action: str, details: dict[str, Any]) -> None:
    """One line per request without ids or credentials (``mask_ids``): query strings are dropped.
    Static files served fine are DEBUG: every page loads a dozen, and they buried the requests people make."""
    path = mask_ids(str(details.get("path", "")))
    if action == "complete":
        status = details.get("status", "-")
        quiet = path.startswith(STATIC_PATH) and isinstance(status, int) and status < 400
        logger.log(logging.DEBUG if quiet else logging.INFO, "%s %s %s", details.get("method", "-"), path, status)
    elif action in {"connected", "disconnected", "rejected"}:
        logger.info("websocket %s %s", action, path)


def restart_delays(first_s: float = 1.0, cap_s: float = RESTART_CAP_SECONDS) -> Iterator[float]:
    """Seconds to wait before each restart of the bot: doubling from ``first_s`` up to ``cap_s``."""
    delay = first_s
    while True:
        yield delay
        delay = min(delay * 2, cap_s)


def note_restart(code: int, delay: float) -> None:
    from bot.discord.status import report_restart

    try:
        report_restart(code, delay)
    except DatabaseError:
        logger.warning("bot status not written (database error)")
    finally:
        close_old_connections()  # this thread's connection, idle until the next restart


class BotProcess:
    """``manage.py runbot`` as a child, restarted with capped exponential backoff when it exits
    unexpectedly (Discord unreachable, the intents not enabled yet: things an operator fixes without
    restarting the platform). A child that ran for ``STABLE_SECONDS`` starts the backoff afresh."""

    def __init__(
        self,
        command: Sequence[str] | None = None,
        delays: Callable[[], Iterator[float]] = restart_delays,
        on_restart: Callable[[int, float], None] | None = None,
    ) -> None:
        """``on_restart(exit status, delay)``: default, the admin's bot status row notes it."""
        self.command = list(command or [sys.executable, str(settings.BASE_DIR / "manage.py"), "runbot"])
        self.delays = delays
        self.on_restart = on_restart or note_restart
        self.proc: subprocess.Popen[bytes] | None = None
        self._stopping = threading.Event()
        # Held around "not stopping? then start a child" and around stop()'s look at the child, so
        # a stop either comes first (no child starts) or finds the child to end; none outlives serve.
        self._lock = threading.Lock()
        self._supervisor: threading.Thread | None = None

    def start(self) -> None:
        self._supervisor = threading.Thread(target=self._supervise, name="runbot-supervisor", daemon=True)
        self._supervisor.start()

    def _launch(self) -> subprocess.Popen[bytes] | None:
        """A new child, or None once serve is stopping."""
        with self._lock:
            if self._stopping.is_set():
                return None
            self.proc = subprocess.Popen(self.command)
            return self.proc

    def _supervise(self) -> None:
        delays = self.delays()
        while True:
            started = time.monotonic()
            proc = self._launch()
            if proc is None:
                return
            logger.info("Discord bot started (manage.py runbot, pid %s)", proc.pid)
            code = proc.wait()
            if self._stopping.is_set():
                return
            if time.monotonic() - started >= STABLE_SECONDS:
                delays = self.delays()
            delay = next(delays)
            logger.error("Discord bot exited with status %s; restarting it in %g s", code, delay)
            self.on_restart(code, delay)
            if self._stopping.wait(delay):
                return

    def stop(self) -> None:
        with self._lock:
            self._stopping.set()
            proc = self.proc
        if proc is not None and proc.poll() is None:
            proc.terminate()
            try:
                proc.wait(timeout=CHILD_STOP_SECONDS)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
        if self._supervisor is not None:
            self._supervisor.join(timeout=CHILD_STOP_SECONDS)


class Command(BaseCommand):
    help = (
        "Serve the platform (admin, API, playground, websockets) with daphne on HOST:PORT. Static files "
        "are served by the process when DEBUG is on (or with --serve-static). When DISCORD_TOKEN is set, "
        "the Discord bot (manage.py runbot) runs as a child process and stops with the server."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--host", default="127.0.0.1", help="Interface to bind (default 127.0.0.1).")
        parser.add_argument("--port", type=int, default=8000, help="TCP port (default 8000).")
        parser.add_argument(
            "--serve-static",
            action="store_true",
            help="Serve /static/ from the apps even when DEBUG is off (normally a reverse proxy does).",
        )
        parser.add_argument("--no-bot", action="store_true", help="Do not start the Discord bot.")

    def handle(self, *args: Any, **options: Any) -> None:
        # Imported here: daphne installs Twisted's asyncio reactor on import, which only this command needs.
        from daphne.endpoints import build_endpoint_description_strings
        from daphne.server import Server
        from twisted.internet import reactor

        from bot.conversation.providers.summary import platform_model_summary
        from botplatform.asgi import application
        from botplatform.static_files import StaticFilesHandler

        self.check_migrations()
        self.note_interrupted_turns()
        host, port = options["host"], options["port"]
        app: Any = application
        if settings.DEBUG or options["serve_static"]:
            app = StaticFilesHandler(application)
        base = f"http://{'[' + host + ']' if ':' in host else host}:{port}"
        logger.info("Tomori Platform on %s/admin/ (API docs: %s/api/docs)", base, base)
        logger.info("Language model: %s", platform_model_summary())
        self.explain_background_work()

        # In the reactor's asyncio loop, where the playground's pages and turns live.
        reminders = self.playground_reminders()
        # Twisted declares its zope interface methods without ``self`` and types them for the mypy-zope
        # plugin; plain mypy reads ``delay`` as ``self`` and every argument one place off.
        reactor.callLater(0, reminders.start)  # type: ignore[arg-type]

        bot = BotProcess()
        if options["no_bot"]:
            logger.info("Discord bot not started (--no-bot)")
        elif not settings.DISCORD_TOKEN:
            logger.info("DISCORD_TOKEN is not set: serving without the Discord bot (admin, API and playground work)")
        elif "runbot" not in get_commands():
            logger.error("DISCORD_TOKEN is set but this build has no runbot command; serving without the bot")
        else:
            bot.start()

        server = Server(
            application=app,
            endpoints=build_endpoint_description_strings(host=host, port=port),
            signal_handlers=True,
            action_logger=access_log,
            http_timeout=None,
            websocket_handshake_timeout=5,
            application_close_timeout=10,
        )
        try:
            server.run()
        finally:
            bot.stop()
        if not server.listening_addresses:
            raise CommandError(f"Could not listen on {host}:{port} (is the port in use?)")

    def note_interrupted_turns(self) -> None:
        """Playground messages whose turn a stopped process left unfinished get their note now,
        instead of staying unanswered in silence."""
        from bot.playground.store import note_interrupted_turns

        if count := note_interrupted_turns():
            logger.info("%s playground message(s) noted as not answered: the server restarted", count)

    def playground_reminders(self) -> PlaygroundReminders:
        """The playground's reminder listener; it fires them itself only without Redis (with Redis
        the Celery beat does, and a second claimer would only add load)."""
        from bot.playground.reminder_listener import PlaygroundReminders

        return PlaygroundReminders(embedded=not settings.REDIS_URL)

    def explain_background_work(self) -> None:
        if settings.REDIS_URL:
            logger.info(
                "REDIS_URL is set: Celery tasks go to the broker and the channel layer is Redis. "
                "Run a worker with beat next to this server: celery -A botplatform worker -B"
            )
        else:
            logger.info(
                "REDIS_URL is not set: tasks run in this process, the live feed reaches only this "
                "process's websockets, and there is no beat schedule: this process fires the "
                "playground's reminders and the bot process the others, every few seconds"
            )
