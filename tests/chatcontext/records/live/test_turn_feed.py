"""The live feed `/ws/servers/<id>/turns/` (issue 5 acceptance), on every channel layer this
environment provides (the in-memory layer always, Redis when REDIS_URL is set).

A moderator of server A receives the summary of a prompt record that `manage.py replay_turn
--record` stores; the moderator of server B hears nothing of it; anonymous, non-staff and
other-server connections are refused. When ANOTHER process stores the record (the command in a
subprocess, writing into this test's database, as the bot process does), the Redis layer carries
it to this process's moderator, while the in-memory layer, the default without Redis, reaches only
the process that stored it: the record is there, the feed stays silent (README, *Without Redis*).
"""

from __future__ import annotations

import asyncio
import os
import sys
from io import StringIO
from typing import Any

import pytest
from asgiref.sync import sync_to_async
from channels.layers import get_channel_layer
from channels.testing import WebsocketCommunicator
from django.contrib.auth import get_user_model
from django.core.management import call_command

from botplatform.asgi import application
from chatcontext.models import PromptRecord
from chatcontext.records.consumers import FORBIDDEN
from personas.models import Server, ServerModerator
from tests.chatcontext.records.live.conftest import Layer
from tests.chatcontext.records.live.feed import SNAPSHOT, SNAPSHOT_SERVER, SUBPROCESS_SECONDS, session_cookie
from tests.paths import REPO_ROOT as ROOT

pytestmark = [
    pytest.mark.slow,
    pytest.mark.django_db(transaction=True),
    pytest.mark.usefixtures("worker_connections_released"),
]

FEED_SECONDS = 30
QUIET_SECONDS = 1


def communicator(server: Server, cookie: bytes | None = None) -> WebsocketCommunicator:
    headers = [(b"origin", b"http://testserver")]
    if cookie is not None:
        headers.append((b"cookie", cookie))
    return WebsocketCommunicator(application, f"/ws/servers/{server.pk}/turns/", headers=headers)


@pytest.fixture
def feed_world(layer: Layer) -> dict[str, Any]:
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
        "layer": layer,
    }


def stored_record_id(stderr: str) -> int:
    message = stderr.strip()
    assert message.startswith("stored prompt record "), message
    return int(message.rsplit(" ", 1)[1])


async def record_in_this_process() -> int:
    """`replay_turn --record` in this process (on a worker thread, as a request stores a playground turn)."""
    stderr = StringIO()
    await sync_to_async(call_command)("replay_turn", str(SNAPSHOT), "--record", stdout=StringIO(), stderr=stderr)
    return stored_record_id(stderr.getvalue())


async def record_in_another_process(database_url: str, layer: Layer) -> int:
    """`replay_turn --record` in a separate Python process: the bot's writer path, its own
    database connection and its own channel layer (REDIS_URL, or the in-memory layer without it),
    nothing shared with this one."""
    env = {name: value for name, value in os.environ.items() if name != "REDIS_URL"}
    env["DATABASE_URL"] = database_url
    if layer.redis_url:
        env["REDIS_URL"] = layer.redis_url
        env["CHANNEL_LAYER_PREFIX"] = layer.prefix
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
    assert process.returncode == 0, stderr.decode()
    return stored_record_id(stderr.decode())


def assert_is_the_summary(message: dict[str, Any], record_id: int, server: Server) -> None:
    assert message["type"] == "turn"
    summary = message["record"]
    assert summary["id"] == record_id
    assert summary["server_id"] == server.pk
    assert summary["channel_name"] == "workbench"
    assert summary["persona_nickname"] == "Tomori"
    assert summary["source"] == PromptRecord.Source.REPLAY
    assert summary["token_estimate"] > 0
    # The summary carries figures, never prompt text.
    assert "context_items" not in summary and "reply_text" not in summary


@pytest.mark.django_db(transaction=True, databases=["default", "replay"])  # the command replays in this process
async def test_moderator_receives_a_record_stored_in_this_process(feed_world: dict[str, Any]) -> None:
    alice = communicator(feed_world["a"], feed_world["alice"])
    bob = communicator(feed_world["b"], feed_world["bob"])
    assert (await alice.connect())[0]
    assert (await bob.connect())[0]
    try:
        record_id = await record_in_this_process()
        assert_is_the_summary(await alice.receive_json_from(timeout=FEED_SECONDS), record_id, feed_world["a"])
        # Server B's moderator hears nothing of server A.
        assert await bob.receive_nothing(timeout=QUIET_SECONDS)
    finally:
        await alice.disconnect()
        await bob.disconnect()
        await get_channel_layer().flush()


async def test_a_record_stored_by_another_process_reaches_the_moderator_only_over_redis(
    shared_database_url: str, feed_world: dict[str, Any]
) -> None:
    layer: Layer = feed_world["layer"]
    alice = communicator(feed_world["a"], feed_world["alice"])
    bob = communicator(feed_world["b"], feed_world["bob"])
    assert (await alice.connect())[0]
    assert (await bob.connect())[0]
    try:
        record_id = await record_in_another_process(shared_database_url, layer)
        # The record is in this test's database, written by the other process, on every layer.
        stored = await PromptRecord.objects.aget(pk=record_id)
        assert stored.server_id == feed_world["a"].pk
        if layer.crosses_processes:
            assert_is_the_summary(await alice.receive_json_from(timeout=FEED_SECONDS), record_id, feed_world["a"])
        else:
            # The other process announced it on its own in-memory layer, which no socket here hears.
            assert await alice.receive_nothing(timeout=QUIET_SECONDS)
        # Server B's moderator hears nothing of server A.
        assert await bob.receive_nothing(timeout=QUIET_SECONDS)
    finally:
        await alice.disconnect()
        await bob.disconnect()
        await get_channel_layer().flush()


@pytest.mark.parametrize("who", [None, "charlie", "bob"])
async def test_connections_outside_the_server_are_refused(feed_world: dict[str, Any], who: str | None) -> None:
    socket = communicator(feed_world["a"], feed_world[who] if who else None)
    connected, code = await socket.connect()
    assert not connected
    assert code == FORBIDDEN
    await socket.disconnect()


async def test_moderator_of_the_server_is_accepted(feed_world: dict[str, Any]) -> None:
    socket = communicator(feed_world["b"], feed_world["bob"])
    connected, _ = await socket.connect()
    assert connected
    await socket.disconnect()
