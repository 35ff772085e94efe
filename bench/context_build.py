"""Time to assemble one persona turn, and SQL queries per turn, over generated turn snapshots.

Sweeps history size (20, 50, 100 messages), participants (2, 20, 200) and personal memories per
user (0, 50). Each snapshot is generated from a fixed seed, its rows are loaded once into the replay
database (or, with --default-db, the configured database: PostgreSQL when DATABASE_URL says so)
inside a transaction that is rolled back, and `build_turn_context` runs --runs times with a fresh
participant request scope each time, so no run reuses another's discovery. The shared cache is off
for the whole run, so every turn reads its asset rows. Prints plain figures; writes nothing.

    .venv/bin/python bench/context_build.py [--runs 30] [--default-db]
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "botplatform.settings")

import django  # noqa: E402

django.setup()

from django.core.cache import DEFAULT_CACHE_ALIAS, caches  # noqa: E402
from django.core.cache.backends.dummy import DummyCache  # noqa: E402
from django.db import DEFAULT_DB_ALIAS, connections, transaction  # noqa: E402
from django.test.utils import CaptureQueriesContext  # noqa: E402

from chatcontext.config import StageConfig  # noqa: E402
from chatcontext.participants.scope import ParticipantRequestScope  # noqa: E402
from chatcontext.pipeline import build_turn_context  # noqa: E402
from chatcontext.scratch import replay_database  # noqa: E402
from chatcontext.snapshot import (  # noqa: E402
    load_snapshot_rows,
    parse_members,
    parse_messages,
    snapshot_chat_turn,
    snapshot_transport,
    transcript_cache,
    validate_snapshot,
)
from chatcontext.synthetic import generate_snapshot  # noqa: E402

SEED = 20260115
# (messages, participants, memories per user): the history sweep, then participants and memories.
SCENARIOS = (
    (20, 5, 0),
    (50, 5, 0),
    (100, 5, 0),
    (100, 2, 0),
    (100, 20, 0),
    (100, 200, 0),
    (100, 20, 50),
    (100, 200, 50),
)


@contextmanager
def rolled_back(default_db: bool) -> Iterator[str]:
    if not default_db:
        with replay_database() as alias:
            yield alias
        return
    previous = caches[DEFAULT_CACHE_ALIAS]
    caches[DEFAULT_CACHE_ALIAS] = DummyCache("bench", {})
    try:
        with transaction.atomic():
            yield DEFAULT_DB_ALIAS
            transaction.set_rollback(True)
    finally:
        caches[DEFAULT_CACHE_ALIAS] = previous


def measure(messages: int, participants: int, memories: int, runs: int, default_db: bool) -> tuple[float, float, int]:
    doc = validate_snapshot(
        generate_snapshot(
            random.Random(SEED),
            messages=messages,
            participants=participants,
            memories_per_user=memories,
            reminders_per_user=1,
        )
    )
    config = StageConfig()
    with rolled_back(default_db) as alias:
        loaded = load_snapshot_rows(doc)
        parsed, members = parse_messages(doc), parse_members(doc)
        turn = snapshot_chat_turn(doc, loaded, parsed, members)
        transport = snapshot_transport(doc, parsed, members)

        def once() -> None:
            build_turn_context(
                turn,
                transport,
                transcripts=transcript_cache(doc),
                config=config,
                request_scope_registry=lambda _locked: ParticipantRequestScope(),
            )

        with CaptureQueriesContext(connections[alias]) as captured:
            once()
        timings = []
        for _ in range(runs):
            started = time.perf_counter()
            once()
            timings.append((time.perf_counter() - started) * 1000)
    timings.sort()
    p95 = timings[min(len(timings) - 1, round(0.95 * (len(timings) - 1)))]
    return statistics.median(timings), p95, len(captured.captured_queries)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=30, help="timed runs per scenario (default 30)")
    parser.add_argument(
        "--default-db", action="store_true", help="load rows into the configured database instead of the replay one"
    )
    args = parser.parse_args()
    database = connections[DEFAULT_DB_ALIAS if args.default_db else "replay"].vendor
    print(f"build_turn_context on {database}, {args.runs} runs per scenario, seed {SEED}")
    print(f"{'messages':>8} {'participants':>12} {'memories/user':>13} {'median ms':>10} {'p95 ms':>8} {'queries':>8}")
    for messages, participants, memories in SCENARIOS:
        median, p95, queries = measure(messages, participants, memories, args.runs, args.default_db)
        print(f"{messages:>8} {participants:>12} {memories:>13} {median:>10.1f} {p95:>8.1f} {queries:>8}")


if __name__ == "__main__":
    main()
