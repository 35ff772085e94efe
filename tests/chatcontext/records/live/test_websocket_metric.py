"""``tomori_websocket_connections`` (botplatform/asgi.py) counts a socket from its acceptance to its
end, through the real ASGI application; a refused socket is never counted."""

from __future__ import annotations

from typing import Any

import pytest
from prometheus_client import REGISTRY

from tests.chatcontext.records.live.feed import socket, turns_path

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.usefixtures("worker_connections_released")]


def open_sockets() -> float:
    return REGISTRY.get_sample_value("tomori_websocket_connections") or 0.0


async def test_an_accepted_socket_counts_until_it_closes_and_a_refused_one_never(world: dict[str, Any]) -> None:
    before = open_sockets()
    alice = socket(turns_path(world["a"]), world, "alice")
    refused = socket(turns_path(world["a"]), world, "bob")  # bob moderates another server
    assert (await alice.connect())[0]
    assert not (await refused.connect())[0]
    assert open_sockets() == before + 1
    await alice.disconnect()
    await refused.disconnect()
    assert open_sockets() == before
