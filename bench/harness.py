"""Shared plumbing of the benchmark scripts: a scratch database, snapshot turns loaded into it, and
timing of ``build_turn_context``.

The scratch database is never the developer's: without ``DATABASE_URL`` it is an SQLite file in a
new temporary directory (``TOMORI_VAR_DIR`` points there before Django reads its settings); with
``DATABASE_URL`` Django's test-database machinery creates ``test_<name>`` next to the configured
database and drops it afterwards. The process runs as production would: ``DEBUG`` off (no query
log), no Redis (``REDIS_URL`` is cleared so nothing reaches a shared cache), the start-up heap frozen
out of the garbage collector's full passes as ``runbot`` does, and the default cache switched off so
every turn does all of its reads.

What a measurement covers: ``build_turn_context`` on a turn whose snapshot rows are already in the
database. Validating, generating and loading the snapshot is replay overhead and is not timed.
"""

from __future__ import annotations

import gc
import os
import platform
import secrets
import statistics
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

JSONDict = dict[str, Any]

_SCRATCH_DIR: str | None = None


def _configure_environment() -> None:
    """Before Django reads its settings: production-like flags and a scratch SQLite location."""
    global _SCRATCH_DIR
    os.environ["DJANGO_SETTINGS_MODULE"] = "botplatform.settings"
    os.environ["DEBUG"] = "0"
    os.environ.setdefault("SECRET_KEY", "bench-" + secrets.token_urlsafe(32))
    os.environ["REDIS_URL"] = ""
    os.environ["LOG_LEVEL"] = "ERROR"
    if not os.environ.get("DATABASE_URL", "").strip():
        _SCRATCH_DIR = tempfile.mkdtemp(prefix="tomori-bench-")
        os.environ["TOMORI_VAR_DIR"] = _SCRATCH_DIR


_configure_environment()

import django  # noqa: E402

django.setup()

from django.core.cache import DEFAULT_CACHE_ALIAS, caches  # noqa: E402
from django.core.cache.backends.dummy import DummyCache  # noqa: E402
from django.core.management import call_command  # noqa: E402
from django.db import DEFAULT_DB_ALIAS, connection, connections, transaction  # noqa: E402

from chatcontext.core.config import StageConfig  # noqa: E402
from chatcontext.core.types import ChatTurn, ChatTurnContext, LockedTurn  # noqa: E402
from chatcontext.participants.scope import ParticipantRequestScope  # noqa: E402
from chatcontext.personalization import PersonalizationCache  # noqa: E402
from chatcontext.pipeline import build_turn_context  # noqa: E402
from chatcontext.snapshot import (  # noqa: E402
    LoadedSnapshot,
    load_snapshot_rows,
    parse_members,
    parse_messages,
    snapshot_chat_turn,
    snapshot_transport,
    transcript_cache,
    validate_snapshot,
)

# As `manage.py runbot` does before connecting: the start-up heap leaves the collector's full passes.
gc.freeze()


@contextmanager
def scratch_database() -> Iterator[JSONDict]:
    """Create the scratch database with every migration, switch the default cache off, yield a
    description of it, and remove it afterwards."""
    previous_cache = caches[DEFAULT_CACHE_ALIAS]
    caches[DEFAULT_CACHE_ALIAS] = DummyCache("bench", {})
    test_db_name: str | None = None
    original_name = connection.settings_dict["NAME"]
    try:
        if _SCRATCH_DIR is not None:
            call_command("migrate", verbosity=0, interactive=False)
        else:
            test_db_name = connection.creation.create_test_db(verbosity=0, autoclobber=True, serialize=False)
        yield {
            "vendor": connection.vendor,
            "name": "SQLite file in a temporary directory" if _SCRATCH_DIR else f"{test_db_name} (dropped afterwards)",
            "server_version": _server_version(),
        }
    finally:
        caches[DEFAULT_CACHE_ALIAS] = previous_cache
        if test_db_name is not None:
            connection.creation.destroy_test_db(original_name, verbosity=0)
        connections.close_all()
        if _SCRATCH_DIR is not None:
            import shutil

            shutil.rmtree(_SCRATCH_DIR, ignore_errors=True)


def _server_version() -> str:
    if connection.vendor == "sqlite":
        import sqlite3

        return f"SQLite {sqlite3.sqlite_version}"
    with connection.cursor() as cursor:
        cursor.execute("SHOW server_version")
        return f"PostgreSQL {cursor.fetchone()[0]}"


def machine() -> JSONDict:
    """The machine the figures come from."""
    model = platform.processor() or "unknown"
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    return {
        "cpu_model": model,
        "cpu_count": os.cpu_count(),
        "python": platform.python_version(),
        "django": django.get_version(),
        "platform": platform.platform(),
        "load_average_at_start": [round(v, 2) for v in os.getloadavg()],
    }


# ---------------------------------------------------------------------------------------------
# Turns
# ---------------------------------------------------------------------------------------------


@dataclass
class SnapshotTurn:
    """One snapshot's turn, its rows already in the database."""

    doc: JSONDict
    turn: ChatTurn
    messages: list[Any]
    members: list[Any]
    loaded: LoadedSnapshot

    def for_persona(self, key: str, locked: LockedTurn, index: int) -> ChatTurn:
        """The turn of persona ``key`` as the ``index``-th responder of the locked turn ``locked``."""
        doc = {**self.doc, "turn": {**self.doc["turn"], "persona_key": key}}
        turn = snapshot_chat_turn(doc, self.loaded, self.messages, self.members)
        return replace(turn, locked_turn=locked, persona_index=index, total_personas=len(locked.triggered_persona_ids))


def load_turn(doc: JSONDict, loaded: LoadedSnapshot | None = None) -> SnapshotTurn:
    """Validate ``doc`` and load its rows (unless ``loaded`` says another document of the same server
    already did), then build its turn through the normal loaders."""
    validate_snapshot(doc)
    if loaded is None:
        loaded = load_snapshot_rows(doc)
    messages, members = parse_messages(doc), parse_members(doc)
    return SnapshotTurn(doc, snapshot_chat_turn(doc, loaded, messages, members), messages, members, loaded)


@contextmanager
def rolled_back() -> Iterator[None]:
    """Rows loaded inside are gone afterwards (one snapshot at a time on the scratch database)."""
    with transaction.atomic():
        yield
        transaction.set_rollback(True)


def fresh_scope(_locked: object) -> ParticipantRequestScope:
    """A request scope of its own for every turn: no run reuses another run's discovery."""
    return ParticipantRequestScope()


@dataclass
class Sample:
    wall_ms: float
    cpu_ms: float
    queries: int
    stages: dict[str, float] = field(default_factory=dict)


class QueryCounter:
    """Counts the SQL statements of this thread's default connection (cheap enough to time with)."""

    def __init__(self) -> None:
        self.count = 0

    def __call__(self, execute: Callable[..., Any], sql: str, params: Any, many: bool, context: Any) -> Any:
        self.count += 1
        return execute(sql, params, many, context)


def assemble(
    snap: SnapshotTurn,
    *,
    turn: ChatTurn | None = None,
    scopes: Callable[[LockedTurn], ParticipantRequestScope] | None = fresh_scope,
    config: StageConfig | None = None,
    personalization: PersonalizationCache | None = None,
) -> tuple[ChatTurnContext, Sample]:
    """One timed ``build_turn_context`` (wall and this thread's CPU time, SQL statements, and the
    stage durations the pipeline reports)."""
    counter = QueryCounter()
    transport = snapshot_transport(snap.doc, snap.messages, snap.members)
    transcripts = transcript_cache(snap.doc)
    with connections[DEFAULT_DB_ALIAS].execute_wrapper(counter):
        cpu = time.thread_time()
        wall = time.perf_counter()
        ctx = build_turn_context(
            turn or snap.turn,
            transport,
            transcripts=transcripts,
            transcriber=None,
            request_scope_registry=scopes,
            config=config or StageConfig(),
            personalization=personalization,
        )
        wall_ms = (time.perf_counter() - wall) * 1000
        cpu_ms = (time.thread_time() - cpu) * 1000
    durations = ctx.diagnostics.get("durations", {})
    stages = {k: float(v) for k, v in durations.items() if k != "total_ms"}
    return ctx, Sample(wall_ms, cpu_ms, counter.count, stages)


def percentile(values: list[float], q: float) -> float:
    """Linear-interpolation percentile (q in 0..100) of a non-empty list."""
    ordered = sorted(values)
    if len(ordered) == 1:
        return ordered[0]
    pos = (len(ordered) - 1) * q / 100
    low = int(pos)
    high = min(low + 1, len(ordered) - 1)
    return ordered[low] + (ordered[high] - ordered[low]) * (pos - low)


def summarize(samples: list[Sample]) -> JSONDict:
    """Median, p95 and extremes of wall time, median CPU time, and the query count (which must be the
    same on every run; all distinct counts are kept if not)."""
    wall = [s.wall_ms for s in samples]
    stage_names = sorted({k for s in samples for k in s.stages})
    queries = sorted({s.queries for s in samples})
    return {
        "runs": len(samples),
        "median_ms": round(statistics.median(wall), 3),
        "p95_ms": round(percentile(wall, 95), 3),
        "min_ms": round(min(wall), 3),
        "max_ms": round(max(wall), 3),
        "cpu_median_ms": round(statistics.median(s.cpu_ms for s in samples), 3),
        "queries_per_turn": queries[0] if len(queries) == 1 else queries,
        "stage_median_ms": {
            name: round(statistics.median(s.stages.get(name, 0.0) for s in samples), 3) for name in stage_names
        },
    }


class StatementRecorder:
    """Records the SQL statements of this thread's default connection with their parameters."""

    def __init__(self) -> None:
        self.statements: list[tuple[str, Any]] = []

    def __call__(self, execute: Callable[..., Any], sql: str, params: Any, many: bool, context: Any) -> Any:
        if many:
            raise ValueError("a turn's reads are single statements; executemany cannot be replayed as one")
        self.statements.append((sql, params))
        return execute(sql, params, many, context)


def turn_statements(snap: SnapshotTurn) -> list[tuple[str, Any]]:
    """The SQL statements of one turn of ``snap`` with their parameters, as the driver receives them."""
    recorder = StatementRecorder()
    transport = snapshot_transport(snap.doc, snap.messages, snap.members)
    with connections[DEFAULT_DB_ALIAS].execute_wrapper(recorder):
        build_turn_context(
            snap.turn,
            transport,
            transcripts=transcript_cache(snap.doc),
            transcriber=None,
            request_scope_registry=fresh_scope,
            config=StageConfig(),
        )
    return recorder.statements


def replay_ms(statements: list[tuple[str, Any]], *, runs: int) -> list[float]:
    """Wall time of ``statements`` run one after the other and fetched, ``runs`` times, on the raw
    DB-API cursor under Django's connection: the SQL and the driver, without Django's cursor wrapper,
    the ORM or the pipeline. The turn's floor: what it would cost if it did nothing but its SQL."""
    raw = connection.connection
    if connection.vendor == "sqlite":
        from django.db.backends.sqlite3.base import FORMAT_QMARK_REGEX

        # Django's SQLite cursor turns the "format" placeholders into sqlite3's "qmark" ones.
        statements = [(FORMAT_QMARK_REGEX.sub("?", sql).replace("%%", "%"), params) for sql, params in statements]
    timings = []
    cursor = raw.cursor()
    try:
        for _ in range(runs):
            started = time.perf_counter()
            for sql, params in statements:
                cursor.execute(sql, params)
                if cursor.description is not None:
                    cursor.fetchall()
            timings.append((time.perf_counter() - started) * 1000)
    finally:
        cursor.close()
    return timings


def collect(snap: SnapshotTurn, *, runs: int, warmup: int = 2) -> list[Sample]:
    """``warmup`` untimed turns (imports, regex and code caches), then ``runs`` timed ones."""
    for _ in range(warmup):
        assemble(snap)
    return [assemble(snap)[1] for _ in range(runs)]
