"""Clearing the cache deletes the cache's keys only (infrastructure.best_effort.BestEffortRedisCache.clear).

The cache, the channel layer and Celery share one Redis database (``REDIS_URL``). Django's Redis
cache clears with FLUSHDB, which also dropped the live feeds' groups and reminder occurrences on
their way to the bot: in the test suite one xdist worker's ``cache.clear()`` emptied the other
worker's channel layer, and a socket or the reminder listener waited for a message that was gone.
"""

from __future__ import annotations

import uuid
from typing import Any

import redis
from asgiref.sync import async_to_sync
from channels.layers import get_channel_layer
from django.core.cache import caches

from botplatform.settings import redis_cache
from infrastructure import best_effort
from personas.reminder_firing import REMINDERS_GROUP
from tests.chatcontext.records.live.conftest import Layer
from tests.services import receive_from_sync

LOCMEM = {"BACKEND": "django.core.cache.backends.locmem.LocMemCache"}


def test_clear_deletes_the_cache_keys_and_nothing_else(layer: Layer, settings: Any) -> None:
    """On Redis the cache shares the layer's database; its prefix is under the layer fixture's, so
    the fixture's clean-up removes what this test leaves."""
    settings.CACHES = (
        {"default": {**redis_cache(layer.redis_url), "KEY_PREFIX": f"{layer.prefix}-cache"}}
        if layer.crosses_processes
        else {"default": LOCMEM}
    )
    cache = caches["default"]
    channel_layer = get_channel_layer()
    channel = async_to_sync(channel_layer.new_channel)()
    async_to_sync(channel_layer.group_add)(REMINDERS_GROUP, channel)
    client = redis.Redis.from_url(layer.redis_url) if layer.crosses_processes else None
    neighbour = f"{layer.prefix}-other-{uuid.uuid4().hex[:8]}:1:key"  # another installation's cache, say
    if client is not None:
        client.set(neighbour, "kept", ex=60)
    cache.set_many({"persona-assets:1": "a", "emoji_sticker:1": "b"})
    cache.set("versioned", "c", version=3)

    cache.clear()

    assert cache.get_many(["persona-assets:1", "emoji_sticker:1"]) == {}
    assert cache.get("versioned", version=3) is None
    if client is not None:
        assert client.get(neighbour) == b"kept"
        client.close()
    async_to_sync(channel_layer.group_send)(REMINDERS_GROUP, {"type": "reminder.fire"})
    assert receive_from_sync(channel_layer, channel) == {"type": "reminder.fire"}


def test_clear_with_redis_down_is_a_no_op(redis_down: str) -> None:
    caches["default"].clear()  # unreachable: no error
    assert best_effort.CACHE.skip()  # and the outage is noted, as for every other call
