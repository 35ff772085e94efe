"""An idle consumer stays alive on every channel layer (a live-feed websocket waits between turns)."""

from __future__ import annotations

import asyncio

import pytest
from channels.layers import get_channel_layer

from tests.chatcontext.records.live.conftest import Layer

pytestmark = pytest.mark.slow

# Two of channels_redis' 5 s blocking reads: with redis-py's default 5 s socket timeout the first
# or second one ended in "Timeout reading from Redis" and the consumer died. The in-memory layer
# has no blocking read to outlive, so a second shows it keeps waiting.
IDLE_SECONDS = {"redis": 11, "memory": 1}


async def test_an_idle_receive_outlives_the_blocking_reads(layer: Layer) -> None:
    channel_layer = get_channel_layer()
    channel = await channel_layer.new_channel()
    with pytest.raises(asyncio.TimeoutError):
        await asyncio.wait_for(channel_layer.receive(channel), IDLE_SECONDS[layer.name])
