"""Example budgets for hypothesis properties.

A database-backed end-to-end property builds rows and runs a whole turn for every example, so it gets a
modest budget (issue 28: one such property took ~170 s of CI at the profile's 500); the cheap pure
properties beside it keep the profile's breadth."""

from __future__ import annotations

from hypothesis import HealthCheck
from hypothesis import settings as hypothesis_settings

DATABASE_PROPERTY_EXAMPLES = 100

database_property = hypothesis_settings(
    max_examples=min(DATABASE_PROPERTY_EXAMPLES, hypothesis_settings.default.max_examples),
    suppress_health_check=list(HealthCheck),
    deadline=None,
)
