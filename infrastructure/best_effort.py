"""What Redis carries besides Celery is best-effort: an unreachable Redis never breaks a turn.

The live feed (the inspector's and the playground's sockets, over the channel layer) and the cache
(persona emoji and stickers) are conveniences next to what matters, the turn and its prompt
record. Unguarded, a Redis outage made ``group_send`` raise after the record had committed (a
playground post answered 500, ``replay_turn --record`` exited 1 with its record stored) and made
the cache read of a turn raise before its prompt was built.

Here a failed feed event is dropped and a failed cache call is a miss. Each outage logs one line
(the exception's class only: group names and payloads carry ids and text), and for
``RETRY_SECONDS`` afterwards calls are skipped without trying, so a stream of reply deltas does not
wait on a dead server once per piece. ``/api/v1/health`` probes Redis itself (``redis_status``).
"""

from __future__ import annotations

import asyncio
import itertools
import logging
import threading
import time
from collections.abc import Callable
from typing import Any, TypeVar

import redis
from channels.layers import get_channel_layer
from django.conf import settings
from django.core.cache.backends.redis import RedisCache

logger = logging.getLogger(__name__)

RETRY_SECONDS = 10
REDIS_ERRORS = (redis.RedisError, OSError, asyncio.TimeoutError)

T = TypeVar("T")


class Outage:
    """Whether one use of Redis is failing in this process, and until when not to try again."""

    def __init__(self, what: str, consequence: str) -> None:
        self.what = what
        self.consequence = consequence
        self._lock = threading.Lock()
        self._down_until: float | None = None

    def skip(self) -> bool:
        with self._lock:
            return self._down_until is not None and time.monotonic() < self._down_until

    def failed(self, exc: BaseException) -> None:
        with self._lock:
            first = self._down_until is None
            self._down_until = time.monotonic() + RETRY_SECONDS
        if first:
            logger.warning(
                "%s unavailable (%s): %s; retrying every %ds",
                self.what,
                type(exc).__name__,
                self.consequence,
                RETRY_SECONDS,
            )

    def succeeded(self) -> None:
        with self._lock:
            recovered, self._down_until = self._down_until is not None, None
        if recovered:
            logger.info("%s available again", self.what)


FEED = Outage("live feed", "events are dropped, turns and records are kept")
CACHE = Outage("cache", "every read is a miss")


async def send_to_group(group: str, message: dict[str, Any]) -> bool:
    """Send one event to a channel-layer group; False when there is no layer or the send failed."""
    layer = get_channel_layer()
    if layer is None or FEED.skip():
        return False
    try:
        await layer.group_send(group, message)
    except REDIS_ERRORS as exc:
        FEED.failed(exc)
        return False
    FEED.succeeded()
    return True


class BestEffortRedisCache(RedisCache):
    """Django's Redis cache, where an unreachable server is a miss and a write that does not happen."""

    def _guarded(self, call: Callable[[], T], fallback: T) -> T:
        if CACHE.skip():
            return fallback
        try:
            result = call()
        except REDIS_ERRORS as exc:
            CACHE.failed(exc)
            return fallback
        CACHE.succeeded()
        return result

    def get(self, key: Any, default: Any = None, version: int | None = None) -> Any:
        return self._guarded(lambda: super(BestEffortRedisCache, self).get(key, default, version), default)

    def get_many(self, keys: Any, version: int | None = None) -> dict[Any, Any]:
        return self._guarded(lambda: super(BestEffortRedisCache, self).get_many(keys, version), {})

    def has_key(self, key: Any, version: int | None = None) -> bool:
        return self._guarded(lambda: super(BestEffortRedisCache, self).has_key(key, version), False)

    def add(self, key: Any, value: Any, timeout: Any = None, version: int | None = None) -> bool:
        return self._guarded(lambda: super(BestEffortRedisCache, self).add(key, value, timeout, version), False)

    def set(self, key: Any, value: Any, timeout: Any = None, version: int | None = None) -> None:
        self._guarded(lambda: super(BestEffortRedisCache, self).set(key, value, timeout, version), None)

    def set_many(self, data: Any, timeout: Any = None, version: int | None = None) -> list[Any]:
        return self._guarded(lambda: super(BestEffortRedisCache, self).set_many(data, timeout, version), list(data))

    def touch(self, key: Any, timeout: Any = None, version: int | None = None) -> bool:
        return self._guarded(lambda: super(BestEffortRedisCache, self).touch(key, timeout, version), False)

    def delete(self, key: Any, version: int | None = None) -> bool:
        return self._guarded(lambda: super(BestEffortRedisCache, self).delete(key, version), False)

    def delete_many(self, keys: Any, version: int | None = None) -> None:
        self._guarded(lambda: super(BestEffortRedisCache, self).delete_many(keys, version), None)

    def clear(self) -> None:
        """Delete this cache's keys, and only those. Django's ``clear`` runs FLUSHDB, but the cache
        shares its Redis database with the channel layer and Celery (one ``REDIS_URL``): a flush
        would drop the live feeds' groups, reminder occurrences on their way to the bot and queued
        tasks of every process."""
        self._guarded(self._delete_own_keys, None)

    def _delete_own_keys(self) -> None:
        client = self._cache.get_client(None, write=True)
        # Keys are "<KEY_PREFIX>:<version>:<key>" (Django's default key function).
        keys = client.scan_iter(match=_glob_literal(self.key_prefix) + ":*", count=_CLEAR_BATCH)
        while batch := list(itertools.islice(keys, _CLEAR_BATCH)):
            client.unlink(*batch)


# Keys asked for per SCAN step and deleted per UNLINK while clearing.
_CLEAR_BATCH = 1000


def _glob_literal(text: str) -> str:
    """``text`` as a Redis MATCH pattern that matches exactly itself."""
    return "".join(f"\\{c}" if c in "*?[]\\" else c for c in text)


def redis_status() -> str:
    """``"not configured"``, ``"ok"`` or ``"unreachable"``: one PING, bounded by the connect timeout."""
    if not settings.REDIS_URL:
        return "not configured"
    client = redis.Redis.from_url(
        settings.REDIS_URL,
        socket_connect_timeout=settings.REDIS_CONNECT_TIMEOUT,
        socket_timeout=settings.REDIS_CONNECT_TIMEOUT,
    )
    try:
        client.ping()
    except REDIS_ERRORS:
        return "unreachable"
    finally:
        client.close()
    return "ok"
