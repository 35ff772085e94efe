"""The personalization versions (``personas.models.versions``), bumped inside the transaction of the
write they announce, so a reader that sees the new version also sees the write, and a rolled-back
write leaves the version as it was."""

from __future__ import annotations

from django.db import connections, router

from personas.models import USER_ROWS_SCOPE, PersonalizationVersion

_TABLE = PersonalizationVersion._meta.db_table
# One statement, race-free on both databases: concurrent bumps of one scope serialise on its row.
_BUMP = (
    f"INSERT INTO {_TABLE} (scope, version) VALUES (%s, 1) "
    f"ON CONFLICT (scope) DO UPDATE SET version = {_TABLE}.version + 1"
)


def _bump(scope: int) -> None:
    # The database the write went to: the replay's scratch database routes there too.
    connection = connections[router.db_for_write(PersonalizationVersion)]
    if not connection.in_atomic_block:
        raise RuntimeError("a personalization version is bumped inside the transaction of its write")
    with connection.cursor() as cursor:
        cursor.execute(_BUMP, [scope])


def bump_user_rows() -> None:
    """A user row (names, privacy level, profile) was created or changed."""
    _bump(USER_ROWS_SCOPE)


def bump_server(server_id: int) -> None:
    """The server's personalization blacklist changed."""
    _bump(server_id)
