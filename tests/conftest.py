"""Shared fixtures. Domain-specific fixtures live in the conftest.py of each tests/ subpackage."""

from __future__ import annotations

import os

import pytest
from hypothesis import HealthCheck
from hypothesis import settings as hypothesis_settings

# Property-based tests: at least 500 examples per property in CI (CI=true), fewer locally.
hypothesis_settings.register_profile(
    "ci", max_examples=500, deadline=None, suppress_health_check=[HealthCheck.too_slow], derandomize=True
)
hypothesis_settings.register_profile(
    "dev", max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow]
)
hypothesis_settings.load_profile("ci" if os.environ.get("CI") else os.environ.get("HYPOTHESIS_PROFILE", "dev"))


@pytest.fixture(autouse=True)
def _test_settings(settings):  # type: ignore[no-untyped-def]
    """Tasks run in-process unless a test starts a real worker; fast password hashing."""
    settings.CELERY_TASK_ALWAYS_EAGER = True
    # Password hashing is deliberately slow; tests only need it to work.
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
    return settings
