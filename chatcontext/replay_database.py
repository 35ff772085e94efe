"""A private scratch database for turn replays (turn-snapshot.md §3).

A replay must not depend on, collide with, or outlive the live database: a snapshot exported from
this very server carries the same server, user and reminder ids as live rows, and the database's
own sequences would make internal ids (persona ids in `author_id`, memory ids rendered as `ID:N`)
differ from run to run on PostgreSQL. So ``replay_database()`` routes every ORM query of the
current context (thread or task) to the ``replay`` alias — an in-memory SQLite database private to
the thread — where the snapshot's rows are loaded inside a transaction that is always rolled back.
Every replay therefore starts from empty tables and the same ids, whatever the live database holds
and whichever backend it runs on.
"""

from __future__ import annotations

import contextvars
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from django.apps import apps
from django.core.cache import DEFAULT_CACHE_ALIAS, caches
from django.core.cache.backends.dummy import DummyCache
from django.db import connections, transaction

REPLAY_ALIAS = "replay"

_active: contextvars.ContextVar[bool] = contextvars.ContextVar("tomori_replay_database", default=False)


class ReplayRouter:
    """Sends reads and writes to the scratch alias while ``replay_database()`` is active in this
    context; otherwise expresses no opinion, so the default database is used as usual."""

    def db_for_read(self, model: type[Any], **hints: Any) -> str | None:
        return REPLAY_ALIAS if _active.get() else None

    def db_for_write(self, model: type[Any], **hints: Any) -> str | None:
        return REPLAY_ALIAS if _active.get() else None


def _ensure_schema() -> None:
    """Create every table on the scratch connection once per connection (in-memory SQLite lives as
    long as its thread's connection). Building tables from the current models takes milliseconds,
    unlike running the migration history."""
    connection = connections[REPLAY_ALIAS]
    if "servers" in connection.introspection.table_names():
        return
    if connection.in_atomic_block:
        raise RuntimeError("the replay database needs its tables created outside a transaction")
    with connection.schema_editor() as editor:
        for model in apps.get_models():
            if model._meta.managed and not model._meta.proxy:
                editor.create_model(model)


@contextmanager
def _without_shared_cache() -> Iterator[None]:
    """Caches keyed by internal ids (e.g. `emoji_sticker:{server_id}`) would mix live entries into
    a replay whose scratch ids coincide with live ones, and a replay must not fill the live cache
    either: the default cache does nothing in this context (cache handlers are context-local)."""
    previous = caches[DEFAULT_CACHE_ALIAS]
    caches[DEFAULT_CACHE_ALIAS] = DummyCache("replay", {})
    try:
        yield
    finally:
        caches[DEFAULT_CACHE_ALIAS] = previous


@contextmanager
def replay_database() -> Iterator[str]:
    """Route this context's ORM traffic to the scratch database inside a transaction that is rolled
    back on exit, whatever happens inside, with the shared cache switched off. Yields the alias."""
    _ensure_schema()
    token = _active.set(True)
    try:
        with _without_shared_cache(), transaction.atomic(using=REPLAY_ALIAS):
            try:
                yield REPLAY_ALIAS
            finally:
                transaction.set_rollback(True, using=REPLAY_ALIAS)
    finally:
        _active.reset(token)
