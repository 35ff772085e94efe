"""``manage.py serve``: the one process ``make run`` starts.

Runs the ASGI application (HTTP and websockets) under daphne, serves the admin's static files
itself when DEBUG is on (no whitenoise, no collectstatic needed for a local start), and starts the
Discord bot (``manage.py runbot``) as a child process when DISCORD_TOKEN is set. It also posts the
playground channels' reminders (``bot.playground.reminders``), and without Redis fires them itself
every few seconds (the bot child fires the others).
"""

from __future__ import annotations

import logging
import subprocess
import sys
import threading
from typing import TYPE_CHECKING, Any

from django.conf import settings
from django.core.management import get_commands
from django.core.management.base import BaseCommand, CommandError, CommandParser

from botplatform.logging_filters import mask_ids

if TYPE_CHECKING:
    from bot.playground.reminders import PlaygroundReminders

logger = logging.getLogger("botplatform.serve")

CHILD_STOP_SECONDS = 10


def access_log(protocol: Any, action: str, details: dict[str, Any]) -> None:
    """One line per request without ids or credentials (``mask_ids``): query strings are dropped."""
    path = mask_ids(str(details.get("path", "")))
    if action == "complete":
        logger.info("%s %s %s", details.get("method", "-"), path, details.get("status", "-"))
    elif action in {"connected", "disconnected", "rejected"}:
        logger.info("websocket %s %s", action, path)


class BotProcess:
    """``manage.py runbot`` as a child; its unexpected exit is logged, its planned stop is not."""

    def __init__(self) -> None:
        self.proc: subprocess.Popen[bytes] | None = None
        self.stopping = False

    def start(self) -> None:
        self.proc = subprocess.Popen([sys.executable, str(settings.BASE_DIR / "manage.py"), "runbot"])
        logger.info("Discord bot started (manage.py runbot, pid %s)", self.proc.pid)
        threading.Thread(target=self._watch, name="runbot-watch", daemon=True).start()

    def _watch(self) -> None:
        assert self.proc is not None
        code = self.proc.wait()
        if not self.stopping:
            logger.error("Discord bot exited with status %s; the web server keeps running without it", code)

    def stop(self) -> None:
        if self.proc is None or self.proc.poll() is not None:
            return
        self.stopping = True
        self.proc.terminate()
        try:
            self.proc.wait(timeout=CHILD_STOP_SECONDS)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()


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

        from botplatform.asgi import application
        from botplatform.static_files import StaticFilesHandler

        self.check_migrations()
        host, port = options["host"], options["port"]
        app: Any = application
        if settings.DEBUG or options["serve_static"]:
            app = StaticFilesHandler(application)
        base = f"http://{'[' + host + ']' if ':' in host else host}:{port}"
        logger.info("Tomori Platform on %s/admin/ (API docs: %s/api/docs)", base, base)
        self.explain_background_work()

        # In the reactor's asyncio loop, where the playground's pages and turns live.
        reminders = self.playground_reminders()
        reactor.callLater(0, reminders.start)

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

    def playground_reminders(self) -> PlaygroundReminders:
        """The playground's reminder listener; it fires them itself only without Redis (with Redis
        the Celery beat does, and a second claimer would only add load)."""
        from bot.playground.reminders import PlaygroundReminders

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
