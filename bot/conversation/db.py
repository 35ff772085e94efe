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
connection.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any, Protocol

from asgiref.sync import sync_to_async
from channels.db import database_sync_to_async


class Db(Protocol):
    def __call__(self, fn: Callable[..., Any], /) -> Callable[..., Awaitable[Any]]: ...


closing_stale_connections: Db = database_sync_to_async


def in_callers_transaction(fn: Callable[..., Any]) -> Callable[..., Awaitable[Any]]:
    return sync_to_async(fn, thread_sensitive=True)
