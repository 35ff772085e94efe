"""The Celery broker fixture (a pytest plugin, registered in tests/conftest.py): each test that asks
for ``broker`` runs on the embedded filesystem broker and, with REDIS_URL, on Redis."""

from __future__ import annotations

import kombu.pools
import pytest

from botplatform.celery import app
from botplatform.settings import REDIS_URL
from tests.botplatform.celery import atomic_filesystem
from tests.services import embedded_and_redis, require_redis


def reset_connection_pools() -> None:
    """Drop pooled broker connections so the next publish uses the broker_url in effect now."""
    kombu.pools.reset()
    if app._pool is not None:
        app._pool.force_close_all()
        app._pool = None
    app.amqp._producer_pool = None


@pytest.fixture(params=embedded_and_redis("filesystem"))
def broker(request: pytest.FixtureRequest, settings, tmp_path) -> str:
    """Point Celery at the broker of this parameter; messages live in ``tmp_path`` for the filesystem one."""
    if request.param == "redis":
        settings.CELERY_BROKER_URL = require_redis(REDIS_URL)
        return "redis"
    messages, processed, control = (tmp_path / name for name in ("messages", "processed", "control"))
    for folder in (messages, processed, control):
        folder.mkdir()
    settings.CELERY_BROKER_URL = f"{atomic_filesystem.ALIAS}://localhost//"
    settings.CELERY_BROKER_TRANSPORT_OPTIONS = {
        "data_folder_in": str(messages),
        "data_folder_out": str(messages),
        "processed_folder": str(processed),
        "control_folder": str(control),
    }
    return "filesystem"
