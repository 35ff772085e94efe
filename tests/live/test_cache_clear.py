"""Clearing the cache deletes the cache's keys only (personas.best_effort.BestEffortRedisCache.clear).

The cache, the channel layer and Celery share one Redis database (``REDIS_URL``). Django's Redis
cache clears with FLUSHDB, which also dropped the live feeds' groups and reminder occurrences on
their way to the bot: in the test suite one xdist worker's ``cache.clear()`` emptied the other
worker's channel layer, and a socket or the reminder listener waited for a message that was gone.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from typing import Any

import pytest
import redis
from asgiref.sync import async_to_sync
from channels.layers import get_channel_layer
from django.core.cache import caches

from botplatform.settings import REDIS_URL, redis_cache, redis_channel_layer
from personas import best_effort
from tests.live.conftest import closed_port
from tests.services import embedded_and_redis, receive_from_sync, require_redis


@pytest.fixture(params=embedded_and_redis("locmem"))
def backend(request: pytest.FixtureRequest, settings: Any) -> Iterator[str]:
    prefix = f"clear-test-{uuid.uuid4().hex[:8]}"
    if request.param == "locmem":
        settings.CACHES = {"default": {"BACKEND": "django.core.cache.backends.locmem.LocMemCache"}}
        settings.CHANNEL_LAYERS = {"default": {"BACKEND": "channels.layers.InMemoryChannelLayer"}}
    else:
        url = require_redis(REDIS_URL)
        settings.CACHES = {"default": {**redis_cache(url), "KEY_PREFIX": f"{prefix}-cache"}}
        settings.CHANNEL_LAYERS = {"default": redis_channel_layer(url, f"{prefix}-layer")}
    yield request.param
    if request.param == "redis":
        client = redis.Redis.from_url(REDIS_URL)
        for key in client.scan_iter(match=f"{prefix}*"):
            client.delete(key)


def test_clear_deletes_the_cache_keys_and_nothing_else(backend: str) -> None:
    cache = caches["default"]
    layer = get_channel_layer()
    channel = async_to_sync(layer.new_channel)()
    async_to_sync(layer.group_add)("bot.reminders", channel)
    neighbour = f"other-{uuid.uuid4().hex[:8]}:1:key"  # another installation's cache, say
    client = redis.Redis.from_url(REDIS_URL) if backend == "redis" else None
    if client is not None:
        client.set(neighbour, "kept", ex=60)
    cache.set_many({"persona-assets:1": "a", "emoji_sticker:1": "b"})
    cache.set("versioned", "c", version=3)
    try:
        cache.clear()

        assert cache.get_many(["persona-assets:1", "emoji_sticker:1"]) == {}
        assert cache.get("versioned", version=3) is None
        if client is not None:
            assert client.get(neighbour) == b"kept"
        async_to_sync(layer.group_send)("bot.reminders", {"type": "reminder.fire"})
        assert receive_from_sync(layer, channel) == {"type": "reminder.fire"}
    finally:
        if client is not None:
            client.delete(neighbour)


def test_clear_with_redis_down_is_a_no_op(settings: Any) -> None:
    settings.CACHES = {"default": redis_cache(f"redis://127.0.0.1:{closed_port()}/0")}
    try:
        caches["default"].clear()  # unreachable: no error
        assert best_effort.CACHE.skip()  # and the outage is noted, as for every other call
    finally:
        best_effort.CACHE.succeeded()
