"""Live-feed sockets through a Redis outage (issue 26 item 11). A socket open when Redis goes away
was dropped with 1006 (the consumer's receive loop raised), a new one got a handshake 500 while it
was down and on the first connect after it came back (a pooled connection to the old server). Now
a socket is closed with 4503 and a reason the page shows ("live updates are paused"), and the
first socket after the outage connects and streams.

The outage is a closed local port (``redis_down``) or, on the real Redis, a loopback proxy the
test stops and starts (``redis_proxy``); the server itself is never touched."""

from __future__ import annotations

from typing import Any

import pytest
from channels.testing import WebsocketCommunicator
from django.contrib.auth import get_user_model
from django.core.cache import caches
from django.test import Client

from botplatform.settings import REDIS_URL
from chatcontext.records.consumers import group_name
from infrastructure import best_effort
from tests.bot.playground.conftest import Demo
from tests.chatcontext.records.live.conftest import feed_socket
from tests.paths import REPO_ROOT as ROOT
from tests.services import LoopbackProxy

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.usefixtures("worker_connections_released")]

RECEIVE_SECONDS = 10
# What the browser sees (chatcontext.records.consumers.LIVE_PAUSED).
LIVE_PAUSED = 4503
PAUSED = {"type": "websocket.close", "code": LIVE_PAUSED, "reason": "live updates paused: Redis unreachable"}


def turns(moderator: dict[str, Any]) -> WebsocketCommunicator:
    return feed_socket(f"/ws/servers/{moderator['server'].pk}/turns/", moderator["cookie"])


async def streams(communicator: WebsocketCommunicator, moderator: dict[str, Any]) -> bool:
    record = {"id": 1, "server_id": moderator["server"].pk}
    sent = await best_effort.send_to_group(
        group_name(moderator["server"].pk), {"type": "turn.recorded", "record": record}
    )
    return sent and await communicator.receive_json_from(timeout=RECEIVE_SECONDS) == {"type": "turn", "record": record}


async def streaming_socket(moderator: dict[str, Any]) -> WebsocketCommunicator:
    """A turn-feed socket that connected and received an event."""
    communicator = turns(moderator)
    assert await communicator.connect(timeout=RECEIVE_SECONDS) == (True, None)
    assert await streams(communicator, moderator)
    return communicator


async def test_a_new_socket_is_closed_with_a_reason_while_redis_is_down(
    moderator: dict[str, Any], redis_down: str
) -> None:
    communicator = turns(moderator)
    assert await communicator.connect(timeout=RECEIVE_SECONDS) == (True, None)
    assert await communicator.receive_output(timeout=RECEIVE_SECONDS) == PAUSED
    await communicator.wait(timeout=RECEIVE_SECONDS)  # the consumer ended without raising


if REDIS_URL:  # the proxy needs a Redis behind it; without one these tests do not exist (nothing is skipped)

    @pytest.mark.redis
    async def test_a_blip_closes_the_open_socket_with_a_reason_and_the_first_socket_after_it_streams(
        moderator: dict[str, Any], redis_proxy: LoopbackProxy
    ) -> None:
        first = await streaming_socket(moderator)
        redis_proxy.stop()
        assert await first.receive_output(timeout=RECEIVE_SECONDS) == PAUSED
        await first.wait(timeout=RECEIVE_SECONDS)  # the consumer ended without raising
        redis_proxy.start()
        best_effort.FEED.succeeded()  # the retry time has passed

        second = await streaming_socket(moderator)
        await second.disconnect()


def test_the_playground_page_has_the_paused_notice_its_script_shows_on_4503(demo: Demo) -> None:
    root = get_user_model().objects.create_superuser("root")
    client = Client()
    client.force_login(root)
    page = client.get("/playground/", {"server": demo.server.pk, "channel": demo.channel.pk}).content.decode()
    assert '<p id="pg-live-paused" class="muted" role="status" hidden>Live updates are paused' in page
    script = (ROOT / "bot" / "static" / "playground" / "playground.js").read_text(encoding="utf-8")
    assert f"if (closed.code === {LIVE_PAUSED}) livePaused.hidden = false;" in script


if REDIS_URL:

    @pytest.mark.redis
    def test_the_first_cache_read_after_the_outage_is_a_hit(  # redis-py's sync pool checks what it hands out
        redis_proxy: LoopbackProxy,
    ) -> None:
        cache = caches["default"]
        cache.set("outage-probe", "kept", 60)
        redis_proxy.stop()
        assert cache.get("outage-probe") is None  # a miss while Redis is away
        redis_proxy.start()
        best_effort.CACHE.succeeded()  # the retry time has passed
        assert cache.get("outage-probe") == "kept"
        cache.delete("outage-probe")
