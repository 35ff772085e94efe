"""``kill -9`` of the web process while a playground reply is being written (issue 26 item 10): the
message is not left unanswered in silence; the next start notes it "not answered: the server
restarted", on the page too. A real ``manage.py serve`` on a fresh SQLite database, the model a
local OpenAI-compatible server that never finishes its answer."""

from __future__ import annotations

import asyncio
import contextlib
import http.cookiejar
import re
import subprocess
import threading
import time
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from urllib.parse import urlencode

from tests.bot.fake_llm import FakeLLMServer
from tests.bot.playground.conftest import MINA
from tests.paths import REPO_ROOT
from tests.serve_process import MANAGE, fresh_env, serve_process, serving

WAIT_SECONDS = 60

SETUP = """
from django.contrib.auth import get_user_model
from bot.playground import store
from personas.management.commands.load_demo import DEMO_SERVER_DISC_ID
from personas.models import Server, ServerSettings
server = Server.objects.get(server_disc_id=DEMO_SERVER_DISC_ID)
ServerSettings.objects.filter(server=server).update(llm_base_url="{url}", llm_model="slow")
get_user_model().objects.create_superuser("root", password="pw")
print(store.create_channel(server, "lounge", now_ms=1_893_456_000_000).pk)
"""

STATE = """
from bot.playground.models import PlaygroundMessage
row = PlaygroundMessage.objects.get(author_disc_id="{author}")
print(repr(row.skip_reason), row.turn_pending, PlaygroundMessage.objects.filter(is_bot=True).count())
"""


@contextmanager
def slow_model() -> Iterator[FakeLLMServer]:
    """The fake server on a loop of its own thread: its ``slow`` model is asked and never answers."""
    loop = asyncio.new_event_loop()
    thread = threading.Thread(target=loop.run_forever, daemon=True)
    thread.start()

    async def start() -> FakeLLMServer:
        server = FakeLLMServer()
        await server.start()
        return server

    server = asyncio.run_coroutine_threadsafe(start(), loop).result(timeout=WAIT_SECONDS)
    try:
        yield server
    finally:
        asyncio.run_coroutine_threadsafe(server.stop(), loop).result(timeout=WAIT_SECONDS)
        loop.call_soon_threadsafe(loop.stop)
        thread.join(timeout=WAIT_SECONDS)


def shell(env: dict[str, str], code: str) -> str:
    """The last line ``code`` printed (the shell prints its own notes before it)."""
    done = subprocess.run(
        [*MANAGE, "shell", "-c", code], cwd=REPO_ROOT, env=env, check=True, timeout=300, capture_output=True
    )
    return done.stdout.decode().strip().splitlines()[-1]


def logged_in(base: str) -> tuple[urllib.request.OpenerDirector, str]:
    """A browser session of the superuser: its opener and its CSRF token."""
    jar = http.cookiejar.CookieJar()
    opener = urllib.request.build_opener(urllib.request.HTTPCookieProcessor(jar))
    page = opener.open(f"{base}/admin/login/", timeout=WAIT_SECONDS).read().decode()
    token = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', page)
    assert token is not None
    form = {"username": "root", "password": "pw", "csrfmiddlewaretoken": token.group(1), "next": "/admin/"}
    opener.open(f"{base}/admin/login/", data=urlencode(form).encode(), timeout=WAIT_SECONDS)
    return opener, next(c.value for c in jar if c.name == "csrftoken")


def post_without_waiting(opener: urllib.request.OpenerDirector, request: urllib.request.Request) -> threading.Thread:
    """Send the message; its answer never comes (the process is killed), so nobody waits for it."""

    def send() -> None:
        with contextlib.suppress(OSError):  # the connection dies with the process
            opener.open(request, timeout=WAIT_SECONDS)

    thread = threading.Thread(target=send, daemon=True)
    thread.start()
    return thread


def test_a_reply_cut_off_by_kill_9_is_noted_not_answered_at_the_next_start(demo_var_dir: Path) -> None:
    env = fresh_env(demo_var_dir)
    with slow_model() as llm:
        channel_pk = shell(env, SETUP.format(url=llm.base_url))
        with serve_process(env, demo_var_dir / "first.log", "--no-bot") as (base, proc):
            opener, csrf = logged_in(base)
            request = urllib.request.Request(
                f"{base}/playground/channels/{channel_pk}/messages/",
                data=urlencode({"identity": MINA, "content": "tomori, tell me a long story"}).encode(),
                headers={"X-CSRFToken": csrf, "Referer": base},
            )
            sender = post_without_waiting(opener, request)
            deadline = time.monotonic() + WAIT_SECONDS
            while not llm.requests:  # the turn is in flight: the model is writing the reply
                assert time.monotonic() < deadline and proc.poll() is None, (demo_var_dir / "first.log").read_text()
                time.sleep(0.1)
            proc.kill()
            proc.wait()
            sender.join(timeout=WAIT_SECONDS)
        assert shell(env, STATE.format(author=MINA)) == "'' True 0"  # unanswered, no note yet

        with serving(env, demo_var_dir / "second.log", "--no-bot") as base:
            opener, _ = logged_in(base)
            page = opener.open(f"{base}/playground/?channel={channel_pk}", timeout=WAIT_SECONDS).read().decode()

    assert shell(env, STATE.format(author=MINA)) == "'server_restarted' False 0"
    assert "Not answered: the server restarted" in page
