"""Markers more than one test module applies."""

import pytest

# The live database and the replay's private scratch database (chatcontext.replay_database): tests that store
# a turn and replay it touch both.
BOTH = pytest.mark.django_db(databases=["default", "replay"])
