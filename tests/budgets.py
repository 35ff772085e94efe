"""Budgets: how many examples a hypothesis property gets, and how many statements a stage may run.

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


# Emojis with stickers; history users with their blacklist entries; blocks with sprites; the D-16
# candidates; the named users with their blacklist entries and naming preferences (hydration reuses
# them); personal memories with the server memories; reminders.
STAGE_QUERY_BOUND = 7
