"""Live feeds re-check access while they are open (issue 13 item 4).

A socket of the turn feed (`/ws/servers/<id>/turns/`) or of a playground channel (which carries
message text) is closed with 4403 as soon as its account loses access to the server — removed as
the server's moderator, its staff or superuser flag taken away, deactivated, deleted — and receives
nothing of the server afterwards. A change made behind the signals' back (a queryset ``update``) is
caught by the periodic re-check before the next event is sent. Over the in-memory layer and, with
REDIS_URL set, the real Redis channel layer, through the ASGI application with session cookies as a
browser connects.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from channels.db import database_sync_to_async
from channels.layers import get_channel_layer
from channels.testing import WebsocketCommunicator
from django.contrib.auth import get_user_model

from bot.playground.live import publish
from chatcontext.records import consumers
from chatcontext.records.consumers import FORBIDDEN, group_name
from personas.models import Server, ServerModerator
from tests.chatcontext.records.live.feed import socket, turns_path

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.usefixtures("worker_connections_released")]

RECEIVE_SECONDS = 10
QUIET_SECONDS = 0.5


async def announce(server: Server) -> None:
    """A prompt record of the server, as ``chatcontext.records.consumers.announce_record`` sends it."""
    record = {"id": 1, "server_id": server.pk, "channel_disc_id": "4200"}
    await get_channel_layer().group_send(group_name(server.pk), {"type": "turn.recorded", "record": record})


async def receives(communicator: WebsocketCommunicator) -> dict[str, Any]:
    message: dict[str, Any] = await communicator.receive_json_from(timeout=RECEIVE_SECONDS)
    return message


async def is_closed_forbidden(communicator: WebsocketCommunicator) -> bool:
    closed = {"type": "websocket.close", "code": FORBIDDEN}
    return bool(await communicator.receive_output(timeout=RECEIVE_SECONDS) == closed)


def remove_moderator(w: dict[str, Any]) -> None:
    ServerModerator.objects.filter(server=w["a"], user=w["alice"]).delete()


def take_staff_flag(w: dict[str, Any]) -> None:
    w["alice"].is_staff = False
    w["alice"].save()


def deactivate(w: dict[str, Any]) -> None:
    w["alice"].is_active = False
    w["alice"].save(update_fields=["is_active"])


def delete_account(w: dict[str, Any]) -> None:
    w["alice"].delete()


CHANGES: dict[str, Callable[[dict[str, Any]], None]] = {
    "moderator removed": remove_moderator,
    "staff flag removed": take_staff_flag,
    "deactivated": deactivate,
    "deleted": delete_account,
}


@pytest.mark.parametrize("change", sorted(CHANGES))
async def test_a_turn_feed_socket_is_closed_when_its_account_loses_access(world: dict[str, Any], change: str) -> None:
    alice, bob = socket(turns_path(world["a"]), world, "alice"), socket(turns_path(world["b"]), world, "bob")
    assert (await alice.connect())[0] and (await bob.connect())[0]
    try:
        await announce(world["a"])
        assert (await receives(alice))["type"] == "turn"

        await database_sync_to_async(CHANGES[change])(world)

        assert await is_closed_forbidden(alice)
        await announce(world["a"])
        assert await alice.receive_nothing(timeout=QUIET_SECONDS)
        # Bob moderates another server: his socket is untouched and still hears his server.
        await announce(world["b"])
        assert (await receives(bob))["record"]["server_id"] == world["b"].pk
    finally:
        await alice.disconnect()
        await bob.disconnect()


async def test_a_superuser_whose_flag_is_taken_away_loses_every_feed(world: dict[str, Any]) -> None:
    root = socket(turns_path(world["b"]), world, "root")
    assert (await root.connect())[0]
    try:

        def demote() -> None:
            world["root"].is_superuser = False
            world["root"].save()

        await database_sync_to_async(demote)()
        assert await is_closed_forbidden(root)
    finally:
        await root.disconnect()


async def test_a_change_that_bypasses_the_signals_is_caught_before_the_next_event(
    world: dict[str, Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    """``QuerySet.update`` sends no signal: the re-check every ACCESS_RECHECK_SECONDS catches it
    (here every event, so that no waiting is involved)."""
    monkeypatch.setattr(consumers, "ACCESS_RECHECK_SECONDS", 0.0)
    alice = socket(turns_path(world["a"]), world, "alice")
    assert (await alice.connect())[0]
    try:
        await announce(world["a"])
        assert (await receives(alice))["type"] == "turn"
        await database_sync_to_async(get_user_model().objects.filter(pk=world["alice"].pk).update)(is_staff=False)

        await announce(world["a"])

        assert await is_closed_forbidden(alice)
        assert await alice.receive_nothing(timeout=QUIET_SECONDS)
    finally:
        await alice.disconnect()


async def test_a_playground_socket_stops_carrying_message_text_once_its_moderator_is_removed(
    world: dict[str, Any],
) -> None:
    channel = world["channel"]
    alice = socket(f"/ws/playground/channels/{channel.pk}/", world, "alice")
    assert (await alice.connect())[0]
    try:
        await publish(channel.pk, {"kind": "message", "message": {"content": "my address is 4 Harbor Lane"}})
        assert (await receives(alice))["message"]["content"] == "my address is 4 Harbor Lane"

        await database_sync_to_async(remove_moderator)(world)

        assert await is_closed_forbidden(alice)
        await publish(channel.pk, {"kind": "message", "message": {"content": "and my phone number"}})
        assert await alice.receive_nothing(timeout=QUIET_SECONDS)
    finally:
        await alice.disconnect()
