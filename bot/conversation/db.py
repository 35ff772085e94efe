"""How the async turn code reaches the synchronous ORM and pipeline: one seam, two rules.

``TurnRunner`` and ``admit_message`` take one of these as ``db`` and call every synchronous step
through it; which one depends on who runs the turn:

- ``closing_stale_connections`` (channels' ``database_sync_to_async``) for the Discord bot, a process
  that runs for weeks: it closes stale connections around each call, as a request's start and end
  would, so a connection the database dropped overnight is never reused.
- ``in_callers_transaction`` (asgiref's ``sync_to_async``, thread-sensitive) for the playground, which
  runs inside a request (and in tests inside ``atomic``): closing the connection would end the
  caller's transaction; the request's own start and end already close stale connections.

Both run the call on the thread Django keeps for sync code, so the calls of one turn share one
connection. Both survive a database blip (``on_a_new_connection``): a turn whose connection the
database dropped while the model was writing (a restart, a failover, an administrator's
``pg_terminate_backend``) would otherwise lose its reply, its record and any notice.
"""

from __future__ import annotations

import functools
import logging
from collections.abc import Awaitable, Callable
from contextlib import closing
from typing import Any, Protocol, TypeVar

from asgiref.sync import sync_to_async
from channels.db import database_sync_to_async
from django.db import DatabaseError, InterfaceError, OperationalError, connection

logger = logging.getLogger(__name__)

T = TypeVar("T")


class Db(Protocol):
    def __call__(self, fn: Callable[..., Any], /) -> Callable[..., Awaitable[Any]]: ...


def _connection_lost() -> bool:
    """Whether the connection is gone (Django drops one whose rollback failed) or no longer answers;
    asked of the driver's connection itself, which never reconnects."""
    raw = connection.connection
    if raw is None:
        return True
    try:
        with closing(raw.cursor()) as cursor:
            cursor.execute("SELECT 1")
    # Every Django backend names its DB-API module ``Database``; django-stubs leaves it out.
    except connection.Database.Error:  # type: ignore[attr-defined]
        return True
    return False


def _connection_failed(exc: DatabaseError) -> bool:
    # The DB-API's errors of the connection and the server, not of the statement. Django may already
    # have replaced a connection that died inside ``atomic`` (its rollback failed), so the error
    # says it; a driver connection closed under Django says it only by not answering.
    return isinstance(exc, OperationalError | InterfaceError) or _connection_lost()


class _StatementsCompleted:
    """A ``connection.execute_wrapper`` noting whether a statement of the call came back from the
    server: from then on the server may have committed the call's writes, COMMIT included."""

    def __init__(self) -> None:
        self.any = False

    def __call__(self, execute: Callable[..., Any], sql: str, params: Any, many: bool, context: Any) -> Any:
        result = execute(sql, params, many, context)
        self.any = True
        return result


def on_a_new_connection(fn: Callable[..., T]) -> Callable[..., T]:
    """``fn``, run once more on a new connection when its connection failed before any of its
    statements ran.

    Only outside a transaction: inside one (the caller's), a new connection would silently drop what
    the transaction wrote, so the error stands. Only when no statement of the call completed: the
    connection died while idle (the model was writing) and the call's first statement found it dead,
    so nothing reached the server and running it again writes it once. A connection lost later (in
    COMMIT, say) may have lost it after the server committed: running again could write twice, so
    the error stands. Any other error (a constraint, a bug) is the caller's, raised as it was.
    """

    @functools.wraps(fn)
    def call(*args: Any, **kwargs: Any) -> T:
        completed = _StatementsCompleted()
        try:
            with connection.execute_wrapper(completed):
                return fn(*args, **kwargs)
        except DatabaseError as exc:
            if connection.in_atomic_block or completed.any or not _connection_failed(exc):
                raise
            logger.warning("database connection lost (%s); retrying once on a new connection", type(exc).__name__)
        connection.close()
        # close() keeps an in-memory SQLite connection open (closing would drop its database); a
        # connection that no longer answers holds nothing, so a new one replaces it either way.
        connection.connect()
        return fn(*args, **kwargs)

    return call


def closing_stale_connections(fn: Callable[..., Any]) -> Callable[..., Awaitable[Any]]:
    return database_sync_to_async(on_a_new_connection(fn))


def in_callers_transaction(fn: Callable[..., Any]) -> Callable[..., Awaitable[Any]]:
    return sync_to_async(on_a_new_connection(fn), thread_sensitive=True)
