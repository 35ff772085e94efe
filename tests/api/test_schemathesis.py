"""Schemathesis against the OpenAPI schema with a valid read-write token: no 5xx, no response that
violates the schema, for a bounded number of generated requests per operation."""

from __future__ import annotations

import pytest
import schemathesis
from django.core import signals
from django.db import close_old_connections
from hypothesis import HealthCheck, settings
from schemathesis.specs.openapi.checks import negative_data_rejection

from botplatform.wsgi import application
from tests.api.conftest import bearer

schema = schemathesis.openapi.from_wsgi("/api/openapi.json", application)


@pytest.fixture
def api_world(world):  # type: ignore[no-untyped-def]
    """The world, with the database connection kept open across the WSGI calls.

    Schemathesis calls the WSGI app directly, so Django's request signals close the connection
    after every request (CONN_MAX_AGE=0) — inside the test transaction that ends the test's
    database session on PostgreSQL. Django's own test client detaches the same handler.
    """
    signals.request_started.disconnect(close_old_connections)
    signals.request_finished.disconnect(close_old_connections)
    try:
        yield world
    finally:
        signals.request_started.connect(close_old_connections)
        signals.request_finished.connect(close_old_connections)


@schema.parametrize()
@settings(max_examples=12, deadline=None, suppress_health_check=list(HealthCheck))
@pytest.mark.django_db
def test_api_conforms_to_its_schema(case, api_world):  # type: ignore[no-untyped-def]
    # Lenient parsing (e.g. an epoch number for a date-time filter) is accepted on purpose, so the
    # "negative data must be rejected" check does not apply; every other built-in check runs.
    case.call_and_validate(headers=bearer(api_world["token_a_write"]), excluded_checks=[negative_data_rejection])
