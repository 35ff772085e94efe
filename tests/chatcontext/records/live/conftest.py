"""The live feed on the channel layers this environment provides, across processes, and Redis down.

Every live test runs on the in-memory layer (the default without ``REDIS_URL``) and, when
``REDIS_URL`` is set (CI), on the real Redis layer too (tests/services.py). A test whose record
comes from another process needs a test database that process can open: SQLite's in-memory test
database lives inside this process, so for these tests it is copied to a file (sqlite3 backup) and
every connection is pointed at that file until the test ends; the in-memory database is kept alive
meanwhile and restored afterwards. On PostgreSQL (CI) the test database is already shared: the
subprocess gets its name.
"""

from __future__ import annotations

import socket
import sqlite3
import uuid
from collections.abc import AsyncIterator, Iterator
from contextlib import closing
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import quote

import pytest
import redis
from asgiref.sync import sync_to_async
from django.conf import settings as django_settings
from django.db import connections

from bot.playground import store
from botplatform.settings import REDIS_URL, redis_cache, redis_channel_layer
from infrastructure import best_effort
from personas.models import Server
from tests.bot.conftest import release_worker_connections
from tests.bot.playground.conftest import demo, offline_llm, uploads_dir  # noqa: F401  (the playground demo fixtures, for the Redis-down playground test)
from tests.cast import cast
from tests.chatcontext.records.live.feed import session_cookie
from tests.services import LoopbackProxy, embedded_and_redis, require_redis

# A key prefix of this run's own, so other test runs (and an installation) on the same Redis database
# never see these groups, and the flush after each test deletes only this run's keys.
LIVE_PREFIX = f"asgi-test-{uuid.uuid4().hex[:12]}"
IN_MEMORY_LAYER = {"BACKEND": "channels.layers.InMemoryChannelLayer"}


@dataclass(frozen=True)
class Layer:
    """The channel layer a test runs on: ``memory`` reaches only this process, ``redis`` (at
    ``redis_url``) every process that names the same server."""

    name: str
    redis_url: str = ""
    prefix: str = LIVE_PREFIX

    @property
    def crosses_processes(self) -> bool:
        return bool(self.redis_url)


@pytest.fixture(params=embedded_and_redis("memory"))
def layer(request: pytest.FixtureRequest, settings: Any) -> Iterator[Layer]:
    if request.param == "memory":
        settings.CHANNEL_LAYERS = {"default": IN_MEMORY_LAYER}
        yield Layer("memory")
        return
    url = require_redis(REDIS_URL)
    settings.CHANNEL_LAYERS = {"default": redis_channel_layer(url, LIVE_PREFIX)}
    yield Layer("redis", url)
    client = redis.Redis.from_url(url)
    for key in client.scan_iter(match=f"{LIVE_PREFIX}*", count=500):
        client.delete(key)


@pytest.fixture
async def worker_connections_released() -> AsyncIterator[None]:
    """The consumers' database work runs on a worker thread whose in-memory SQLite connection would
    outlive this test and read the wrong database in a later one (tests/bot/conftest.py)."""
    yield
    await sync_to_async(release_worker_connections, thread_sensitive=True)()


@pytest.fixture
def moderator(transactional_db: None) -> dict[str, Any]:
    """alice (tests/cast.py), staff and moderator of Night Owls: the server and her session cookie."""
    server = Server.objects.create(server_disc_id="4100", name="Night Owls")
    people = cast(server, Server.objects.create(server_disc_id="4300", name="Day Larks"))
    return {"server": server, "cookie": session_cookie(people.alice)}


def feed_socket(path: str, cookie: bytes) -> Any:
    """A browser's websocket to ``path`` of the ASGI application, with a session cookie."""
    from channels.testing import WebsocketCommunicator

    from botplatform.asgi import application

    return WebsocketCommunicator(application, path, headers=[(b"origin", b"http://testserver"), (b"cookie", cookie)])


def closed_port() -> int:
    """A local port nothing listens on (bound, then released)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@pytest.fixture
def redis_down(settings: Any) -> Iterator[str]:
    """Every Redis user of this process (channel layer, cache, the health probe) on a closed port.
    Afterwards the outage is over: later tests must not find the feed or cache skipping calls."""
    url = f"redis://127.0.0.1:{closed_port()}/0"
    settings.REDIS_URL = url
    settings.CHANNEL_LAYERS = {"default": redis_channel_layer(url)}
    settings.CACHES = {"default": redis_cache(url)}
    yield url
    best_effort.FEED.succeeded()
    best_effort.CACHE.succeeded()


def _database_dicts() -> list[dict[str, Any]]:
    """Every copy of the default database's settings a new connection may be built from."""
    candidates = [
        django_settings.DATABASES["default"],
        connections.settings["default"],
        connections["default"].settings_dict,
    ]
    unique: dict[int, dict[str, Any]] = {id(d): d for d in candidates}
    return list(unique.values())


def _postgres_url(db: dict[str, Any]) -> str:
    auth = quote(db.get("USER") or "")
    if db.get("PASSWORD"):
        auth += ":" + quote(db["PASSWORD"])
    host = db.get("HOST") or "127.0.0.1"
    port = f":{db['PORT']}" if db.get("PORT") else ""
    return f"postgres://{auth}@{host}{port}/{quote(db['NAME'])}"


@pytest.fixture
def shared_database_url(transactional_db: None, tmp_path: Path) -> Iterator[str]:
    """A DATABASE_URL under which another process opens this test's database."""
    connection = connections["default"]
    if connection.vendor == "postgresql":
        yield _postgres_url(connection.settings_dict)
        return
    if connection.vendor != "sqlite":
        pytest.fail(f"no way to share a {connection.vendor} test database with a subprocess")
    if not connection.is_in_memory_db():
        yield f"sqlite:///{connection.settings_dict['NAME']}"
        return
    memory_name = connection.settings_dict["NAME"]
    keeper = sqlite3.connect(memory_name, uri=True)  # the in-memory database lives while one connection does
    path = tmp_path / "live.sqlite3"
    connection.ensure_connection()
    with closing(sqlite3.connect(path)) as target:
        connection.connection.backup(target)
    for db in _database_dicts():
        db["NAME"] = str(path)
    connection.close()
    try:
        yield f"sqlite:///{path}"
    finally:
        connection.close()
        for db in _database_dicts():
            db["NAME"] = memory_name
        connection.ensure_connection()  # holds the in-memory database again (Django never closes it)
        keeper.close()


@pytest.fixture
def redis_proxy(settings: Any) -> Iterator[LoopbackProxy]:
    """The channel layer and the cache on the real Redis (REDIS_URL) through a LoopbackProxy."""
    proxy = LoopbackProxy(require_redis(REDIS_URL), 6379)
    proxy.start()
    proxied = proxy.url
    settings.REDIS_URL = proxied
    settings.CHANNEL_LAYERS = {"default": redis_channel_layer(proxied, LIVE_PREFIX)}
    settings.CACHES = {"default": redis_cache(proxied)}
    yield proxy
    proxy.stop()
    best_effort.FEED.succeeded()
    best_effort.CACHE.succeeded()


@pytest.fixture
def world(layer: Layer) -> dict[str, Any]:
    a = Server.objects.create(server_disc_id="4100", name="Night Owls")
    b = Server.objects.create(server_disc_id="4300", name="Day Larks")
    people = cast(a, b)
    channel = store.create_channel(a, "lounge", topic="", now_ms=1_893_456_000_000)
    cookies = {user.username: session_cookie(user) for user in (people.alice, people.bob, people.root)}
    return {"a": a, "b": b, **people.accounts(), "channel": channel, "cookies": cookies}
