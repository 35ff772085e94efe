"""The live feed `/ws/servers/<id>/turns/` (issue 5 acceptance): over the real Redis channel layer,
a moderator of server A receives the summary of a prompt record that ANOTHER process stores
(`manage.py replay_turn --record` in a subprocess, writing into this test's database); the
moderator of server B hears nothing of it; anonymous, non-staff and other-server connections are
refused."""

from __future__ import annotations

import asyncio
import json
import os
import sys
from pathlib import Path

import pytest
from channels.layers import get_channel_layer
from channels.testing import WebsocketCommunicator
from django.contrib.auth import get_user_model
from django.test import Client

from botplatform.asgi import application
from chatcontext.consumers import FORBIDDEN
from chatcontext.models import PromptRecord
from personas.models import Server, ServerModerator
from tests.paths import EXAMPLE

pytestmark = [pytest.mark.redis, pytest.mark.slow, pytest.mark.django_db(transaction=True)]

ROOT = Path(__file__).resolve().parents[2]
SNAPSHOT = EXAMPLE
SNAPSHOT_SERVER = json.loads(SNAPSHOT.read_text(encoding="utf-8"))["server"]
SUBPROCESS_SECONDS = 120
FEED_SECONDS = 30


def session_cookie(user) -> bytes:  # type: ignore[no-untyped-def]
    client = Client()
    client.force_login(user)
    return f"sessionid={client.cookies['sessionid'].value}".encode()


def communicator(server: Server, cookie: bytes | None = None) -> WebsocketCommunicator:
    headers = [(b"origin", b"http://testserver")]
    if cookie is not None:
        headers.append((b"cookie", cookie))
    return WebsocketCommunicator(application, f"/ws/servers/{server.pk}/turns/", headers=headers)


@pytest.fixture
def feed_world(shared_database_url: str, redis_layer: str) -> dict[str, object]:
    a = Server.objects.create(server_disc_id=SNAPSHOT_SERVER["disc_id"], name=SNAPSHOT_SERVER["name"])
    b = Server.objects.create(server_disc_id="4300", name="Day Larks")
    User = get_user_model()
    alice = User.objects.create_user("alice", password="pw-alice", is_staff=True)
    bob = User.objects.create_user("bob", password="pw-bob", is_staff=True)
    charlie = User.objects.create_user("charlie", password="pw-charlie")
    ServerModerator.objects.create(server=a, user=alice)
    ServerModerator.objects.create(server=b, user=bob)
    return {
        "a": a,
        "b": b,
        "alice": session_cookie(alice),
        "bob": session_cookie(bob),
        "charlie": session_cookie(charlie),
        "database_url": shared_database_url,
        "redis_url": redis_layer,
    }


async def record_in_another_process(database_url: str, redis_url: str) -> int:
    """`replay_turn --record` in a separate Python process: the bot's writer path, its own
    database connection and its own channel layer (REDIS_URL), nothing shared with this one."""
    env = {**os.environ, "DATABASE_URL": database_url, "REDIS_URL": redis_url}
    process = await asyncio.create_subprocess_exec(
        sys.executable,
        "manage.py",
        "replay_turn",
        str(SNAPSHOT),
        "--record",
        cwd=ROOT,
        env=env,
        stdout=asyncio.subprocess.DEVNULL,
        stderr=asyncio.subprocess.PIPE,
    )
    _, stderr = await asyncio.wait_for(process.communicate(), SUBPROCESS_SECONDS)
    message = stderr.decode().strip()
    assert process.returncode == 0, message
    assert message.startswith("stored prompt record "), message
    return int(message.rsplit(" ", 1)[1])


async def test_moderator_receives_a_record_stored_by_another_process(feed_world: dict) -> None:  # type: ignore[type-arg]
    alice = communicator(feed_world["a"], feed_world["alice"])
    bob = communicator(feed_world["b"], feed_world["bob"])
    assert (await alice.connect())[0]
    assert (await bob.connect())[0]
    try:
        record_id = await record_in_another_process(feed_world["database_url"], feed_world["redis_url"])
        message = await alice.receive_json_from(timeout=FEED_SECONDS)
        assert message["type"] == "turn"
        summary = message["record"]
        assert summary["id"] == record_id
        assert summary["server_id"] == feed_world["a"].pk
        assert summary["channel_name"] == "workbench"
        assert summary["persona_nickname"] == "Tomori"
        assert summary["source"] == PromptRecord.Source.REPLAY
        assert summary["token_estimate"] > 0
        # The summary carries figures, never prompt text.
        assert "context_items" not in summary and "reply_text" not in summary
        # The record is in this test's database, written by the other process.
        stored = await PromptRecord.objects.aget(pk=record_id)
        assert stored.server_id == feed_world["a"].pk
        # Server B's moderator hears nothing of server A.
        assert await bob.receive_nothing(timeout=1)
    finally:
        await alice.disconnect()
        await bob.disconnect()
        await get_channel_layer().flush()


@pytest.mark.parametrize("who", [None, "charlie", "bob"])
async def test_connections_outside_the_server_are_refused(feed_world: dict, who: str | None) -> None:  # type: ignore[type-arg]
    socket = communicator(feed_world["a"], feed_world[who] if who else None)
    connected, code = await socket.connect()
    assert not connected
    assert code == FORBIDDEN
    await socket.disconnect()


async def test_moderator_of_the_server_is_accepted(feed_world: dict) -> None:  # type: ignore[type-arg]
    socket = communicator(feed_world["b"], feed_world["bob"])
    connected, _ = await socket.connect()
    assert connected
    await socket.disconnect()
