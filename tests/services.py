"""Which real services the tests talk to: Redis only when ``REDIS_URL`` is set (CI sets it).

A clone on a machine with nothing but Python passes its own tests, so a test that exercises Redis
(the channel layer, the Celery broker) runs on the embedded default every environment has — the
in-memory channel layer, kombu's filesystem transport — and on the real Redis as well when
``REDIS_URL`` names one. There is no fallback to a Redis on a well-known port: an unset
``REDIS_URL`` means no Redis, as it does for ``botplatform/settings.py``.
"""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
import redis
from asgiref.sync import async_to_sync

from botplatform.settings import REDIS_URL


def embedded_and_redis(embedded: str) -> list[pytest.ParameterSet]:
    """Fixture parameters: ``embedded`` always, ``"redis"`` (marked ``redis``) when REDIS_URL is set."""
    return [pytest.param(embedded), *([pytest.param("redis", marks=pytest.mark.redis)] if REDIS_URL else [])]


def require_redis(url: str) -> str:
    """``url`` once its server answers; REDIS_URL set to a server that does not answer is a failure."""
    try:
        redis.Redis.from_url(url, socket_connect_timeout=2).ping()
    except redis.RedisError as exc:
        pytest.fail(f"Redis at {url} (REDIS_URL) does not answer ({exc})")
    return url


# A message on its way takes milliseconds; a lost one fails the test instead of hanging the suite.
RECEIVE_SECONDS = 30


def receive_from_sync(layer: Any, channel: str) -> dict[str, Any]:
    """One message of ``channel`` on ``layer``, from synchronous test code."""

    async def receive() -> dict[str, Any]:
        message: dict[str, Any] = await asyncio.wait_for(layer.receive(channel), RECEIVE_SECONDS)
        return message

    return async_to_sync(receive)()
