"""Odd websocket traffic gets a close code, never a crash (issue 26 item 14): a frame from the
browser on a feed socket (these sockets only send; a frame that was no JSON raised in the consumer,
1006) closes it with 4400, and a path no route names (the router raised: a handshake 500) is
refused with 4404. Through the ASGI application, on the in-memory layer and, with REDIS_URL set,
on Redis."""

from __future__ import annotations

from typing import Any

import pytest

from tests.chatcontext.records.live.conftest import feed_socket

pytestmark = [
    pytest.mark.django_db(transaction=True),
    pytest.mark.usefixtures("layer", "worker_connections_released"),
]

RECEIVE_SECONDS = 10
# What the browser sees (chatcontext.records.consumers.CLIENT_FRAME and NOT_FOUND).
CLIENT_FRAME = 4400
NOT_FOUND = 4404


@pytest.mark.parametrize("frame", [{"text_data": "not json {"}, {"text_data": '{"ok": 1}'}, {"bytes_data": b"\x00"}])
async def test_a_frame_from_the_browser_closes_the_feed_with_4400(
    moderator: dict[str, Any], frame: dict[str, Any]
) -> None:
    communicator = feed_socket(f"/ws/servers/{moderator['server'].pk}/turns/", moderator["cookie"])
    connected, _ = await communicator.connect()
    assert connected
    await communicator.send_to(**frame)
    closed = await communicator.receive_output(timeout=RECEIVE_SECONDS)
    assert closed == {"type": "websocket.close", "code": CLIENT_FRAME, "reason": "this socket only sends"}
    # As a server does after a close: the browser's side is gone. The application then ends, and
    # would raise here had it failed.
    await communicator.disconnect(timeout=RECEIVE_SECONDS)


@pytest.mark.parametrize("path", ["/ws/nowhere/", "/ws/servers/abc/turns/", "/admin/", "/"])
async def test_a_path_no_route_names_is_refused_with_4404(moderator: dict[str, Any], path: str) -> None:
    communicator = feed_socket(path, moderator["cookie"])
    assert await communicator.connect(timeout=RECEIVE_SECONDS) == (False, NOT_FOUND)
    await communicator.disconnect(timeout=RECEIVE_SECONDS)
