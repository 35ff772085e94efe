"""The Redis channel layer keeps an idle consumer alive (a live-feed websocket waits between turns)."""

from __future__ import annotations

import asyncio

import pytest
from channels.layers import get_channel_layer

pytestmark = [pytest.mark.redis, pytest.mark.slow]

# Two of channels_redis' 5 s blocking reads: with redis-py's default 5 s socket timeout the first
# or second one ended in "Timeout reading from Redis" and the consumer died.
IDLE_SECONDS = 11


async def test_an_idle_receive_outlives_the_blocking_reads(redis_layer: str) -> None:
    layer = get_channel_layer()
    channel = await layer.new_channel()
    with pytest.raises(asyncio.TimeoutError):
        await asyncio.wait_for(layer.receive(channel), IDLE_SECONDS)
