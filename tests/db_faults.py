"""Database faults on purpose: killing the connection a turn runs on while the model writes."""

from __future__ import annotations

import asyncio
import sqlite3
from typing import Any

from django.db import connection, connections


class ConnectionKiller:
    """Kills the connection of the thread the turn's database calls run on, once, when the model
    is asked for the reply."""

    def __init__(self, turn_connection: Any) -> None:
        self.turn_connection = turn_connection
        self.killed: Any = None  # the driver connection that was killed
        # An in-memory SQLite database lives while a connection to it is open: the killed one is
        # kept open here, out of the turn's reach, so killing it cannot drop the test's database.
        self._kept: list[sqlite3.Connection] = []

    async def __call__(self) -> None:
        if self.killed is not None:
            return
        self.killed = self.turn_connection.connection
        if self.turn_connection.vendor == "postgresql":
            await asyncio.to_thread(_terminate, self.killed.info.backend_pid)
        else:
            closed = sqlite3.connect(":memory:", check_same_thread=False)
            closed.close()
            self._kept.append(self.killed)
            self.turn_connection.connection = closed

    def close(self) -> None:
        for kept in self._kept:
            kept.close()


def turn_connection() -> Any:
    """The open connection of the thread this is called on (through the seam: the turn's)."""
    connection.ensure_connection()
    return connections["default"]


def _terminate(pid: int) -> None:
    """End one backend from this thread's own connection; the server and every other backend stay."""
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_terminate_backend(%s)", [pid])
    connection.close()
