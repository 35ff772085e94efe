"""Shared fixtures. Domain-specific fixtures live in the conftest.py of each tests/ subpackage."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from channels.layers import channel_layers
from django.conf import settings as django_settings
from hypothesis import HealthCheck
from hypothesis import settings as hypothesis_settings

from botplatform.settings import redis_channel_layer
from tests.serve_process import copy_database, fresh_env, manage

# Fixtures more than one folder uses, each in its own module.
pytest_plugins = ["tests.celery_broker"]

# Property-based tests: at least 500 examples per property in CI (CI=true), fewer locally.
hypothesis_settings.register_profile(
    "ci", max_examples=500, deadline=None, suppress_health_check=[HealthCheck.too_slow], derandomize=True
)
hypothesis_settings.register_profile(
    "dev", max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow]
)
hypothesis_settings.load_profile("ci" if os.environ.get("CI") else os.environ.get("HYPOTHESIS_PROFILE", "dev"))


def _isolate_xdist_worker_on_redis() -> None:
    """pytest-xdist workers share one Redis database (CI's REDIS_URL) but not their test databases, so
    ids repeat across workers: a reminder broadcast to a group, or a cached server's settings, of one
    worker must not reach another. Each worker gets its own channel-layer and cache key prefix."""
    worker = os.environ.get("PYTEST_XDIST_WORKER", "")
    if not (worker and django_settings.REDIS_URL):
        return
    django_settings.CHANNEL_LAYERS = {
        "default": redis_channel_layer(django_settings.REDIS_URL, f"{django_settings.CHANNEL_LAYER_PREFIX}-{worker}")
    }
    django_settings.CACHES = {"default": {**django_settings.CACHES["default"], "KEY_PREFIX": f"tests-{worker}"}}
    channel_layers.backends.clear()


_isolate_xdist_worker_on_redis()


@pytest.fixture(autouse=True)
def _fresh_personalization_cache():  # type: ignore[no-untyped-def]
    """Every test's database starts again at personalization version 0, so rows one test's turns
    kept must not reach the next test's."""
    from chatcontext.personalization import process_cache

    cache = process_cache()
    if cache is not None:
        cache.clear()
    yield


@pytest.fixture(autouse=True)
def _fresh_turn_memories():  # type: ignore[no-untyped-def]
    """Message ids repeat between tests' databases: one test's remembered window start and token
    calibration must not reach the next test's turns, nor one test server's reported window the next's."""
    from bot.conversation.budget import CALIBRATION
    from bot.conversation.providers.reported_window import REPORTED_WINDOWS
    from bot.conversation.window_memory import WINDOWS

    WINDOWS.clear()
    CALIBRATION.clear()
    REPORTED_WINDOWS.clear()


@pytest.fixture(autouse=True)
def _test_settings(settings):  # type: ignore[no-untyped-def]
    """Tasks run in-process unless a test starts a real worker; fast password hashing."""
    settings.CELERY_TASK_ALWAYS_EAGER = True
    # Password hashing is deliberately slow; tests only need it to work.
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
    return settings


@pytest.fixture(scope="session")
def migrated_template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A SQLite database ``manage.py migrate`` made, once per test process, for tests that run the
    project's commands in subprocesses (``migrated_var_dir``)."""
    path = tmp_path_factory.mktemp("migrated")
    manage(fresh_env(path), "migrate", "--noinput", "-v0")
    return path


@pytest.fixture
def migrated_var_dir(migrated_template: Path, tmp_path: Path) -> Path:
    """This test's ``TOMORI_VAR_DIR``: a copy of the migrated database, as ``make run`` leaves it."""
    return copy_database(migrated_template, tmp_path)
