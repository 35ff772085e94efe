"""Which real services the tests talk to: Redis only when ``REDIS_URL`` is set (CI sets it).

A clone on a machine with nothing but Python passes its own tests, so a test that exercises Redis
(the channel layer, the Celery broker) runs on the embedded default every environment has — the
in-memory channel layer, kombu's filesystem transport — and on the real Redis as well when
``REDIS_URL`` names one. There is no fallback to a Redis on a well-known port: an unset
``REDIS_URL`` means no Redis, as it does for ``botplatform/settings.py``.
"""

from __future__ import annotations

import asyncio
import contextlib
import socket
import threading
from typing import Any
from urllib.parse import urlsplit, urlunsplit

import pytest
import redis
from asgiref.sync import async_to_sync

from botplatform.settings import REDIS_URL
from tests.serve_process import free_port


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


class LoopbackProxy:
    """A TCP proxy on a local port in front of a real server (PostgreSQL, Redis), which a test stops
    (every connection through it drops, new ones are refused) and starts again on the same port: an
    outage and its end without touching the server, which other tests share. ``url`` is the server's
    URL with the proxy in its place."""

    def __init__(self, server_url: str, default_port: int) -> None:
        parts = urlsplit(server_url)
        self.upstream = (parts.hostname or "127.0.0.1", parts.port or default_port)
        self.port = free_port()
        credentials = parts.netloc.rpartition("@")[0]
        proxy = f"127.0.0.1:{self.port}"
        self.url = urlunsplit(parts._replace(netloc=f"{credentials}@{proxy}" if credentials else proxy))
        self._listener: socket.socket | None = None
        self._connections: list[socket.socket] = []
        self._lock = threading.Lock()

    def start(self) -> None:
        listener = socket.socket()
        listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        listener.bind(("127.0.0.1", self.port))
        listener.listen()
        self._listener = listener
        threading.Thread(target=self._accept, args=(listener,), daemon=True).start()

    def stop(self) -> None:
        with self._lock:
            listener, self._listener = self._listener, None
            connections, self._connections = self._connections, []
        for sock in [*([listener] if listener else []), *connections]:
            with contextlib.suppress(OSError):
                sock.shutdown(socket.SHUT_RDWR)
            sock.close()

    def _accept(self, listener: socket.socket) -> None:
        while True:
            try:
                client, _ = listener.accept()
                server = socket.create_connection(self.upstream)
            except OSError:
                return
            with self._lock:
                self._connections += [client, server]
            for source, target in ((client, server), (server, client)):
                threading.Thread(target=self._pump, args=(source, target), daemon=True).start()

    @staticmethod
    def _pump(source: socket.socket, target: socket.socket) -> None:
        with contextlib.suppress(OSError):
            while data := source.recv(65536):
                target.sendall(data)
        for sock in (source, target):
            with contextlib.suppress(OSError):
                sock.shutdown(socket.SHUT_RDWR)
